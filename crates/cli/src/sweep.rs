//! `flashlab sweep`: a design-space sweep's points planned, run (one, or
//! all on this machine's cores) and collected.

use anyhow::{bail, Context, Result};
use lab::procedures::sweep::{self, Sweep};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct SweepArgs {
    #[command(subcommand)]
    pub command: SweepCommand,
}

#[derive(clap::Subcommand)]
pub enum SweepCommand {
    /// The sweep's points, numbered, each checked, with its memory.
    Plan {
        /// The sweep file (TOML: [base] and [axes]; docs/usage.md).
        file: PathBuf,
    },
    /// Runs the sweep's points not yet done into DIR: one (--index), or
    /// all, --jobs at a time. Each point writes its own results file
    /// whole; a point done is skipped, so a stopped sweep resumes.
    Run {
        file: PathBuf,
        #[arg(long)]
        out: PathBuf,
        /// Only this point (as a job array's task does).
        #[arg(long, conflicts_with = "jobs")]
        index: Option<usize>,
        /// Points at a time (default: this machine's cores).
        #[arg(long)]
        jobs: Option<usize>,
    },
    /// Collects DIR's points: `sweep.json`, a table, and charts of IOPS,
    /// latency and write amplification against each axis; points missing
    /// or failed are named.
    Collect {
        /// The directory `sweep run` wrote.
        dir: PathBuf,
    },
}

/// The sweep file kept in the directory of its results.
const KEPT: &str = "sweep.toml";

pub fn sweep(a: SweepArgs) -> Result<()> {
    match a.command {
        SweepCommand::Plan { file } => plan(&file),
        SweepCommand::Run { file, out, index, jobs } => run(&file, &out, index, jobs),
        SweepCommand::Collect { dir } => collect(&dir),
    }
}

fn settings_text(s: &std::collections::BTreeMap<String, toml::Value>) -> String {
    s.iter().map(|(k, v)| format!("{k}={}", v.as_str().map_or_else(|| v.to_string(), str::to_string))).collect::<Vec<_>>().join(" ")
}

fn plan(file: &Path) -> Result<()> {
    let s = Sweep::load(file).map_err(anyhow::Error::msg)?;
    let planned = s.plan_all().map_err(anyhow::Error::msg)?;
    outln!("{}: {} points ({} of {} axes), each checked", file.display(), planned.len(), format!("{:?}", s.mode).to_lowercase(), s.axes.len());
    for p in &planned {
        outln!(
            "  {:>5}  {}  [{} {} at scale {}, maps {:.0} MB]",
            p.index,
            settings_text(&p.settings),
            p.profile.id,
            p.spec.format,
            p.spec.scale,
            p.memory_bytes as f64 / 1e6
        );
    }
    Ok(())
}

/// Keeps the sweep file in `dir`, or checks that the one kept there is
/// the same sweep.
fn keep(file: &Path, dir: &Path) -> Result<()> {
    let text = std::fs::read_to_string(file).with_context(|| file.display().to_string())?;
    lab::outputs::files::out_dir_prepare(dir)?;
    let kept = dir.join(KEPT);
    match std::fs::read_to_string(&kept) {
        Ok(k) if k == text => Ok(()),
        Ok(_) => bail!("{} holds another sweep's results ({} differs from {}): choose another --out", dir.display(), kept.display(), file.display()),
        Err(_) => Ok(card::write_whole(&kept, text.as_bytes()).with_context(|| kept.display().to_string())?),
    }
}

fn run(file: &Path, out: &Path, index: Option<usize>, jobs: Option<usize>) -> Result<()> {
    let s = Sweep::load(file).map_err(anyhow::Error::msg)?;
    keep(file, out)?;
    crate::out::sigint_stops_the_lab();
    if let Some(i) = index {
        let p = s.plan(i).map_err(anyhow::Error::msg)?;
        match sweep::run_point(&p, out).map_err(anyhow::Error::msg)? {
            Some(_) => eprintln!("point {i} done: {}", sweep::point_path(out, i).display()),
            None => eprintln!("point {i} was done before: {}", sweep::point_path(out, i).display()),
        }
        return Ok(());
    }
    let jobs = jobs.unwrap_or_else(lab::runs::threads::cores);
    let n = s.points.len();
    let each = |i: usize, r: &sweep::PointOutcome| match r {
        Ok(Some(_)) => eprintln!("  point {i} done"),
        Ok(None) => {}
        Err(why) => eprintln!("  point {i} FAILED: {why}"),
    };
    let sweep::RunAll { done, before, failed } = sweep::run_all(&s, out, jobs, &each).map_err(anyhow::Error::msg)?;
    outln!("{n} points: {done} run now, {before} done before, {} failed", failed.len());
    if lab::interrupt::asked() {
        crate::out::interrupted_exit("interrupted: the points done are kept; `sweep run` again resumes");
    }
    if !failed.is_empty() {
        bail!("{} point(s) failed: {}", failed.len(), failed.iter().map(|(i, why)| format!("{i} ({why})")).collect::<Vec<_>>().join("; "));
    }
    Ok(())
}

fn collect(dir: &Path) -> Result<()> {
    let kept = dir.join(KEPT);
    let s = Sweep::load(&kept).map_err(|e| anyhow::anyhow!("{e} (is {} a directory `sweep run` wrote?)", dir.display()))?;
    let c = sweep::collect(&s, dir).map_err(anyhow::Error::msg)?;
    outln!("{:>5} {:>12} {:>9} {:>9} {:>9} {:>6}  settings [simulated]", "point", "IOPS", "MB/s", "avg ms", "p99 ms", "WA");
    for r in &c.rows {
        outln!(
            "{:>5} {:>12.0} {:>9.1} {:>9.3} {:>9.3} {:>6.2}  {}",
            r.index,
            r.iops,
            r.mb_per_s,
            r.latency_avg_ms,
            r.latency_p99_ms,
            r.write_amplification,
            settings_text(&r.settings)
        );
    }
    let text = serde_json::to_string_pretty(&c)? + "\n";
    lab::outputs::files::file_write(&dir.join("sweep.json"), text.as_bytes())?;
    if !c.rows.is_empty() {
        for axis in &c.axes {
            for (stem, label, figure) in lab::outputs::sweep::FIGURES {
                let path = dir.join(format!("{stem}-by-{}.svg", axis.replace('.', "-")));
                lab::outputs::files::file_write(&path, lab::outputs::sweep::axis_chart(&c, axis, label, figure).as_bytes())?;
            }
        }
    }
    eprintln!("sweep.json and a chart of each figure against each axis in {}", dir.display());
    if !c.missing.is_empty() || !c.failed.is_empty() {
        let failed: Vec<String> = c.failed.iter().map(|(i, why)| format!("{i} ({why})")).collect();
        bail!(
            "{} of {} points collected; missing: {:?}; failed: {}",
            c.rows.len(),
            c.points,
            c.missing,
            if failed.is_empty() { "none".into() } else { failed.join("; ") }
        );
    }
    Ok(())
}
