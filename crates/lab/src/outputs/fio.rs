//! fio job files equivalent to each step of a review, so that the same
//! procedure runs on real hardware (StorageReview.com's procedure gives the reviewers'
//! own fio lines: libaio, direct, random over the whole device, no random
//! map, fresh buffers, group reporting).
//!
//! fio cannot judge SNIA steady state itself (its --steadystate bounds each
//! sample, not the range), so the preconditioning job runs the reviewers'
//! fixed length and logs IOPS and latency once a round; the logs are what a
//! steady-state judgement needs.

use crate::procedures::job::{ReviewProfile, Tests, MATRIX_QUEUE_DEPTHS, MATRIX_THREADS, SEQUENTIAL_FILL_DRIVE_WRITES, SEQUENTIAL_TESTS};
use crate::runs::run::{REVIEWERS_QUEUE_DEPTH, REVIEWERS_THREADS};
use crate::runs::workload::fio_size as size;
use crate::runs::workload::Mix;
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

/// The mix as fio options (one `key=value` a line).
pub fn mix_options(m: &Mix) -> String {
    m.fio_options().iter().map(|(k, v)| format!("{k}={v}\n")).collect()
}

/// One job section at `threads` x `queue_depth` (`Mix::fio_jobs`), run
/// after the previous one ends (stonewall), reported on its own
/// (new_group).
fn section(name: &str, mix: &Mix, queue_depth: u32, threads: u32, runtime_s: u64) -> String {
    let (numjobs, iodepth) = mix.fio_jobs(threads, queue_depth);
    format!("\n[{name}]\nstonewall\nnew_group\n{}iodepth={iodepth}\nnumjobs={numjobs}\nruntime={runtime_s}\n", mix_options(mix))
}

/// A section whose first `ramp_s` seconds are run but not measured.
fn section_ramped(name: &str, mix: &Mix, queue_depth: u32, threads: u32, ramp_s: u64, runtime_s: u64) -> String {
    section(name, mix, queue_depth, threads, runtime_s) + &format!("ramp_time={ramp_s}\n")
}

fn global(o: &FioOptions) -> String {
    format!("[global]\nfilename={}\nioengine=libaio\ndirect=1\nnorandommap\nrandrepeat=0\nrefill_buffers\ngroup_reporting\ntime_based\n", o.filename)
}

/// A profile's steps 1 and 2: the erase to do first, then its
/// preconditioning job: the reviewers' fixed length with IOPS and latency
/// logged once a round, or for the sequential profile twice the capacity
/// in 128 KiB sequential writes.
fn precondition_job(p: &ReviewProfile, pre: &Mix, o: &FioOptions) -> String {
    let mut s = format!(
        "; flashlab review, {} profile, step 1 of 3: secure erase the device with its vendor's tool first\n\
         ; (for example `nvme format --ses=1` on NVMe), then run this job.\n",
        p.title
    );
    if p.tests == Tests::Sequential {
        let _ = write!(
            s,
            "; Step 2: fill the device {SEQUENTIAL_FILL_DRIVE_WRITES} times over with {} at 16 threads x 16 queue depth (one stream).\n\
             ; This job overwrites {}: every byte on it is lost.\n",
            pre.name, o.filename
        );
        s += &global(o);
        let (numjobs, iodepth) = pre.fio_jobs(REVIEWERS_THREADS, REVIEWERS_QUEUE_DEPTH);
        let _ = write!(s, "\n[precondition]\n{}iodepth={iodepth}\nnumjobs={numjobs}\ntime_based=0\nloops={SEQUENTIAL_FILL_DRIVE_WRITES}\n", mix_options(pre));
        return s;
    }
    let _ = write!(
        s,
        "; Step 2: preconditioning with {} at 16 threads x 16 queue depth. IOPS and latency are logged\n\
         ; once a round ({} s) so that SNIA steady state (5 rounds: range <= 20% of the mean, fitted-line\n\
         ; excursion <= 10%) can be judged; extend runtime if it is not reached.\n\
         ; This job overwrites {}: every byte on it is lost.\n",
        pre.name, o.round_s, o.filename
    );
    s += &global(o);
    let _ = write!(
        s,
        "\n[precondition]\n{}iodepth=16\nnumjobs=16\nruntime={}\nlog_avg_msec={}\nwrite_iops_log={}-precondition\nwrite_lat_log={}-precondition\n",
        mix_options(pre),
        o.precondition_s,
        o.round_s * 1000,
        p.name,
        p.name
    );
    s
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
        let s = precondition_job(p, &pre, o);
        let f = d.join("1-precondition.fio");
        card::write_whole(&f, s.as_bytes())?;
        files.push(f);
        let mut s = format!(
            "; flashlab review, {} profile, step 3 of 3: the main tests, right after preconditioning.\n; Every job overwrites {}.\n",
            p.title, o.filename
        );
        s += &global(o);
        match p.tests {
            Tests::FourK => {
                for name in ["4k-write", "4k-read"] {
                    s +=
                        &section(name, &Mix::parse(name).expect("built-in workload"), REVIEWERS_QUEUE_DEPTH, REVIEWERS_THREADS, o.round_s * o.rounds_4k as u64);
                }
            }
            Tests::Sequential => {
                for (name, w) in SEQUENTIAL_TESTS {
                    let mix = Mix::parse(w).expect("built-in workload");
                    s += &section(&name.replace(' ', "-"), &mix, REVIEWERS_QUEUE_DEPTH, REVIEWERS_THREADS, o.round_s * o.rounds_4k as u64);
                }
            }
            Tests::Matrix => {
                for t in MATRIX_THREADS {
                    for q in MATRIX_QUEUE_DEPTHS {
                        let ramp = o.round_s * crate::procedures::review::MATRIX_WARMUP_ROUNDS;
                        s += &section_ramped(&format!("{}-t{t}-q{q}", p.name), &mix, q, t, ramp, o.round_s * o.rounds_matrix as u64);
                    }
                }
            }
        }
        let f = d.join("2-main.fio");
        card::write_whole(&f, s.as_bytes())?;
        files.push(f);
    }
    Ok(files)
}

