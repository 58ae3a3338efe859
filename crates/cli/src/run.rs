//! `flashlab run`: one workload on a simulated device (or, with
//! `--target`, on real storage through fio: `crate::measured`), its
//! progress on standard error, the summary on standard output, everything
//! in `--json`.

use crate::out;
use anyhow::{bail, Context, Result};
use lab::metrics::DirStats;
use lab::phase::SteadyReport;
use lab::{Phase, Progress, RunResult, RunSpec};
use std::time::Instant;

#[derive(clap::Args)]
pub struct RunArgs {
    /// A catalog device id (see `flashlab devices`) or a profile file (.toml).
    #[arg(required_unless_present = "target", conflicts_with = "target")]
    pub device: Option<String>,
    /// The host the card runs on: linux (linux-centos6, the reviewers'
    /// CentOS 6.3 server: the default), windows (windows-2008r2, the same
    /// server under Windows Server 2008 R2) or a host file (.toml, as
    /// hosts/linux-centos6.toml): its cores, its I/O stack's costs, where
    /// it completes a driver's work and how its scheduler shares cores
    /// with a host driver's threads.
    #[arg(long, value_name = "HOST", conflicts_with = "target")]
    pub host: Option<String>,
    /// Real storage instead of a simulated card: a file, a block device or
    /// an NBD export (nbd://HOST/NAME, nbd+unix:///NAME?socket=PATH),
    /// measured through fio. Every byte on it may be overwritten.
    #[arg(long, value_name = "PATH|URI")]
    pub target: Option<String>,
    /// With --target: go on although the target holds a file system or a
    /// partition table, repeating its name (a mounted one is refused).
    #[arg(long, value_name = "TARGET", requires = "target")]
    pub destroy: Option<String>,
    /// With an NBD --target that `flashlab serve` exports: that card's
    /// --store, so that each erase before preconditioning is the card's
    /// secure erase over its control socket (an NBD export has none of
    /// its own).
    #[arg(long, value_name = "STORE", requires = "target")]
    pub served_store: Option<std::path::PathBuf>,
    /// 4k-read, 4k-write, 8k-7030, fileserver, webserver, webserver-write,
    /// 128k-seq-read, 128k-seq-write, 64k-seq-read, 64k-seq-write, or a
    /// mix such as 'read=70;bs=4k/60:64k/40' (shares sum to 100) or
    /// 'read=100;bs=64k;pattern=seq'; fio's names work too
    /// ('rwmixread=70;bssplit=4k/60:64k/40', 'rw=randwrite;bs=8k').
    #[arg(long, short)]
    pub workload: String,
    /// Format of the device: a named one (stock, hp...; default: the
    /// device's default format) or an explicit usable capacity such as
    /// 1500GB, 1.6TB or a byte count.
    #[arg(long)]
    pub format: Option<String>,
    /// Host threads.
    #[arg(long, default_value_t = 16)]
    pub threads: u32,
    /// Outstanding I/Os per thread.
    #[arg(long, default_value_t = 16)]
    pub qd: u32,
    /// Secure erase, then precondition at 16T/16Q with the workload's
    /// preconditioning workload until steady state (SNIA criteria on IOPS
    /// over 5 rounds, after at least 5 drive writes; gives up at 10).
    #[arg(long)]
    pub precondition: bool,
    /// With --precondition: precondition for a fixed time instead, as the
    /// reviewers did: hours on the full-size card (a scaled card runs the
    /// same drive writes). `reviewers` takes the hours the profile states.
    #[arg(long, requires = "precondition", value_name = "HOURS|reviewers")]
    pub precondition_hours: Option<String>,
    /// Virtual seconds of the measured phase (default: 5 rounds); at most
    /// 10,000,000, and at most 1,000,000 rounds (--interval).
    #[arg(long, conflicts_with = "ios")]
    pub duration: Option<f64>,
    /// I/Os in the measured phase, instead of a duration (at most 10^11;
    /// a run keeps at most 1,000,000 rounds).
    #[arg(long)]
    pub ios: Option<u64>,
    /// Shrink the card N times (pages of each block first, then blocks;
    /// dies, channels and timings kept): up to 64 it settles where the
    /// full-size card does (checked within 3%) and runs N times sooner;
    /// beyond 64 a run warns that its figures move. 1 is full size.
    #[arg(long, default_value_t = 1)]
    pub scale: u32,
    /// Seed of the run's one PRNG.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Round (interval) length in virtual seconds (default: 60 s divided as
    /// the pages of a block are: 3.75 s at scale 16, 0.94 s at 64).
    /// Rounds of 60 s take a scaled card's maxima over as many I/Os as a
    /// full-size round; a round longer than the card's own judges no
    /// burst (the burst is over before it ends).
    #[arg(long)]
    pub interval: Option<f64>,
    /// An old card: every block has seen C program/erase cycles before the
    /// run (its raw bit error rate grows with them; see docs/guide/usage.md).
    #[arg(long, default_value_t = 0)]
    pub pe_cycles: u32,
    /// The data on the card is D days old when the measured phase starts
    /// (retention errors; data written during the phase is fresh).
    #[arg(long, default_value_t = 0.0)]
    pub age_days: f64,
    /// A die fails during the measured phase: CHANNEL.DIE@SECONDS (die DIE
    /// of channel CHANNEL, both from 0, SECONDS into the phase), or
    /// CHANNEL.*@SECONDS for a whole channel; MEMBER: before on a card of
    /// several members. Repeatable.
    #[arg(long = "fail-die", value_name = "DIE@SECONDS")]
    pub fail_die: Vec<String>,
    /// The rebuild's rate after a die failure, MB/s (default: the
    /// profile's `ftl.rebuild_bytes_per_sec`).
    #[arg(long, value_name = "MB/S")]
    pub rebuild_rate: Option<f64>,
    /// Dies fail and uncorrectable errors come at random during the
    /// measured phase, at the profile's field rates (`nand.errors.field_*`)
    /// times X (1: the field rates, where a run of minutes rarely sees one).
    #[arg(long, value_name = "X")]
    pub random_faults: Option<f64>,
    /// Everything measured, per-interval series included, as JSON: to
    /// FILE, or to standard output with `-` or no FILE.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<std::path::PathBuf>,
    /// No progress lines on standard error.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The card on `--host` (none: the default host), checked on it.
pub fn on_host(profile: card::Profile, host: Option<&str>) -> Result<card::Profile> {
    let Some(name) = host else { return Ok(profile) };
    let host = card::host_load(name).map_err(anyhow::Error::msg)?;
    profile.on_host(&host).map_err(anyhow::Error::msg)
}

/// `--rebuild-rate MB/S` in bytes per second, checked.
pub fn rebuild_rate_of(mb_per_s: Option<f64>) -> Result<Option<u64>> {
    let Some(r) = mb_per_s else { return Ok(None) };
    let bytes = r * 1e6;
    if !(bytes.is_finite() && lab::run::REBUILD_RATES.contains(&(bytes.round() as u64)) && bytes > 0.0) {
        bail!("--rebuild-rate {r} MB/s: must be in 1..=100000");
    }
    Ok(Some(bytes.round() as u64))
}

pub fn run(a: RunArgs) -> Result<()> {
    let device = a.device.as_ref().expect("main sends a run without a device to the measured lab");
    let profile = on_host(card::profile_load(device).map_err(anyhow::Error::msg)?, a.host.as_deref())?;
    let format = a.format.clone().unwrap_or_else(|| profile.default_format.clone());
    let spec = spec_of(&a, &profile, &format)?;
    let json = a.json.as_deref().map(out::JsonSink::open).transpose()?;
    if a.scale == 1 {
        out::full_size_note(card::Device::map_bytes(&profile, &format, 1)?, 1);
    }
    if !a.quiet {
        eprintln!(
            "flashlab run {} --format {} --workload {} --threads {} --qd {} --scale {} --seed {}{}{}",
            out::shell_word(&profile.id),
            out::shell_word(&format),
            out::shell_word(&a.workload),
            a.threads,
            a.qd,
            a.scale,
            a.seed,
            if a.precondition { " --precondition" } else { "" },
            a.host.as_deref().map_or(String::new(), |h| format!(" --host {}", out::shell_word(h)))
        );
    }
    let started = Instant::now();
    let mut printer = ProgressPrinter::new(a.quiet);
    out::sigint_stops_the_lab();
    let result = lab::run(&profile, &spec, &mut |p: &Progress| printer.progress(p))?;
    let wall = started.elapsed().as_secs_f64();
    // The file first: a closed standard output ends the program at the summary.
    if let Some(sink) = json {
        sink.write(&result, a.quiet)?;
    }
    print_result(&result, wall);
    for w in &result.warnings {
        eprintln!("flashlab: warning: {w}");
    }
    uber_print(&profile, &spec);
    random_faults_print(&profile, &spec, &result);
    if let Some(why) = &result.incomplete {
        out::interrupted_exit(&format!("INCOMPLETE: {why}"));
    }
    Ok(())
}

/// What random failures drew, and the time in the field the phase stands
/// for.
fn random_faults_print(profile: &card::Profile, spec: &lab::RunSpec, r: &lab::RunResult) {
    let (Some(x), Some(e), Some(main)) = (spec.random_faults, &profile.nand.errors, r.phases.last()) else { return };
    let days = main.virtual_seconds * x / 86_400.0;
    let dies = r.failures.iter().filter(|f| f.event.random).count();
    outln!(
        "\nrandom failures at {x:e} times the field rates ({} die failures a year and {} uncorrectable errors a day per card): the measured phase's {:.1} s stand for {:.0} days in the field, in which {} dies failed and {} uncorrectable errors came (expected {:.2} and {:.2}) [simulated]",
        e.field_die_failures_per_year,
        e.field_uncorrectable_per_day,
        main.virtual_seconds,
        days,
        dies,
        main.read_errors.uncorrectable_random,
        e.field_die_failures_per_year * days / 365.25 * profile.members as f64,
        e.field_uncorrectable_per_day * days * profile.members as f64,
    );
}

/// An aged card's analytic uncorrectable bit error rate, against the
/// vendor's rating where the profile has one.
fn uber_print(profile: &card::Profile, spec: &lab::RunSpec) {
    let Some(e) = &profile.nand.errors else { return };
    if spec.pe_cycles == 0 && spec.age_days == 0.0 {
        return;
    }
    let (cw, w, c, d) = (profile.nand.codeword_bytes, profile.ftl.stripe_width, spec.pe_cycles as f64, spec.age_days);
    let (alone, striped) = (e.uber(cw, 1, c, d, 1000.0), e.uber(cw, w, c, d, 1000.0));
    let rate = |v: f64| if v < 1e-300 { "< 1e-300".to_string() } else { format!("{v:.1e}") };
    let rated = e.uber_rated.map_or("no rating in the profile".to_string(), |r| format!("rated < {r:.0e} ({})", if striped < r { "within" } else { "BEYOND" }));
    outln!(
        "\nuncorrectable bit error rate at {} cycles, {} days, 1,000 reads since erase (analytic, every retry taken): {} per bit read before parity, {} with the stripe's; {rated} [simulated]",
        spec.pe_cycles,
        spec.age_days,
        rate(alone),
        rate(striped)
    );
}

/// The run's settings from its arguments, checked.
fn spec_of(a: &RunArgs, profile: &card::Profile, format: &str) -> Result<RunSpec> {
    let mut spec = RunSpec::new(profile, format, &a.workload, a.scale, a.seed);
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
    spec.pe_cycles = a.pe_cycles;
    spec.age_days = a.age_days;
    spec.fail = a.fail_die.iter().map(|f| lab::runs::failure::FailSpec::parse(f)).collect::<Result<_, _>>().map_err(anyhow::Error::msg)?;
    spec.rebuild_bytes_per_sec = rebuild_rate_of(a.rebuild_rate)?;
    spec.random_faults = a.random_faults;
    if let Some(i) = a.interval {
        spec.interval_s = i;
    }
    lab::run::spec_check(&spec)?;
    Ok(spec)
}

/// A progress line at most once a second, with an ETA for the phase
/// (a bound, "<=", while a search for steady state may end sooner).
struct ProgressPrinter {
    quiet: bool,
    last_print: Instant,
    phase: String,
    phase_started: Instant,
}

impl ProgressPrinter {
    fn new(quiet: bool) -> ProgressPrinter {
        ProgressPrinter { quiet, last_print: Instant::now(), phase: String::new(), phase_started: Instant::now() }
    }

