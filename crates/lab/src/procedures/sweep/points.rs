//! A sweep's points on disk and their runs: each point's results file
//! (written whole, so a sweep resumes where it stopped), one point run,
//! and every point run on this machine's cores.

use super::{Output, Planned, PointResult, Sweep, SweepError, Work, POINT_KIND};
use crate::procedures::job::jobs_of;
use crate::procedures::review::review;
use crate::runs::metrics::readback::Unbelievable;
use crate::runs::run::{run, RunError};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A point's results file in `dir`.
pub fn point_path(dir: &Path, index: usize) -> PathBuf {
    dir.join(format!("point-{index:05}.json"))
}

/// A point's results file read back: absent, whole (of this point), or
/// damaged (with why: not JSON, cut short, another point's, figures no
/// run gives).
pub enum PointFile {
    Missing,
    Whole(Box<PointResult>),
    Damaged(String),
}

/// A point's results file that is not this point's whole results.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PointWrong {
    #[error("kind {0:?}, not \"{POINT_KIND}\"")]
    Kind(String),
    #[error("a point of another sweep (its settings are not this point's)")]
    OtherSweep,
    #[error(transparent)]
    Figures(#[from] Unbelievable),
}

impl PointResult {
    /// A point read back: of `settings`, every phase's figures believable.
    pub fn check(&self, settings: &BTreeMap<String, toml::Value>) -> Result<(), PointWrong> {
        if self.kind != POINT_KIND {
            return Err(PointWrong::Kind(self.kind.clone()));
        }
        if self.settings != *settings {
            return Err(PointWrong::OtherSweep);
        }
        Ok(match &self.output {
            Output::Run(r) => r.phases.iter().try_for_each(|ph| ph.check("run")),
            Output::Review(r) => r.check(),
        }?)
    }
}

/// Point `index`'s results file in `dir`, read and checked.
pub fn point_read(sweep: &Sweep, dir: &Path, index: usize) -> PointFile {
    let path = point_path(dir, index);
    let text = match card::input::read_text(&path, card::input::RESULTS_BYTES_MAX) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return PointFile::Missing,
        Err(e) => return PointFile::Damaged(format!("{}: {e}", path.display())),
        Ok(t) => t,
    };
    let settings = sweep.settings_of(index);
    match serde_json::from_str::<PointResult>(&text).map_err(|e| e.to_string()).and_then(|p| p.check(&settings).map(|()| p).map_err(|e| e.to_string())) {
        Ok(p) => PointFile::Whole(Box::new(p)),
        Err(why) => PointFile::Damaged(format!("{}: {why}", path.display())),
    }
}

/// Runs a planned point unless its results file is in `dir` already and
/// whole (then `None`); a damaged one is run again and replaced. The
/// file is written whole.
pub fn run_point(sweep: &Sweep, p: &Planned, dir: &Path) -> Result<Option<PointResult>, PointFailed> {
    let path = point_path(dir, p.index);
    if let PointFile::Whole(_) = point_read(sweep, dir, p.index) {
        return Ok(None);
    }
    let failed = |e: RunError| PointFailed::Run { index: p.index, why: e.to_string() };
    let (output, incomplete) = match &p.work {
        Work::Run(spec) => {
            let r = run(&p.profile, spec, &mut |_| {}).map_err(failed)?;
            let why = r.incomplete.clone();
            (Output::Run(Box::new(r)), why)
        }
        Work::Review(spec) => {
            let (jobs, _) = jobs_of(spec, std::slice::from_ref(&p.profile)).map_err(failed)?;
            let r = review(spec, &jobs, 1, &|_| {}).map_err(failed)?;
            let why = r.incomplete.clone();
            (Output::Review(Box::new(r)), why)
        }
    };
    if let Some(why) = incomplete {
        return Err(PointFailed::Incomplete { index: p.index, why });
    }
    let r = PointResult { kind: POINT_KIND.into(), index: p.index, settings: p.settings.clone(), output };
    let text = serde_json::to_string_pretty(&r).expect("a point serialises") + "\n";
    card::write_whole(&path, text.as_bytes()).map_err(|e| PointFailed::Write { path: path.display().to_string(), why: e.to_string() })?;
    Ok(Some(r))
}

/// A point's error file in `dir` (a failed point; its run is tried again
/// on the next `run`).
pub fn error_path(dir: &Path, index: usize) -> PathBuf {
    dir.join(format!("point-{index:05}.error"))
}

/// What running a point came to: its results, `None` if it was done
/// before, or why it failed.
pub type PointOutcome = Result<Option<PointResult>, PointFailed>;

/// Why a point did not run to its results file (each says which point
/// or file).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PointFailed {
    /// Its plan refused (the sweep's error, said).
    #[error("{0}")]
    Plan(String),
    #[error("point {index}: {why}")]
    Run { index: usize, why: String },
    /// Its run ended short (why, as its results say).
    #[error("point {index}: {why}")]
    Incomplete { index: usize, why: String },
    #[error("{path}: {why}")]
    Write { path: String, why: String },
    #[error("point {0}: stopped before it began")]
    Stopped(usize),
}

/// What `run_all` did.
#[derive(Debug, Default)]
pub struct RunAll {
    /// Points run now, and skipped as done before.
    pub done: usize,
    pub before: usize,
    /// Points that failed, with why, by index.
    pub failed: Vec<(usize, PointFailed)>,
}

/// Runs every point not yet done in `dir`, `jobs` at a time, telling
/// `each` as each ends; a failing point is written down (`error_path`)
/// and the others go on.
pub fn run_all(sweep: &Sweep, dir: &Path, jobs: usize, each: &(dyn Fn(usize, &PointOutcome) + Sync)) -> Result<RunAll, SweepError> {
    // Every point checked before any runs; each planned again as it runs
    // (what is held is the points under way).
    let planned = sweep.plan_all()?;
    let next = std::sync::atomic::AtomicUsize::new(0);
    let outcome = std::sync::Mutex::new(RunAll::default());
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, planned.points) {
            scope.spawn(|| loop {
                if crate::runs::interrupt::asked() {
                    break;
                }
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= sweep.count {
                    break;
                }
                let p = &match sweep.plan(i) {
                    Ok(p) => p,
                    Err(why) => {
                        let why = PointFailed::Plan(why.to_string());
                        each(i, &Err(why.clone()));
                        outcome.lock().expect("no thread panics holding it").failed.push((i, why));
                        continue;
                    }
                };
                // Taken, then stopped before it ran: under way, not failed.
                let r = if crate::runs::interrupt::asked() { Err(PointFailed::Stopped(i)) } else { run_point(sweep, p, dir) };
                each(p.index, &r);
                let mut o = outcome.lock().expect("no thread panics holding it");
                match r {
                    Ok(Some(_)) => {
                        o.done += 1;
                        let _ = std::fs::remove_file(error_path(dir, p.index));
                    }
                    Ok(None) => o.before += 1,
                    // A point a stop cut short is not a failure: it is run
                    // again on the next `run`.
                    Err(_) if crate::runs::interrupt::asked() => {}
                    Err(why) => {
                        let _ = card::write_whole(&error_path(dir, p.index), format!("{why}\n").as_bytes());
                        o.failed.push((p.index, why));
                    }
                }
            });
        }
    });
    let mut o = outcome.into_inner().expect("threads joined");
    o.failed.sort_by_key(|f| f.0);
    Ok(o)
}