/// Writes the SNIA PTS steps as fio jobs under `DIR/pts/`: the
/// workload-independent preconditioning, and one round of each test (the
/// IOPS test's 56 jobs, a throughput round, a latency round), each test
/// run after a purge and the preconditioning of its own, round after round
/// until its tracking variables are steady (`procedures::pts`).
pub fn export_pts(dir: &Path, o: &FioOptions) -> std::io::Result<Vec<PathBuf>> {
    use crate::procedures::pts::{
        IOPS_BLOCK_BYTES, IOPS_QUEUE_DEPTH, IOPS_READ_PCTS, IOPS_THREADS, LATENCY_BLOCK_BYTES, LATENCY_READ_PCTS, SEQ_QUEUE_DEPTH, THROUGHPUT_BLOCK_BYTES,
    };
    let d = dir.join("pts");
    std::fs::create_dir_all(&d)?;
    let mut files = Vec::new();
    let mut put = |name: &str, text: String| -> std::io::Result<()> {
        let f = d.join(name);
        card::write_whole(&f, text.as_bytes())?;
        files.push(f);
        Ok(())
    };
    let head = |step: &str| format!("; flashlab, SNIA PTS, {step}.\n; This job overwrites {}: every byte on it is lost.\n", o.filename);
    let mut s = head("step 1, before each test: purge the device with its vendor's secure erase, then this workload-independent preconditioning, twice the capacity in 128KiB sequential writes");
    let _ = write!(s, "[global]\nfilename={}\nioengine=libaio\ndirect=1\nrefill_buffers\ngroup_reporting\n\n[wipc]\nrw=write\nbs=128k\niodepth={SEQ_QUEUE_DEPTH}\nnumjobs=1\nloops=2\n", o.filename);
    put("1-wipc.fio", s)?;
    let mut s = head("IOPS test: purge and step 1 first; then this round (7 read/write mixes x 8 block sizes), repeated until RND 4KiB 0/100, 64KiB 65/35 and 1024KiB 100/0 IOPS (PTS 2.0.2; PTS-E 1.1: the first alone) each meet the SNIA criteria over the same 5 rounds, at most 25");
    s += &global(o);
    for rd in IOPS_READ_PCTS {
        for bs in IOPS_BLOCK_BYTES {
            s += &section(&format!("rnd-{}-r{rd}", size(bs)), &crate::procedures::pts::mix_of(rd, bs, false), IOPS_QUEUE_DEPTH, IOPS_THREADS, o.round_s);
        }
    }
    put("2-iops-round.fio", s)?;
    let mut s = head("throughput tests, one a block size (its two jobs are its round): purge and step 1 first; then rounds of SEQ 100% write and 100% read until the 100% write MB/s meets the SNIA criteria over 5 rounds, at most 25");
    s += &global(o);
    for bs in THROUGHPUT_BLOCK_BYTES {
        for rd in [0, 100] {
            s += &section(&format!("seq-{}-r{rd}", size(bs)), &crate::procedures::pts::mix_of(rd, bs, true), SEQ_QUEUE_DEPTH, 1, o.round_s);
        }
    }
    put("3-throughput.fio", s)?;
    let mut s = head("latency test, 1 thread at queue depth 1: purge and step 1 first; then this round, repeated until the RND 4KiB 0/100 average latency meets the SNIA criteria over 5 rounds, at most 25");
    s += &global(o);
    for rd in LATENCY_READ_PCTS {
        for bs in LATENCY_BLOCK_BYTES {
            s += &section(&format!("lat-{}-r{rd}", size(bs)), &crate::procedures::pts::mix_of(rd, bs, false), 1, 1, o.round_s);
        }
    }
    put("4-latency.fio", s)?;
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
