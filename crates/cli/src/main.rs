//! The `flashlab` command: argument parsing and printing only.

#[macro_use]
mod out;
mod bench;
mod review;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use lab::{Progress, RunResult, RunSpec};
use std::time::Instant;

#[derive(Parser)]
#[command(name = "flashlab", version, about = "Simulated enterprise PCIe flash accelerators and the reviewers' test lab", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the built-in device catalog.
    Devices,
    /// Run one workload on a simulated device, in virtual time.
    Run(RunArgs),
    /// The reviewers' whole procedure on simulated devices: secure erase,
    /// precondition to steady state, main tests, for each device, format
    /// and profile; writes results.json, CSV tables, SVG charts and an HTML
    /// report.
    Review(review::ReviewArgs),
    /// Build the review report from earlier results files, side by side.
    Compare(review::CompareArgs),
    /// Measure the simulator's own speed and memory (a benchmark, not a test).
    Bench(bench::BenchArgs),
    /// Reproduce every figure a profile publishes (reviewers' and vendor's),
    /// each in the conditions it was measured in, and judge it.
    Calibrate(CalibrateArgs),
}

#[derive(clap::Args)]
struct RunArgs {
    /// A catalog device id (see `flashlab devices`) or a profile file (.toml).
    device: String,
    /// 4k-read, 4k-write, 8k-7030, fileserver, webserver, webserver-write, or
    /// a mix such as 'read=70;bs=4k/60:64k/40' (shares sum to 100) or
    /// 'read=100;bs=64k;pattern=seq'; fio's names work too
    /// ('rwmixread=70;bssplit=4k/60:64k/40', 'rw=randwrite;bs=8k').
    #[arg(long, short)]
    workload: String,
    /// Format of the device: a named one (stock, hp...; default: the
    /// device's default format) or an explicit usable capacity such as
    /// 1500GB, 1.6TB or a byte count.
    #[arg(long)]
    format: Option<String>,
    /// Host threads.
    #[arg(long, default_value_t = 16)]
    threads: u32,
    /// Outstanding I/Os per thread.
    #[arg(long, default_value_t = 16)]
    qd: u32,
    /// Secure erase, then precondition at 16T/16Q with the workload's
    /// preconditioning workload until steady state (SNIA criteria on IOPS
    /// over 5 rounds, after at least 5 drive writes; gives up at 10).
    #[arg(long)]
    precondition: bool,
    /// With --precondition: precondition for a fixed time instead, as the
    /// reviewers did: hours on the full-size card (a scaled card runs the
    /// same drive writes). `reviewers` takes the hours the profile states.
    #[arg(long, requires = "precondition", value_name = "HOURS|reviewers")]
    precondition_hours: Option<String>,
    /// Virtual seconds of the measured phase (default: 5 rounds).
    #[arg(long, conflicts_with = "ios")]
    duration: Option<f64>,
    /// I/Os in the measured phase, instead of a duration.
    #[arg(long)]
    ios: Option<u64>,
    /// Shrink the card N times (pages of each block first, then blocks;
    /// dies, channels and timings kept): it settles where the full-size
    /// card does and runs N times sooner. 1 is full size.
    #[arg(long, default_value_t = 1)]
    scale: u32,
    /// Seed of the run's one PRNG.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Round (interval) length in virtual seconds (default: 60 s divided as
    /// the pages of a block are: 3.75 s at scale 16, 0.94 s at 64).
    #[arg(long)]
    interval: Option<f64>,
    /// Write everything measured, per-interval series included, as JSON.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    /// No progress lines on standard error.
    #[arg(long, short)]
    quiet: bool,
}

fn main() {
    let cli = Cli::parse();
    let r = match cli.command {
        Command::Devices => devices(),
        Command::Run(a) => run(a),
        Command::Review(a) => review::review(a),
        Command::Compare(a) => review::compare(a),
        Command::Bench(a) => bench::bench(a),
        Command::Calibrate(a) => calibrate(a),
    };
    if let Err(e) = r {
        eprintln!("flashlab: error: {e:#}");
        std::process::exit(2);
    }
}