    fn progress(&mut self, p: &Progress) {
        if p.phase != self.phase {
            (self.phase, self.phase_started) = (p.phase.to_string(), Instant::now());
        }
        if self.quiet || self.last_print.elapsed().as_secs_f64() < 1.0 {
            return;
        }
        self.last_print = Instant::now();
        let f = p.fraction;
        let eta = if f > 0.0 {
            format!(", ETA {}{:.0} s", if p.fraction_is_bound { "<= " } else { "" }, self.phase_started.elapsed().as_secs_f64() * (1.0 - f) / f)
        } else {
            String::new()
        };
        eprintln!(
            "  {:<12} virtual {:>8.1} s {:>5.2} DW {:>8.0} IOPS {:>7.3} ms{}",
            p.phase, p.virtual_s, p.drive_writes, p.last.iops, p.last.latency_avg_ms, eta
        );
    }
}

pub(crate) fn print_result(r: &RunResult, wall_s: f64) {
    let d = &r.device;
    outln!(
        "{} ({}), format {}, scale {}{}: {:.1} GB usable of {:.1} GB raw, {} dies, effective OP {:.1}%{}  [simulated]",
        d.name,
        d.id,
        d.format,
        d.scale,
        d.host.as_ref().map_or(String::new(), |h| format!(", on host {h}")),
        d.capacity_bytes as f64 / 1e9,
        d.raw_bytes as f64 / 1e9,
        d.dies,
        d.effective_op * 100.0,
        d.command_slots.map_or(String::new(), |n| format!(", at most {n} commands at the card (more wait in the host)"))
    );
    for p in &r.phases {
        phase_print(p);
    }
    for f in &r.failures {
        failure_print(f);
    }
    if !r.failures.is_empty() {
        outln!("\n(the measured phase is left out of the published comparison: the reviewers measured cards with every die working)");
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

fn phase_print(p: &Phase) {
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
    if p.interrupted {
        outln!("  INTERRUPTED after {} rounds (SIGINT): the figures below are of those rounds; steady state not judged", p.intervals.len());
    } else if let Some(s) = &p.steady_state {
        steady_print(s);
    }
    stats_table(p);
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
    let e = &p.read_errors;
    let reads = p.page_reads;
    if e.reads_retried > 0 || e.reads_uncorrectable > 0 || e.reads_lost > 0 {
        outln!(
            "  read errors: {} page reads retried ({} retries, {:.3}% of page reads), {} beyond ECC rebuilt from parity ({} of them random uncorrectable errors), {} uncorrectable; {} host reads of lost data (I/O errors); {} superblocks reclaimed [simulated]",
            e.reads_retried,
            e.read_retries,
            e.reads_retried as f64 * 100.0 / reads.max(1) as f64,
            e.reads_rebuilt_from_parity,
            e.uncorrectable_random,
            e.reads_uncorrectable,
            e.reads_lost,
            e.superblocks_reclaimed
        );
    } else if reads > 0 {
        outln!("  read errors: no page read needed a retry [simulated]");
    }
}

fn failure_print(f: &lab::runs::failure::FailureReport) {
    let e = &f.event;
    let iops = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0}"));
    let dies = if e.dies.len() > 1 { format!(" ({} dies)", e.dies.len()) } else { String::new() };
    let why = if e.random { " (drawn at random)" } else { "" };
    outln!("\n{}{dies} failed{why} at {:.2} s of the measured phase [simulated]", e.what, f.failed_at_s);
    match (f.rebuild_done_at_s, f.rebuild_s) {
        (Some(done), Some(took)) => {
            outln!("  rebuild: {:.1} MB moved ({} slots) in {:.2} s, done at {:.2} s", f.rebuild_bytes as f64 / 1e6, e.slots_moved, took, done)
        }
        _ => outln!(
            "  rebuild: not finished when the phase ended ({:.1} MB of {:.1} MB moved)",
            f.rebuild_bytes as f64 / 1e6,
            e.slots_to_rebuild as f64 * 4096.0 / 1e6
        ),
    }
    outln!(
        "  IOPS: {} before, {} during the rebuild (worst round {}), {} after; worst round max latency during it {}",
        iops(f.iops_before),
        iops(f.iops_during),
        iops(f.iops_during_min),
        iops(f.iops_after),
        f.latency_max_during_ms.map_or("-".to_string(), |v| format!("{v:.3} ms"))
    );
    if f.iops_during.is_none() {
        outln!("  (no whole round fell within the rebuild: shorten --interval to see the dip)");
    }
    if !e.lost_offsets.is_empty() {
        outln!("  LOST: {} slots of 4 KiB (their stripe had already lost a die); reading them is an I/O error until rewritten", e.lost_offsets.len());
    }
    if let Some(why) = &e.read_only {
        outln!("  READ-ONLY: {why}");
    }
}

pub(crate) fn steady_print(s: &SteadyReport) {
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
        _ => outln!("  STEADY STATE NOT REACHED after {} rounds ({:.2} drive writes): the last 5 rounds fail the SNIA criteria", s.rounds, s.drive_writes),
    }
    if let Some(d) = s.drift_percent_per_drive_write {
        outln!("  drift: IOPS still moved {d:+.1}% per drive write over the last drive write");
    }
}

/// A phase's read, write and overall figures, one line each.
pub(crate) fn stats_table(p: &Phase) {
    summary_table(&p.summary);
}

/// Read, write and overall figures, one line each (those with I/Os).
pub(crate) fn summary_table(summary: &lab::metrics::Summary) {
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
    for (name, s) in [("read", &summary.read), ("write", &summary.write), ("all", &summary.all)] {
        if s.ios > 0 {
            stats_print(name, s);
        }
    }
}

fn stats_print(name: &str, s: &DirStats) {
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
