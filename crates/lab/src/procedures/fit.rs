//! Fitting a profile to published figures: the numbers a profile marks as
//! fitted (`[[fit]]`, each with its physical bounds) are searched, within
//! those bounds, for the values whose simulated figures come closest to
//! the chosen published ones; every evaluation is a calibration of those
//! figures on the scaled card, so a fit is as deterministic as a seeded
//! run. Leave-one-out cross-validation then predicts each figure from a
//! fit made without it: how well the card generalises, and which
//! parameters the figures do not pin down.
//!
//! The search is a coordinate search in the logarithm of each parameter
//! (a ratio is what bounds and errors are about): each parameter in turn
//! is multiplied and divided by a step, a move kept when it lowers the
//! cost; the step halves when a whole pass keeps none, down to 2%
//! (`STEP_MIN`).
//!
//! Figures of several formats are fitted together (one parameter set a
//! card: a format changes only the capacity): each format is calibrated
//! on its own card, and a format's capacity (`formats.NAME`) is a
//! parameter of that format's calibrations only, so moving it runs no
//! other format's figures again; likewise a number that times host reads
//! alone (`card::HOST_READS_ONLY`) runs no format again whose
//! figures are writes alone.

use crate::procedures::calibrate::{calibrate_keeping, host_reads};
use crate::procedures::prefixes::Prefixes;
use crate::runs::published::{held, Check};
use crate::runs::run::RunError;
use card::{Bound, FitParam, Profile, Published};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// What to fit and how.
#[derive(Debug, Clone)]
pub struct FitSpec {
    pub params: Vec<FitParam>,
    /// The figures to fit to, each measured on its format (the profile's
    /// default where it names none).
    pub figures: Vec<Published>,
    pub scale: u32,
    pub seed: u64,
    /// Points one search may try (each calibrated once for all searches).
    pub evals_max: u32,
    /// Also predict each figure from a fit made without it.
    pub leave_one_out: bool,
}

/// A fit's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Fit {
    /// Each parameter's path, its starting value and its fitted one.
    pub values: Vec<(String, f64, f64)>,
    /// The chosen figures at the fitted values.
    pub checks: Vec<Check>,
    /// The sum of the squared log errors of the held figures (0 inside a
    /// range).
    pub cost: f64,
    /// Calibrations run (one a format at each point, tried ahead of a
    /// search included).
    pub evals: u32,
    /// Of them, by format, in the order the figures first name them (a
    /// format's capacity moves only its own).
    pub evals_by_format: Vec<(String, u32)>,
    /// Calibrations a search asked for that a search had asked for
    /// before: read off the one already run.
    pub reused: u32,
    /// Calibrations tried ahead that no search then asked for: the work
    /// the speculation cost.
    pub unasked: u32,
    /// Steady chains that started from a card kept after their
    /// write-only part (`prefixes`): a move of a number that times host
    /// reads alone runs only the loads that read.
    pub kept_reused: u32,
    /// Per figure: its error predicted by a fit made without it.
    pub leave_one_out: Vec<Predicted>,
}

/// A figure predicted by a fit that did not see it.
#[derive(Debug, Clone, Serialize)]
pub struct Predicted {
    pub check: Check,
    /// The parameters that fit chose.
    pub values: Vec<f64>,
}