#[derive(clap::Args)]
struct CalibrateArgs {
    /// Catalog devices or profile files (default: the whole catalog).
    devices: Vec<String>,
    /// Format (default: each device's default format).
    #[arg(long)]
    format: Option<String>,
    /// Shrink each card N times (see `run --help`); 1 is full size.
    #[arg(long, default_value_t = 16)]
    scale: u32,
    /// Seed of every phase's PRNG.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Rounds measured for each main test.
    #[arg(long, default_value_t = 5)]
    rounds: u32,
    /// Write the calibrations as JSON.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    /// No progress lines on standard error.
    #[arg(long, short)]
    quiet: bool,
}

fn calibrate(a: CalibrateArgs) -> Result<()> {
    let ids: Vec<String> = if a.devices.is_empty() { accel::CATALOG.iter().map(|(id, _)| id.to_string()).collect() } else { a.devices.clone() };
    let json = a.json.as_deref().map(out::JsonSink::open).transpose()?;
    let mut all = Vec::new();
    for id in ids {
        let profile = accel::profile_load(&id).map_err(anyhow::Error::msg)?;
        let format = a.format.clone().unwrap_or_else(|| profile.default_format.clone());
        if a.scale == 1 {
            out::full_size_note(accel::Device::map_bytes(&profile, &format, 1)?, 1);
        }
        let t = Instant::now();
        // Wall time of each phase, taken when the next one reports first.
        let mut phase = String::new();
        let mut phase_walls: Vec<(String, f64)> = Vec::new();
        let mut last_print = Instant::now();
        let quiet = a.quiet;
        let mut progress = |p: &Progress| {
            if p.phase != phase {
                phase_walls.push((p.phase.to_string(), t.elapsed().as_secs_f64()));
                phase = p.phase.to_string();
            }
            if !quiet && last_print.elapsed().as_secs_f64() >= 10.0 {
                last_print = Instant::now();
                eprintln!(
                    "  {:<12} virtual {:>9.1} s  {:>6.2} drive writes  {:>9.0} IOPS  wall {:.0} s",
                    p.phase,
                    p.virtual_s,
                    p.drive_writes,
                    p.last.iops,
                    t.elapsed().as_secs_f64()
                );
            }
        };
        let c = lab::calibrate::calibrate(&profile, &format, a.scale, a.seed, a.rounds, &mut progress)?;
        let total = t.elapsed().as_secs_f64();
        phase_walls.push(("end".into(), total));
        let walls: Vec<String> = phase_walls.windows(2).map(|w| format!("{} {:.1} s", w[0].0, w[1].1 - w[0].1)).collect();
        let pre: Vec<String> = c
            .preconditions
            .iter()
            .map(|p| {
                let s = p.steady_state.as_ref();
                format!(
                    "preconditioned with {} by {}: {} after {:.2} drive writes, drift {}, WA {:.2}",
                    p.workload.name,
                    s.map_or("-", |s| s.rule.as_str()),
                    if s.is_some_and(|s| s.reached) { "steady" } else { "STEADY STATE NOT REACHED" },
                    p.drive_writes,
                    s.and_then(|s| s.drift_percent_per_drive_write).map_or("-".into(), |d| format!("{d:+.1}% per drive write")),
                    p.wa
                )
            })
            .collect();
        outln!("{} --format {} --scale {} --seed {} [simulated]; wall {:.1} s ({})", c.device, c.format, c.scale, c.seed, total, walls.join(", "));
        for line in pre {
            outln!("  {line}");
        }
        for ch in &c.checks {
            outln!("  {}", ch.line());
        }
        for b in &c.beside {
            outln!("  {:<8} {:<75} published {:>18} {:<10} simulated {:>10}", "beside", b.what, "-", b.metric.unit(), lab::chart::num(b.simulated));
        }
        all.push(c);
    }
    if let Some(sink) = json {
        sink.write(&all, a.quiet)?;
    }
    let outside: Vec<String> = all.iter().flat_map(|c| c.failures().map(move |f| format!("{} {} ({})", c.device, f.what, f.metric.unit()))).collect();
    if !outside.is_empty() {
        anyhow::bail!("{} figure(s) outside their tolerance: {}", outside.len(), outside.join("; "));
    }
    Ok(())
}

