//! `flashlab bench`: the simulator's speed in simulated I/Os per wall second,
//! and its memory, measured on this machine. Not a test. Each phase is timed
//! on its own; the machine is shared, so compare figures from one run.

use anyhow::Result;
use lab::run::{REVIEWERS_QUEUE_DEPTH, REVIEWERS_THREADS};
use lab::{Length, Mix, Session};
use std::time::Instant;

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Device to measure on.
    #[arg(long, default_value = "flashmax2")]
    device: String,
    /// Scale of the device (dies and channels are kept at every scale).
    #[arg(long, default_value_t = 64)]
    scale: u32,
    /// Simulated I/Os in each measured phase.
    #[arg(long, default_value_t = 20_000_000)]
    ios: u64,
    /// Times each measured phase (and the baseline) runs; the median and
    /// the best are printed (this machine's speed varies from second to
    /// second).
    #[arg(long, default_value_t = 3)]
    repeat: u32,
}

/// (median, best) of rates.
fn median_best(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    (v[v.len() / 2], *v.last().expect("at least one run"))
}

fn rss_peak_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|k| k * 1024)
}

/// The same-run baseline: per "I/O", one PRNG draw and one random
/// read-modify-write of a 4-byte entry in an array as large as the device's
/// L2P, the least any page-mapped FTL simulation does. The machine is shared
/// and its speed varies; the ratio to this baseline varies much less.
fn baseline_ios_per_sec(entries: usize, ios: u64) -> f64 {
    let mut map = vec![0u32; entries.max(1)];
    let t = Instant::now();
    lab::procedures::bench::baseline_work(&mut map, ios);
    let s = t.elapsed().as_secs_f64();
    std::hint::black_box(&map);
    ios as f64 / s.max(1e-9)
}

pub fn bench(a: BenchArgs) -> Result<()> {
    let profile = card::profile_load(&a.device).map_err(anyhow::Error::msg)?;
    let rss0 = rss_peak_bytes().unwrap_or(0);
    outln!("flashlab bench --device {} --scale {} --ios {}", profile.id, a.scale, a.ios);
    let t = Instant::now();
    let mut s = Session::new(&profile, &profile.default_format, a.scale, 1, None)?;
    let format_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let pre = s.precondition(&Mix::parse("4k-write")?, lab::run::Rule::SNIA_DEFAULT, &mut |_| {})?;
    let pre_s = t.elapsed().as_secs_f64();
    let entries = (s.device.capacity_bytes() / 4096) as usize;
    let Rates { write: wr, read: rr, mixed: mr, baseline: br, wa, rss } = rates_measure(&mut s, &a, entries)?;
    let d = &s.device;
    let raw = s.device.raw_bytes();
    outln!(
        "device {} ({} dies), {:.1} GB raw, {:.1} GB usable; format (secure erase) {:.2} s wall",
        profile.id,
        d.dies(),
        raw as f64 / 1e9,
        d.capacity_bytes() as f64 / 1e9,
        format_s
    );
    outln!(
        "preconditioning, secure erase to steady state: {} I/Os ({:.2} drive writes) in {:.2} s wall: {:.0} simulated I/Os per wall second",
        pre.summary.all.ios,
        pre.drive_writes,
        pre_s,
        rate(pre.summary.all.ios, pre_s)
    );
    let (bm, bb) = median_best(br);
    let (wm, wb) = median_best(wr);
    let (rm, rb) = median_best(rr);
    let (mm, mb) = median_best(mr);
    let n = a.repeat.max(1);
    outln!("4K random write, steady state (WA {wa:.2}), 16T/16Q, {n} x {} I/Os: median {wm:.0}, best {wb:.0} simulated I/Os per wall second", a.ios);
    outln!("4K random read, 16T/16Q, {n} x {} I/Os: median {rm:.0}, best {rb:.0} simulated I/Os per wall second", a.ios);
    outln!("8K 70/30 random read/write, 16T/16Q, {n} x {} I/Os: median {mm:.0}, best {mb:.0} simulated I/Os per wall second", a.ios);
    outln!(
        "baseline, same run (one PRNG draw and one random 4-byte update in a map of {entries} entries), {n} runs: median {bm:.0}, best {bb:.0} per wall second; median ratios: write {:.3}x, read {:.3}x, 8K 70/30 {:.3}x",
        wm / bm,
        rm / bm,
        mm / bm
    );
    outln!(
        "peak resident memory {:.1} MB ({:.1} MB before the device): {:.2} bytes per 4 KiB of raw flash (limit 10)",
        rss as f64 / 1e6,
        rss0 as f64 / 1e6,
        rss.saturating_sub(rss0) as f64 / (raw / 4096) as f64
    );
    outln!("for comparison (measured on a 2-core machine of this class, one core a run): MQSim ~49,000 simulated I/Os per wall second in steady-state write, ~163,000 in read");
    Ok(())
}

fn rate(n: u64, s: f64) -> f64 {
    n as f64 / s.max(1e-9)
}

/// Simulated I/Os per wall second of each repeat, write, read, mixed
/// (8K 70/30: reads on dies busy with programs and erases) and the
/// baseline; the write amplification and the peak memory before the
/// baseline's own map.
struct Rates {
    write: Vec<f64>,
    read: Vec<f64>,
    mixed: Vec<f64>,
    baseline: Vec<f64>,
    wa: f64,
    rss: u64,
}

fn rates_measure(s: &mut Session, a: &BenchArgs, entries: usize) -> Result<Rates> {
    let (write, read, mixed) = (Mix::parse("4k-write")?, Mix::parse("4k-read")?, Mix::parse("8k-7030")?);
    let mut r = Rates { write: Vec::new(), read: Vec::new(), mixed: Vec::new(), baseline: Vec::new(), wa: 0.0, rss: 0 };
    for _ in 0..a.repeat.max(1) {
        let t = Instant::now();
        let w = s.measure("write", &write, REVIEWERS_THREADS, REVIEWERS_QUEUE_DEPTH, Length::Ios(a.ios), &mut |_| {})?;
        r.write.push(rate(w.summary.all.ios, t.elapsed().as_secs_f64()));
        r.wa = w.wa;
        let t = Instant::now();
        let rd = s.measure("read", &read, REVIEWERS_THREADS, REVIEWERS_QUEUE_DEPTH, Length::Ios(a.ios), &mut |_| {})?;
        r.read.push(rate(rd.summary.all.ios, t.elapsed().as_secs_f64()));
        let t = Instant::now();
        let m = s.measure("mixed", &mixed, REVIEWERS_THREADS, REVIEWERS_QUEUE_DEPTH, Length::Ios(a.ios), &mut |_| {})?;
        r.mixed.push(rate(m.summary.all.ios, t.elapsed().as_secs_f64()));
        if r.rss == 0 {
            // Before the baseline allocates its own map.
            r.rss = rss_peak_bytes().unwrap_or(0);
        }
        r.baseline.push(baseline_ios_per_sec(entries, a.ios));
    }
    Ok(r)
}
