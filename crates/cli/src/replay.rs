//! `flashlab replay`: an I/O trace (fio iolog v2/v3, MSR Cambridge CSV)
//! replayed on a simulated card in virtual time; the statistics `run`
//! prints, and everything in `--json`.

use crate::out;
use anyhow::{bail, Context, Result};
use lab::procedures::replay::{Before, Pace, ReplayResult, ReplaySpec};
use lab::runs::trace::Trace;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct ReplayArgs {
    /// The trace: a capture of `flashlab serve --trace`, an fio iolog
    /// (version 2 or 3), an MSR Cambridge CSV (SNIA IOTTA) or blkparse's
    /// text, told apart by its first line; `-` is standard input. Read
    /// once, as a stream (lines of at most 64 KiB, up to 65,536 out of
    /// arrival order), its requests kept in a temporary file (24 bytes
    /// each) for the replays.
    pub trace: PathBuf,
    /// Catalog device ids (see `flashlab devices`; `all`: the catalog) or
    /// profile files (.toml); with several, the replays are ranked by
    /// average latency.
    #[arg(required = true)]
    pub devices: Vec<String>,
    /// Format of the device (default: its default format); `all`: every
    /// named format of each device.
    #[arg(long)]
    pub format: Option<String>,
    /// Write a bar chart (SVG) of each replay's average and p99 latency.
    #[arg(long, value_name = "FILE.svg")]
    pub chart: Option<PathBuf>,
    /// Shrink the card N times (see `run --help`); offsets must fit the
    /// scaled card (or --wrap).
    #[arg(long, default_value_t = 1)]
    pub scale: u32,
    /// `trace`: each I/O at its recorded arrival time (divided by
    /// --speed); `closed`: as fast as the card takes them, --qd in flight,
    /// in the trace's order.
    #[arg(long, default_value = "trace", value_parser = ["trace", "closed"])]
    pub timing: String,
    /// With --timing closed: I/Os in flight.
    #[arg(long, default_value_t = 32)]
    pub qd: u32,
    /// With --timing trace: replay this many times faster than recorded.
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// The card before the trace: `fresh` (just formatted: reads of
    /// never-written data touch no flash), `filled` (written once over
    /// sequentially), `steady` (preconditioned by 4 KiB random writes).
    #[arg(long, default_value = "filled", value_parser = ["fresh", "filled", "steady"])]
    pub before: String,
    /// Fold offsets past the card's capacity around it (else such a trace
    /// is refused).
    #[arg(long)]
    pub wrap: bool,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Everything measured as JSON: to FILE, or to standard output with
    /// `-` or no FILE.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<PathBuf>,
    /// No progress lines on standard error.
    #[arg(long, short)]
    pub quiet: bool,
    /// Also write the trace as fio's iolog version 3 (for `fio
    /// --read_iolog` on real storage).
    #[arg(long, value_name = "FILE")]
    pub export_fio: Option<PathBuf>,
    /// Also write the trace as blkparse's default text (queue events).
    #[arg(long, value_name = "FILE")]
    pub export_blkparse: Option<PathBuf>,
}