/// Fits `profile`'s parameters to the spec's figures. The fit's search
/// and the leave-one-out searches all run at once over one shared set of
/// calibrations, as many calibrations at a time as the machine has
/// cores: each search's path depends only on the figures at the points
/// it tries, so the outcome is the same as one search after another.
pub fn fit(profile: &Profile, spec: &FitSpec, progress: &(dyn Fn(&str) + Sync)) -> Result<(Profile, Fit), RunError> {
    if spec.params.is_empty() || spec.figures.is_empty() {
        return Err(RunError::Input("a fit needs at least one parameter and one figure".into()));
    }
    for p in &spec.params {
        p.check(profile).map_err(RunError::Input)?;
    }
    let start: Vec<f64> = spec.params.iter().map(|p| profile.number(&p.path)).collect::<Result<_, _>>().map_err(RunError::Input)?;
    let seen = Calibrations::new(profile, spec)?;
    let all: Vec<usize> = (0..spec.figures.len()).collect();
    // The fit over every figure, then one without each figure. Each starts
    // from the starting values, not the full fit: a parameter the other
    // figures do not pin down then shows in the prediction.
    let mut searches = vec![("fit".to_string(), all.clone())];
    if spec.leave_one_out && spec.figures.len() > 1 {
        for i in all.iter().copied() {
            searches.push((format!("without {}", spec.figures[i].what), all.iter().copied().filter(|&k| k != i).collect()));
        }
    }
    let order: Vec<usize> = (0..searches.len()).collect();
    let outs = crate::runs::threads::on_threads(&order, searches.len(), |k| {
        let (label, which) = &searches[k];
        let out = search(&seen, k, which, &start, &|s: &str| progress(&format!("{label}: {s}")));
        seen.kept.release(k);
        out
    });
    let mut outs = outs.into_iter().map(|r| r.unwrap_or(Err(RunError::Interrupted))).collect::<Result<Vec<_>, _>>()?.into_iter();
    let (best, cost) = outs.next().expect("the fit's own search");
    let checks = seen.checks(&best)?;
    let mut leave_one_out = Vec::new();
    for (i, (values, _)) in outs.enumerate() {
        let predicted = seen.checks(&values)?[i].clone();
        leave_one_out.push(Predicted { check: predicted, values });
    }
    let fitted = with_values(profile, &spec.params, &best)?;
    let values = spec.params.iter().zip(start.iter().zip(&best)).map(|(p, (&s, &b))| (p.path.clone(), s, b)).collect();
    let evals_by_format: Vec<(String, u32)> = seen.formats.iter().zip(&seen.run).map(|((f, _), n)| (f.clone(), n.load(Ordering::Relaxed))).collect();
    let evals: u32 = evals_by_format.iter().map(|(_, n)| n).sum();
    let (reused, unasked, kept_reused) = (seen.reused(), seen.unasked(evals), seen.kept.reused());
    Ok((fitted, Fit { values, checks, cost, evals, evals_by_format, reused, unasked, kept_reused, leave_one_out }))
}

/// The calibrations a fit has run, by format and parameter values, shared
/// by its searches. Each one calibrates every figure of the spec of its
/// format, and a search's cost over some of them is read off it: the
/// leave-one-out searches start where the full fit did and walk mostly
/// the same points, so most of their points are run once for all the
/// searches. A figure is thus always measured in the same calibration,
/// whichever figures the search is fitting.
struct Calibrations<'a> {
    profile: &'a Profile,
    spec: &'a FitSpec,
    /// Each format the figures were measured on, with the indices of its
    /// figures in the spec.
    formats: Vec<(String, Vec<usize>)>,
    /// By format, whether its calibration serves host reads.
    reads: Vec<bool>,
    /// By format, then the bits of each value that acts on it
    /// (`FitParam::acts_on`; the others count as 0): the search is
    /// deterministic, so a point met again is met with exactly the same
    /// values. A format whose figures are writes alone is thus not
    /// calibrated again for a move of the read command rate.
    done: Mutex<HashMap<PointKey, Arc<Point>>>,
    /// Calibrations run of each format, tried points included
    /// (`Calibrations::ahead`).
    run: Vec<AtomicU32>,
    /// Calibrations the searches asked for, and how many were distinct:
    /// what was reused is their difference, whichever search ran each.
    asked: AtomicU32,
    asked_distinct: AtomicU32,
    /// Calibrations running; at most `running_max` at once (each runs its
    /// chains on every core, and each holds its cards in memory).
    running: (Mutex<usize>, Condvar),
    running_max: usize,
    /// The cards steady chains left after their write-only part, kept
    /// for the points the searches stand on: each search moves the read
    /// command rate from its point.
    kept: Prefixes,
}

/// A format's index, and the bits of the values that act on it.
type PointKey = (usize, Vec<u64>);

/// One point's calibration of one format: run once, by the first search
/// to need it, while any other that needs it waits.
#[derive(Default)]
struct Point {
    running: Mutex<()>,
    checks: OnceLock<Vec<Check>>,
    asked: AtomicBool,
}

impl<'a> Calibrations<'a> {
    fn new(profile: &'a Profile, spec: &'a FitSpec) -> Result<Self, RunError> {
        let mut formats: Vec<(String, Vec<usize>)> = Vec::new();
        for (i, f) in spec.figures.iter().enumerate() {
            let name = f.format_or(&profile.default_format);
            match formats.iter_mut().find(|(n, _)| n == name) {
                Some((_, of)) => of.push(i),
                None => formats.push((name.to_string(), vec![i])),
            }
        }
        let run = formats.iter().map(|_| AtomicU32::new(0)).collect();
        let reads = formats.iter().map(|(_, of)| host_reads(&of.iter().map(|&i| &spec.figures[i]).collect::<Vec<_>>())).collect::<Result<_, _>>()?;
        Ok(Calibrations {
            profile,
            spec,
            formats,
            reads,
            done: Mutex::new(HashMap::new()),
            run,
            asked: AtomicU32::new(0),
            asked_distinct: AtomicU32::new(0),
            running: (Mutex::new(0), Condvar::new()),
            running_max: crate::runs::threads::cores(),
            // Beside the held points' cards, one for each calibration
            // running: the point a search is about to stand on was
            // calibrated last.
            kept: Prefixes::new(crate::runs::threads::cores()),
        })
    }

