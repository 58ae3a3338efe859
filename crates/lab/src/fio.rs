//! fio job files equivalent to each step of a review, so that the same
//! procedure runs on real hardware (methodology.md gives the reviewers'
//! own fio lines: libaio, direct, random over the whole device, no random
//! map, fresh buffers, group reporting).
//!
//! fio cannot judge SNIA steady state itself (its --steadystate bounds each
//! sample, not the range), so the preconditioning job runs the reviewers'
//! fixed length and logs IOPS and latency once a round; the logs are what a
//! steady-state judgement needs.

use crate::review::{ReviewProfile, Tests, MATRIX_QUEUE_DEPTHS, MATRIX_THREADS};
use crate::workload::Mix;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// How the exported jobs address the device and how long they run.
#[derive(Debug, Clone)]
pub struct FioOptions {
    /// The block device (or file) under test. Every job destroys its data.
    pub filename: String,
    /// Preconditioning length, seconds (the reviewers ran 6 or 12 hours).
    pub precondition_s: u64,
    /// Round length, seconds (log averaging and the main tests' unit).
    pub round_s: u64,
    pub rounds_4k: u32,
    pub rounds_matrix: u32,
}

fn size(bytes: u32) -> String {
    if bytes.is_multiple_of(1024 * 1024) {
        format!("{}m", bytes / (1024 * 1024))
    } else if bytes.is_multiple_of(1024) {
        format!("{}k", bytes / 1024)
    } else {
        bytes.to_string()
    }
}

/// The mix as fio options: rwmixread and bs or bssplit. fio takes whole
/// percentages; a mix with fractions is rounded by largest remainder, so
/// that the shares still sum to 100.
pub fn mix_options(m: &Mix) -> String {
    let rw = if m.sequential { "rw" } else { "randrw" };
    let mut o = format!("rw={rw}\nrwmixread={}\n", (m.read_ppm as f64 / 10_000.0).round() as u32);
    if m.sizes.len() == 1 {
        let _ = writeln!(o, "bs={}", size(m.sizes[0].0));
    } else {
        // Largest remainders: whole percentages that still sum to 100.
        let mut pct: Vec<(u32, u32)> = m.sizes.iter().map(|&(b, p)| (b, p / 10_000)).collect();
        let mut order: Vec<usize> = (0..m.sizes.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(m.sizes[i].1 % 10_000));
        let missing = 100u32.saturating_sub(pct.iter().map(|p| p.1).sum());
        for &i in order.iter().take(missing as usize) {
            pct[i].1 += 1;
        }
        let parts: Vec<String> = pct.iter().filter(|p| p.1 > 0).map(|&(b, p)| format!("{}/{}", size(b), p)).collect();
        let _ = writeln!(o, "bssplit={}", parts.join(":"));
    }
    o
}

fn global(o: &FioOptions) -> String {
    format!("[global]\nfilename={}\nioengine=libaio\ndirect=1\nnorandommap\nrandrepeat=0\nrefill_buffers\ngroup_reporting\ntime_based\n", o.filename)
}

/// Writes `DIR/PROFILE/1-precondition.fio` and `2-main.fio` for each
/// profile; returns the files written.
pub fn export(dir: &Path, profiles: &[&ReviewProfile], o: &FioOptions) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for p in profiles {
        let d = dir.join(p.name);
        std::fs::create_dir_all(&d)?;
        let mix = Mix::parse(p.workload).expect("built-in workload");
        let pre = mix.preconditioner();
        let mut s = format!(
            "; flashlab review, {} profile, step 1 of 3: secure erase the device with its vendor's tool first\n\
             ; (for example `nvme format --ses=1` on NVMe), then run this job.\n\
             ; Step 2: preconditioning with {} at 16 threads x 16 queue depth. IOPS and latency are logged\n\
             ; once a round ({} s) so that SNIA steady state (5 rounds: range <= 20% of the mean, fitted-line\n\
             ; excursion <= 10%) can be judged; extend runtime if it is not reached.\n\
             ; This job overwrites {}: every byte on it is lost.\n",
            p.title, pre.name, o.round_s, o.filename
        );
        s += &global(o);
        let _ = write!(
            s,
            "\n[precondition]\n{}iodepth=16\nnumjobs=16\nruntime={}\nlog_avg_msec={}\nwrite_iops_log={}-precondition\nwrite_lat_log={}-precondition\n",
            mix_options(&pre),
            o.precondition_s,
            o.round_s * 1000,
            p.name,
            p.name
        );
        let f = d.join("1-precondition.fio");
        std::fs::write(&f, s)?;
        files.push(f);
        let mut s = format!(
            "; flashlab review, {} profile, step 3 of 3: the main tests, right after preconditioning.\n; Every job overwrites {}.\n",
            p.title, o.filename
        );
        s += &global(o);
        match p.tests {
            Tests::FourK => {
                for (name, w) in [("4k-write", "4k-write"), ("4k-read", "4k-read")] {
                    let m = Mix::parse(w).expect("built-in workload");
                    let _ =
                        write!(s, "\n[{name}]\nstonewall\nnew_group\n{}iodepth=16\nnumjobs=16\nruntime={}\n", mix_options(&m), o.round_s * o.rounds_4k as u64);
                }
            }
            Tests::Matrix => {
                for t in MATRIX_THREADS {
                    for q in MATRIX_QUEUE_DEPTHS {
                        let _ = write!(
                            s,
                            "\n[{}-t{t}-q{q}]\nstonewall\nnew_group\n{}iodepth={q}\nnumjobs={t}\nruntime={}\n",
                            p.name,
                            mix_options(&mix),
                            o.round_s * o.rounds_matrix as u64
                        );
                    }
                }
            }
        }
        let f = d.join("2-main.fio");
        std::fs::write(&f, s)?;
        files.push(f);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_become_fio_options() {
        assert_eq!(mix_options(&Mix::parse("8k-7030").unwrap()), "rw=randrw\nrwmixread=70\nbs=8k\n");
        assert_eq!(mix_options(&Mix::parse("fileserver").unwrap()), "rw=randrw\nrwmixread=80\nbssplit=512/10:1k/5:2k/5:4k/60:8k/2:16k/4:32k/4:64k/10\n");
        // Fractional shares are rounded and still sum to 100.
        let o = mix_options(&Mix::parse("read=50;bs=4k/33.4:8k/33.3:16k/33.3").unwrap());
        assert_eq!(o, "rw=randrw\nrwmixread=50\nbssplit=4k/34:8k/33:16k/33\n");
    }
}
