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
    /// (version 2 or 3) or an MSR Cambridge CSV (SNIA IOTTA), told apart
    /// by its first line.
    pub trace: PathBuf,
    /// A catalog device id (see `flashlab devices`) or a profile file (.toml).
    pub device: String,
    /// Format of the device (default: its default format).
    #[arg(long)]
    pub format: Option<String>,
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
    /// Write everything measured as JSON ('-': standard output).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// No progress lines on standard error.
    #[arg(long, short)]
    pub quiet: bool,
    /// Also write the trace as fio's iolog version 3 (for `fio
    /// --read_iolog` on real storage).
    #[arg(long, value_name = "FILE")]
    pub export_fio: Option<PathBuf>,
}

pub fn replay(a: ReplayArgs) -> Result<()> {
    let profile = card::profile_load(&a.device).map_err(anyhow::Error::msg)?;
    let format = a.format.clone().unwrap_or_else(|| profile.default_format.clone());
    let text = std::fs::read_to_string(&a.trace).with_context(|| format!("cannot read the trace {}", a.trace.display()))?;
    let trace = Trace::parse(&text).with_context(|| format!("{}", a.trace.display()))?;
    if let Some(path) = &a.export_fio {
        card::write_whole(path, trace.to_fio_v3("/dev/card").as_bytes()).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let pace = match a.timing.as_str() {
        "trace" => Pace::Trace { speed: a.speed },
        "closed" => Pace::Closed { qd: a.qd },
        t => bail!("--timing {t}: expected trace or closed"),
    };
    let before = match a.before.as_str() {
        "fresh" => Before::Fresh,
        "filled" => Before::Filled,
        "steady" => Before::Steady,
        b => bail!("--before {b}: expected fresh, filled or steady"),
    };
    let spec = ReplaySpec { format: format.clone(), scale: a.scale, seed: a.seed, pace, before, wrap: a.wrap };
    let json = a.json.as_deref().map(out::JsonSink::open).transpose()?;
    if !a.quiet {
        eprintln!(
            "flashlab replay: {} ({}, {} I/Os, {} other lines skipped) on {} --format {} --scale {}, {} card first",
            a.trace.display(),
            trace.format.name(),
            trace.records.len(),
            trace.skipped,
            profile.id,
            out::shell_word(&format),
            a.scale,
            a.before
        );
    }
    let r = lab::procedures::replay::replay(&profile, &trace, &spec)?;
    if let Some(sink) = json {
        sink.write(&r, a.quiet)?;
    }
    print(&r);
    for w in &r.warnings {
        eprintln!("flashlab: warning: {w}");
    }
    Ok(())
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
    if r.wrapped > 0 {
        outln!("  {} I/Os past the card's capacity wrapped around it (--wrap)", r.wrapped);
    }
    crate::run::summary_table(&r.summary);
    if let Some(rec) = r.recorded_avg_ms {
        let sim = r.summary.all.latency_avg_ms;
        outln!("  recorded in the trace (the served card's model): average {rec:.4} ms; replayed {sim:.4} ms, {:+.1}%", (sim / rec - 1.0) * 100.0);
    }
}