fn devices() -> Result<()> {
    let catalog = accel::catalog().context("built-in catalog")?;
    outln!("{:<14} {:<36} {:>8} {:>8} {:>6}  {:<10} formats (usable GB)", "id", "name", "raw GB", "dies", "mgmt", "parity");
    for p in catalog {
        let formats: Vec<String> = p.formats.iter().map(|(n, b)| format!("{n} {:.0}", *b as f64 / 1e9)).collect();
        let parity = if p.ftl.stripe_width > 1 { format!("{}+1", p.ftl.stripe_width - 1) } else { "none".into() };
        outln!(
            "{:<14} {:<36} {:>8.0} {:>8} {:>6}  {:<10} {}",
            p.id,
            p.name,
            p.raw_bytes() as f64 / 1e9,
            p.nand.geometry().dies() * p.members,
            format!("{:?}", p.management).to_lowercase(),
            parity,
            formats.join(", ")
        );
    }
    Ok(())
}

fn run(a: RunArgs) -> Result<()> {
    let profile = accel::profile_load(&a.device).map_err(anyhow::Error::msg)?;
    let format = a.format.clone().unwrap_or_else(|| profile.default_format.clone());
    let mut spec = RunSpec::new(&profile, &format, &a.workload, a.scale, a.seed);
    spec.threads = a.threads;
    spec.queue_depth = a.qd;
    spec.precondition = a.precondition;
    spec.precondition_hours = match a.precondition_hours.as_deref() {
        None => None,
        Some("reviewers") => Some(
            profile
                .precondition_hours
                .with_context(|| format!("--precondition-hours reviewers: the {} profile states no reviewers' hours; give a number", profile.id))?,
        ),
        Some(h) => Some(h.parse::<f64>().ok().with_context(|| format!("--precondition-hours '{h}': must be a number of hours or 'reviewers'"))?),
    };
    spec.duration_s = a.duration;
    spec.ios = a.ios;
    if let Some(i) = a.interval {
        spec.interval_s = i;
    }
    if a.scale == 0 {
        bail!("--scale 0: must be at least 1");
    }
    lab::run::spec_check(&spec)?;
    let json = a.json.as_deref().map(out::JsonSink::open).transpose()?;
    if a.scale == 1 {
        out::full_size_note(accel::Device::map_bytes(&profile, &format, 1)?, 1);
    }
    if !a.quiet {
        eprintln!(
            "flashlab run {} --format {} --workload {} --threads {} --qd {} --scale {} --seed {}{}",
            profile.id,
            format,
            a.workload,
            a.threads,
            a.qd,
            a.scale,
            a.seed,
            if a.precondition { " --precondition" } else { "" }
        );
    }
    let started = Instant::now();
    let mut last_print = Instant::now();
    let (mut phase, mut phase_started) = (String::new(), Instant::now());
    let quiet = a.quiet;
    let mut progress = |p: &Progress| {
        if p.phase != phase {
            (phase, phase_started) = (p.phase.to_string(), Instant::now());
        }
        if quiet || last_print.elapsed().as_secs_f64() < 1.0 {
            return;
        }
        last_print = Instant::now();
        let f = p.fraction;
        let eta = if f > 0.0 {
            format!(", ETA {}{:.0} s", if p.fraction_is_bound { "<= " } else { "" }, phase_started.elapsed().as_secs_f64() * (1.0 - f) / f)
        } else {
            String::new()
        };
        eprintln!(
            "  {:<12} virtual {:>8.1} s {:>5.2} DW {:>8.0} IOPS {:>7.3} ms{}",
            p.phase, p.virtual_s, p.drive_writes, p.last.iops, p.last.latency_avg_ms, eta
        );
    };
    let result = match lab::run(&profile, &spec, &mut progress) {
        Ok(r) => r,
        Err(e) => {
            if let Some(sink) = json {
                sink.discard();
            }
            return Err(e.into());
        }
    };
    let wall = started.elapsed().as_secs_f64();
    // The file first: a closed standard output ends the program at the summary.
    if let Some(sink) = json {
        sink.write(&result, a.quiet)?;
    }
    print_result(&result, wall);
    Ok(())
}

