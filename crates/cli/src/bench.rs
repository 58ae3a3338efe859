//! `flashlab bench`: the simulator's speed in simulated I/Os per wall second,
//! and its memory, measured on this machine. Not a test: figures are printed
//! with the baseline measured in the same run.

use anyhow::Result;
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
}

fn rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|k| k * 1024)
}

pub fn bench(a: BenchArgs) -> Result<()> {
    let profile = accel::profile_load(&a.device).map_err(anyhow::Error::msg)?;
    let rss0 = rss_bytes().unwrap_or(0);
    let mut spec = lab::RunSpec::new(&profile.id, &profile.default_format, "4k-write", a.scale, 1);
    spec.precondition = true;
    spec.ios = Some(a.ios);
    println!("flashlab bench --device {} --scale {} --ios {}", profile.id, a.scale, a.ios);
    let t = Instant::now();
    let r = lab::run(&profile, &spec, &mut |_| {})?;
    let total = t.elapsed().as_secs_f64();
    let pre = &r.phases[0];
    let main = &r.phases[1];
    let pre_ios = pre.summary.all.ios;
    // The main phase's wall time is what remains after preconditioning,
    // measured separately below by re-running it alone would double the
    // cost; instead time both phases apart with a second, timed run.
    let _ = total;
    let mut spec_w = spec.clone();
    spec_w.precondition = true;
    spec_w.ios = Some(1);
    let t0 = Instant::now();
    let _ = lab::run(&profile, &spec_w, &mut |_| {})?;
    let pre_wall = t0.elapsed().as_secs_f64();
    let main_wall = (total - pre_wall).max(1e-9);
    println!(
        "device {} ({} dies), {:.1} GB raw, {:.1} GB usable, WA in steady state {:.2}",
        r.device.id,
        r.device.dies,
        r.device.raw_bytes as f64 / 1e9,
        r.device.capacity_bytes as f64 / 1e9,
        main.wa
    );
    println!("preconditioning (secure erase to steady state): {} I/Os in {:.2} s wall: {:.0} simulated I/Os per wall second", pre_ios, pre_wall, pre_ios as f64 / pre_wall);
    println!(
        "4K random write, steady state, 16T/16Q: {} I/Os in {:.2} s wall: {:.0} simulated I/Os per wall second",
        main.summary.all.ios,
        main_wall,
        main.summary.all.ios as f64 / main_wall
    );
    // Reads after preconditioning.
    let mut spec_r = spec.clone();
    spec_r.workload = "4k-read".into();
    let t1 = Instant::now();
    let rr = lab::run(&profile, &spec_r, &mut |_| {})?;
    let read_total = t1.elapsed().as_secs_f64();
    let read_wall = (read_total - pre_wall).max(1e-9);
    let reads = rr.phases[1].summary.all.ios;
    println!("4K random read after preconditioning, 16T/16Q: {} I/Os in {:.2} s wall: {:.0} simulated I/Os per wall second", reads, read_wall, reads as f64 / read_wall);
    let rss = rss_bytes().unwrap_or(0);
    let raw4k = r.device.raw_bytes / 4096;
    println!(
        "peak resident memory {:.1} MB ({:.1} MB before the device): {:.2} bytes per 4 KiB of raw flash",
        rss as f64 / 1e6,
        rss0 as f64 / 1e6,
        (rss.saturating_sub(rss0)) as f64 / raw4k as f64
    );
    println!("reference (shared/reference/models-and-peers.md, this class of machine): MQSim ~49,000 I/Os/s steady-state write, ~163,000 read");
    Ok(())
}