    /// Calibrations the searches asked for that an earlier one had.
    fn reused(&self) -> u32 {
        self.asked.load(Ordering::Relaxed) - self.asked_distinct.load(Ordering::Relaxed)
    }

    /// Of the `evals` calibrations run, those tried ahead that no search
    /// asked for.
    fn unasked(&self, evals: u32) -> u32 {
        let asked_distinct = self.asked_distinct.load(Ordering::Relaxed);
        assert!(asked_distinct <= evals, "every point a search asked for was calibrated");
        evals - asked_distinct
    }

    /// Every figure of the spec at values `x`, for a search, in the
    /// spec's order.
    fn checks(&self, x: &[f64]) -> Result<Vec<Check>, RunError> {
        let mut out: Vec<Option<Check>> = vec![None; self.spec.figures.len()];
        for k in 0..self.formats.len() {
            self.asked.fetch_add(1, Ordering::Relaxed);
            if !self.point(k, x).asked.swap(true, Ordering::Relaxed) {
                self.asked_distinct.fetch_add(1, Ordering::Relaxed);
            }
        }
        for (k, checks) in self.every_format(x).into_iter().enumerate() {
            for (&i, c) in self.formats[k].1.iter().zip(checks?) {
                out[i] = Some(c);
            }
        }
        Ok(out.into_iter().map(|c| c.expect("every figure is of one format")).collect())
    }

    /// Calibrates `x` ahead of a search that may ask for it next.
    fn ahead(&self, x: &[f64]) {
        // An error is the search's to meet, should it ask for the point.
        let _ = self.every_format(x);
    }

    /// Each format's figures at `x`, the formats calibrated at once (each
    /// is a card of its own).
    fn every_format(&self, x: &[f64]) -> Vec<Result<Vec<Check>, RunError>> {
        let points: Vec<Arc<Point>> = (0..self.formats.len()).map(|k| self.point(k, x)).collect();
        std::thread::scope(|scope| {
            let others: Vec<_> = points.iter().enumerate().skip(1).map(|(k, point)| scope.spawn(move || self.calibrated(k, point, x))).collect();
            let first = self.calibrated(0, &points[0], x);
            std::iter::once(first).chain(others.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))).collect()
        })
    }

    /// Format `k`'s point at `x`.
    fn point(&self, k: usize, x: &[f64]) -> Arc<Point> {
        let (format, reads) = (&self.formats[k].0, self.reads[k]);
        let key: Vec<u64> = self.spec.params.iter().zip(x).map(|(p, v)| if p.acts_on(format, reads) { v.to_bits() } else { 0 }).collect();
        self.done.lock().expect("no search panics holding the map").entry((k, key)).or_default().clone()
    }

    /// Format `k`'s figures at `x`, in the order of the spec.
    fn calibrated(&self, k: usize, point: &Point, x: &[f64]) -> Result<Vec<Check>, RunError> {
        let _only_one = point.running.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = point.checks.get() {
            return Ok(c.clone());
        }
        let (format, of) = &self.formats[k];
        let mut p = with_values(self.profile, &self.spec.params, x)?;
        p.published = of.iter().map(|&i| self.spec.figures[i].clone()).collect();
        let c = {
            let _slot = self.running_slot();
            calibrate_keeping(&p, format, self.spec.scale, self.spec.seed, 5, Some(&self.kept), &mut |_| {})?
        };
        assert_eq!(c.checks.len(), of.len(), "a check for each figure");
        self.run[k].fetch_add(1, Ordering::Relaxed);
        Ok(point.checks.get_or_init(|| c.checks).clone())
    }

    /// Waits until fewer than `running_max` calibrations run; the slot is
    /// given back when the guard drops.
    fn running_slot(&self) -> RunningSlot<'_> {
        let (count, freed) = &self.running;
        let mut n = count.lock().expect("no calibration panics holding the count");
        while *n >= self.running_max {
            n = freed.wait(n).expect("no calibration panics holding the count");
        }
        *n += 1;
        RunningSlot(&self.running)
    }

    /// The cost of values `x` over figures `which`: the sum of the squared
    /// log errors of the held figures. Maxima, which the model does not
    /// hold (`published::held`), and figures the profile marks as a known
    /// gap of the model are shown, not fitted: fitting them would trade
    /// the figures the model can meet for ones it cannot.
    fn cost(&self, x: &[f64], which: &[usize]) -> Result<f64, RunError> {
        let checks = self.checks(x)?;
        Ok(which.iter().map(|&i| &checks[i]).filter(|c| held(c.metric) && c.gap.is_none()).map(log_error).map(|e| e * e).sum())
    }
}