fn print_result(r: &RunResult, wall_s: f64) {
    let d = &r.device;
    outln!(
        "{} ({}), format {}, scale {}: {:.1} GB usable of {:.1} GB raw, {} dies, effective OP {:.1}%  [simulated]",
        d.name,
        d.id,
        d.format,
        d.scale,
        d.capacity_bytes as f64 / 1e9,
        d.raw_bytes as f64 / 1e9,
        d.dies,
        d.effective_op * 100.0
    );
    for p in &r.phases {
        outln!(
            "\n{} — {} at {}T/{}Q: {:.1} virtual s, {:.2} drive writes, WA {:.2} (with parity {:.2}), die utilisation {:.1}%",
            p.name,
            p.workload.name,
            p.threads,
            p.queue_depth,
            p.virtual_seconds,
            p.drive_writes,
            p.wa,
            p.wa_with_parity,
            p.die_utilisation * 100.0
        );
        if let Some(s) = &p.steady_state {
            outln!("  preconditioning rule: {}", s.rule);
            match (&s.window, s.reached) {
                (Some(w), true) => outln!(
                    "  steady state reached after {} rounds ({:.2} drive writes): mean {:.0} IOPS, range {:.1}% (<= 20%), slope excursion {:.1}% (<= 10%)",
                    s.rounds,
                    s.drive_writes,
                    w.mean,
                    w.range / w.mean * 100.0,
                    w.slope_excursion / w.mean * 100.0
                ),
                _ => outln!(
                    "  STEADY STATE NOT REACHED after {} rounds ({:.2} drive writes): the last 5 rounds fail the SNIA criteria",
                    s.rounds,
                    s.drive_writes
                ),
            }
            if let Some(d) = s.drift_percent_per_drive_write {
                outln!("  drift: IOPS still moved {d:+.1}% per drive write over the last drive write");
            }
        }
        outln!(
            "  {:<6} {:>12} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
            "",
            "IOPS",
            "MB/s",
            "avg ms",
            "max ms",
            "std ms",
            "p50",
            "p99",
            "p99.9",
            "p99.99"
        );
        for (name, s) in [("read", &p.summary.read), ("write", &p.summary.write), ("all", &p.summary.all)] {
            if s.ios == 0 {
                continue;
            }
            outln!(
                "  {:<6} {:>12.0} {:>10.1} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
                name,
                s.iops,
                s.mb_per_s,
                s.latency_avg_ms,
                s.latency_max_ms,
                s.latency_std_ms,
                s.latency_p50_ms,
                s.latency_p99_ms,
                s.latency_p999_ms,
                s.latency_p9999_ms
            );
        }
        if !p.utilisation.is_empty() {
            let cells: Vec<String> = p.utilisation.iter().map(|u| format!("{} {:.0}%", u.resource, u.percent)).collect();
            outln!("  utilisation: {}", cells.join(", "));
            outln!("  bottleneck: {}", p.bottleneck);
        }
        let c = &p.counters;
        outln!(
            "  device: {} host slots written, {} GC moves, {} erases, {} free superblocks, erase counts {}..{}",
            c.host_slots_written,
            c.gc_slots_moved,
            c.block_erases,
            c.free_superblocks,
            c.erase_count_min,
            c.erase_count_max
        );
    }
    if !r.comparison.is_empty() {
        outln!("\npublished vs simulated, where this run met the figure's conditions:");
        for c in &r.comparison {
            outln!("  {}", c.line());
        }
        let sources: std::collections::BTreeSet<&str> = r.comparison.iter().map(|c| c.source.as_str()).collect();
        outln!("  sources: {}", sources.into_iter().collect::<Vec<_>>().join("; "));
    }
    outln!("\nwall time {wall_s:.1} s");
}