pub fn replay(a: ReplayArgs) -> Result<()> {
    let trace = Trace::open(&a.trace).with_context(|| format!("{}", a.trace.display()))?;
    if let Some(path) = &a.export_fio {
        card::output::write_with(path, |w| trace.write_fio_v3("/dev/card", w)).with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &a.export_blkparse {
        card::output::write_with(path, |w| trace.write_blkparse(w)).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let pace = match a.timing.as_str() {
        "trace" => Pace::Trace { speed: a.speed },
        "closed" => Pace::Closed { qd: a.qd },
        t => bail!("--timing {t}: expected trace or closed"),
    };
    let before = Before::parse(&a.before)?;
    let cards = cards_of(&a)?;
    let json = a.json.as_deref().map(out::JsonSink::open).transpose()?;
    if !a.quiet {
        eprintln!(
            "flashlab replay: {} ({}, {} reads and writes, {} other lines skipped) on {} card-format pair(s), {} card first",
            a.trace.display(),
            trace.format.name(),
            trace.ios,
            trace.skipped,
            cards.len(),
            before.name()
        );
    }
    let mut results = Vec::new();
    for (profile, format) in &cards {
        let spec = ReplaySpec { format: format.clone(), scale: a.scale, seed: a.seed, pace, before, wrap: a.wrap };
        let r = lab::procedures::replay::replay(profile, &trace, &spec).with_context(|| format!("{} --format {format}", profile.id))?;
        print(&r);
        for w in &r.warnings {
            eprintln!("flashlab: warning: {w}");
        }
        results.push(r);
    }
    if results.len() > 1 {
        ranking_print(&results);
    }
    if let Some(path) = &a.chart {
        let title = format!("{} replayed [simulated]", a.trace.file_name().map_or("trace".into(), |n| n.to_string_lossy().to_string()));
        // In rank order, as the table: the best first.
        let svg = lab::outputs::replay::chart(&lab::procedures::replay::ranked(&results), &title);
        card::write_whole(path, svg.as_bytes()).with_context(|| format!("cannot write --chart {}", path.display()))?;
    }
    if let Some(sink) = json {
        sink.write(&results, a.quiet)?;
    }
    Ok(())
}

/// The cards and formats asked for: each device in `--format`, its
/// default, or (`--format all`) every named format.
fn cards_of(a: &ReplayArgs) -> Result<Vec<(card::Profile, String)>> {
    let mut profiles = Vec::new();
    for d in &a.devices {
        if d == "all" {
            profiles.extend(card::catalog().context("built-in catalog")?);
        } else {
            profiles.push(card::profile_load(d).map_err(anyhow::Error::msg)?);
        }
    }
    let mut cards = Vec::new();
    for p in profiles {
        let formats: Vec<String> = match a.format.as_deref() {
            Some("all") => p.formats.keys().cloned().collect(),
            Some(f) => vec![f.to_string()],
            None => vec![p.default_format.clone()],
        };
        cards.extend(formats.into_iter().map(|f| (p.clone(), f)));
    }
    Ok(cards)
}

/// The replays ranked by average latency, lowest first.
fn ranking_print(results: &[ReplayResult]) {
    outln!("ranked by average latency [simulated]:");
    outln!("  {:<4} {:<14} {:<10} {:>10} {:>10} {:>10} {:>10} {:>6}", "rank", "card", "format", "avg ms", "p99 ms", "max ms", "IOPS", "WA");
    for (i, r) in lab::procedures::replay::ranked(results).into_iter().enumerate() {
        let s = &r.summary.all;
        outln!(
            "  {:<4} {:<14} {:<10} {:>10.4} {:>10.4} {:>10.3} {:>10.0} {:>6.2}",
            i + 1,
            r.device.id,
            r.device.format,
            s.latency_avg_ms,
            s.latency_p99_ms,
            s.latency_max_ms,
            s.iops,
            r.write_amplification
        );
    }
}

fn print(r: &ReplayResult) {
    let how = match r.spec.pace {
        Pace::Trace { speed: 1.0 } => "at the recorded times".to_string(),
        Pace::Trace { speed } => format!("at the recorded times / {speed}"),
        Pace::Closed { qd } => format!("closed loop, {qd} in flight"),
    };
    outln!(
        "{} --format {} --scale {} [simulated]: {} I/Os of a {} {how}; {:.3} virtual s (the trace spans {:.3} s), WA {:.2}",
        r.device.id,
        r.device.format,
        r.device.scale,
        r.ios,
        r.trace_format,
        r.virtual_seconds,
        r.trace_seconds,
        r.write_amplification
    );
    if r.flushes + r.trims > 0 {
        outln!("  {} flushes and {} trims ran too (not measured)", r.flushes, r.trims);
    }
    if r.wrapped > 0 {
        outln!("  {} I/Os past the card's capacity wrapped around it (--wrap)", r.wrapped);
    }
    crate::run::summary_table(&r.summary);
    if let Some(rec) = r.recorded_avg_ms {
        let sim = r.summary.all.latency_avg_ms;
        let before = r.spec.before.name();
        outln!(
            "  recorded in the trace, served on this card: average {rec:.4} ms; replayed from a {before} card {sim:.4} ms, {:+.1}% (alike only from the state the served card was in)",
            (sim / rec - 1.0) * 100.0
        );
    }
}
