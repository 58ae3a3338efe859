//! The `flashlab` command: argument parsing and printing only.

#[macro_use]
mod out;
mod apptest;
mod bench;
mod calibrate;
mod endurance;
mod fit;
mod manage;
mod measured;
mod monitor;
mod replay;
mod review;
mod run;
mod screen;
mod serve;
mod sweep;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

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
    Run(run::RunArgs),
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
    Calibrate(calibrate::CalibrateArgs),
    /// Fit a profile's fitted parameters (its `[[fit]]` entries, within
    /// their physical bounds) to published or measured figures; prints
    /// the fitted values, the figures and leave-one-out predictions.
    Fit(fit::FitArgs),
    /// Serve a simulated card holding real data as a block device over NBD
    /// (a Unix socket or TCP), for fio, qemu-img, nbdfuse and filesystems.
    Serve(serve::ServeArgs),
    /// Tell a card something through its control socket
    /// (STORE/control.sock, protocol in docs/control.md): `status`,
    /// `stats`, `fail-die CHANNEL.DIE` (or `CHANNEL.*`) fails a die (a
    /// channel) now, `beacon on|off`, `format F [secure-erase] [force]`,
    /// `volumes 1|2 [force]`; the result as JSON. A card at rest takes
    /// all but `stats` and `fail-die`.
    Control(serve::ControlArgs),
    /// A card's status, served or at rest: what it is, volumes and
    /// clients, health against its ratings (life, bytes written, write
    /// amplification, spare, bad blocks), failures and rebuilds, power,
    /// SMART log, alerts.
    Status(manage::StatusArgs),
    /// A served card's live figures once a second: IOPS, MB/s, latency
    /// (average, p99, max), GC, write amplification, buffer fill, power,
    /// beacon, health and alerts; a screen on a terminal (q quits), lines
    /// otherwise (or --plain), JSON lines (--json), and Prometheus text
    /// (--metrics ADDR).
    Monitor(monitor::MonitorArgs),
    /// Format a card anew (served or at rest): a named format or a
    /// capacity, every byte lost and wear kept; --secure-erase also purges
    /// the media. Refuses without --force and while clients are connected.
    Format(manage::FormatArgs),
    /// Show a card's volumes, split it into two (--split 2) or merge them
    /// (--merge), served or at rest. Destroys the data: refuses without
    /// --force and while clients are connected.
    Volumes(manage::VolumesArgs),
    /// Light the card's identify beacon or put it out (served or at rest;
    /// kept in the store, shown by status and monitor).
    Beacon(manage::BeaconArgs),
    /// Age a simulated card at an accelerated pace until it wears out:
    /// its life curve (life used, bad blocks, spare, write amplification,
    /// latency) and the drive writes and petabytes it took, against the
    /// vendor's rating.
    Endurance(endurance::EnduranceArgs),
    /// Replay an I/O trace (a `serve --trace` capture, fio iolog v2/v3,
    /// MSR Cambridge CSV, blkparse text) on a
    /// simulated card in virtual time: at its recorded times or closed
    /// loop at a queue depth; the statistics `run` prints.
    Replay(replay::ReplayArgs),
    /// The reviews' application tests on a served card, with a real
    /// database on this host: `sysbench` (SysBench OLTP on MariaDB).
    Apptest(apptest::ApptestArgs),
    /// A design-space sweep (a base run and axes: profile numbers by their
    /// path, format, workload, threads, queue depth, seed): `plan`, `run`
    /// (one point, or all on this machine's cores, resuming), `collect`.
    Sweep(sweep::SweepArgs),
}

fn main() {
    arenas_one_per_core();
    let cli = Cli::parse();
    let r = match cli.command {
        Command::Devices => devices(),
        Command::Run(a) => run::run(a),
        Command::Review(a) => review::review(a),
        Command::Compare(a) => review::compare(a),
        Command::Bench(a) => bench::bench(a),
        Command::Calibrate(a) => calibrate::calibrate(a),
        Command::Fit(a) => fit::fit_command(a),
        Command::Serve(a) => serve::serve(a),
        Command::Control(a) => serve::control(a),
        Command::Status(a) => manage::status(a),
        Command::Monitor(a) => monitor::monitor(a),
        Command::Format(a) => manage::format(a),
        Command::Volumes(a) => manage::volumes(a),
        Command::Beacon(a) => manage::beacon(a),
        Command::Endurance(a) => endurance::endurance(a),
        Command::Replay(a) => replay::replay(a),
        Command::Apptest(a) => apptest::apptest(a),
        Command::Sweep(a) => sweep::sweep(a),
    };
    if let Err(e) = r {
        eprintln!("flashlab: error: {e:#}");
        // A stop asked for ends as a shell reports Ctrl-C.
        let interrupted = matches!(e.downcast_ref::<lab::RunError>(), Some(lab::RunError::Interrupted));
        std::process::exit(if interrupted { 130 } else { 2 });
    }
}

/// glibc gives each thread that allocates an arena of its own, up to eight
/// per core, and keeps in it what the thread freed. A fit's searches and
/// calibration chains run on threads that come and go, each building a
/// card of its own, so freed cards piled up in up to sixteen arenas (the
/// ioDrive2 Duo's fit peaked at 1.64 GB). The simulation's work is spread
/// over the cores, so one arena per core serves it. A user's
/// `MALLOC_ARENA_MAX` is left to rule.
fn arenas_one_per_core() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        let cores = lab::runs::threads::cores().min(i32::MAX as usize) as i32;
        // SAFETY: mallopt only sets an allocator limit; it is called before
        // any other thread exists.
        unsafe { libc::mallopt(libc::M_ARENA_MAX, cores) };
    }
}

fn devices() -> Result<()> {
    let catalog = card::catalog().context("built-in catalog")?;
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