/// A running calibration's place among the `running_max`.
struct RunningSlot<'a>(&'a (Mutex<usize>, Condvar));

impl Drop for RunningSlot<'_> {
    fn drop(&mut self) {
        let (count, freed) = self.0;
        *count.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        freed.notify_one();
    }
}

/// The coordinate search over figures `which` from `start`; the best
/// values and their cost. At most the spec's `evals_max` points, whether
/// run or found already calibrated, so the path does not depend on what
/// another search ran before.
fn search(seen: &Calibrations, k: usize, which: &[usize], start: &[f64], progress: &dyn Fn(&str)) -> Result<(Vec<f64>, f64), RunError> {
    let spec = seen.spec;
    let mut x = start.to_vec();
    seen.kept.hold(k, &with_values(seen.profile, &spec.params, &x)?);
    let mut best = seen.cost(&x, which)?;
    let (mut used, mut step) = (1u32, 2.0f64.ln());
    while step >= STEP_MIN.ln() && used < spec.evals_max {
        let mut moved = false;
        for i in 0..x.len() {
            let tries = neighbours(&x, i, step, &spec.params[i]);
            let step_taken = std::thread::scope(|scope| -> Result<bool, RunError> {
                // The second try is calibrated beside the first (which it
                // would otherwise follow whenever the first fails): the
                // path is the same, the wall time shorter.
                if tries.len() == 2 && used + 1 < spec.evals_max {
                    let second = &tries[1];
                    scope.spawn(move || seen.ahead(second));
                }
                for y in &tries {
                    if used >= spec.evals_max {
                        break;
                    }
                    let c = seen.cost(y, which)?;
                    used += 1;
                    if c < best {
                        (x, best) = (y.clone(), c);
                        seen.kept.hold(k, &with_values(seen.profile, &spec.params, &x)?);
                        progress(&format!("cost {best:.5}: {}", values_text(&spec.params, &x)));
                        return Ok(true);
                    }
                }
                Ok(false)
            })?;
            moved |= step_taken;
        }
        if !moved {
            step /= 2.0;
        }
    }
    Ok((x, best))
}

/// The smallest step the search takes, as a ratio: its steps are 2, then
/// the square root of the one before (x1.41, x1.19, x1.09, x1.044,
/// x1.022), so the last is 2.2%. The evaluations run on a scaled card,
/// whose figures stay within 3% of the full-size card's: a finer step
/// (x1.011) fits the scaled card's own error rather than the card, at the
/// price of one more pass of every search. (A pass costs two points a
/// parameter: with four parameters or more a search's 40 points run out
/// by the 4.4% step, so the floor counts in smaller fits.)
const STEP_MIN: f64 = 1.02;

/// `x` with parameter `i` multiplied, then divided, by `e^step` (within
/// its bounds): those that differ from `x`.
fn neighbours(x: &[f64], i: usize, step: f64, p: &FitParam) -> Vec<Vec<f64>> {
    [step, -step]
        .iter()
        .map(|s| (x[i] * s.exp()).clamp(p.min, p.max))
        .filter(|&tried| tried != x[i])
        .map(|tried| {
            let mut y = x.to_vec();
            y[i] = tried;
            y
        })
        .collect()
}

/// A check's error as a log ratio: 0 inside its range, or on the right
/// side of an "up to" or "under" bound.
pub fn log_error(c: &Check) -> f64 {
    if c.bound != Bound::About && c.within {
        return 0.0;
    }
    (1.0 + c.error_percent / 100.0).max(1e-9).ln()
}

fn with_values(profile: &Profile, params: &[FitParam], x: &[f64]) -> Result<Profile, RunError> {
    let mut p = profile.clone();
    for (param, &v) in params.iter().zip(x) {
        p = p.with_number(&param.path, v).map_err(|e| RunError::Input(e.to_string()))?;
    }
    Ok(p)
}

fn values_text(params: &[FitParam], x: &[f64]) -> String {
    params.iter().zip(x).map(|(p, v)| format!("{} = {v:.4e}", p.path)).collect::<Vec<_>>().join(", ")
}
