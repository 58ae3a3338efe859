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
//! cost; the step halves when a whole pass keeps none, down to 1%.

use crate::procedures::calibrate::calibrate;
use crate::runs::published::{held, Check};
use crate::runs::run::RunError;
use card::{Bound, FitParam, Profile, Published};
use serde::Serialize;
use std::collections::HashMap;

/// What to fit and how.
#[derive(Debug, Clone)]
pub struct FitSpec {
    pub params: Vec<FitParam>,
    /// The figures to fit to (each of the profile's format `format`).
    pub figures: Vec<Published>,
    pub format: String,
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
    /// Calibrations run.
    pub evals: u32,
    /// Points a search met that an earlier search had calibrated already.
    pub reused: u32,
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

/// Fits `profile`'s parameters to the spec's figures.
pub fn fit(profile: &Profile, spec: &FitSpec, progress: &mut dyn FnMut(&str)) -> Result<(Profile, Fit), RunError> {
    if spec.params.is_empty() || spec.figures.is_empty() {
        return Err(RunError::Input("a fit needs at least one parameter and one figure".into()));
    }
    for p in &spec.params {
        p.check(profile).map_err(RunError::Input)?;
    }
    let start: Vec<f64> = spec.params.iter().map(|p| profile.number(&p.path)).collect::<Result<_, _>>().map_err(RunError::Input)?;
    let mut seen = Calibrations::new(profile, spec);
    let all: Vec<usize> = (0..spec.figures.len()).collect();
    let (best, cost) = search(&mut seen, &all, &start, progress)?;
    let checks = seen.checks(&best)?.to_vec();
    let mut leave_one_out = Vec::new();
    if spec.leave_one_out && spec.figures.len() > 1 {
        for i in all.iter().copied() {
            progress(&format!("leave-one-out: without {}", spec.figures[i].what));
            let others: Vec<usize> = all.iter().copied().filter(|&k| k != i).collect();
            // From the starting values, not the full fit: a parameter the
            // other figures do not pin down then shows in the prediction.
            let (values, _) = search(&mut seen, &others, &start, progress)?;
            let predicted = seen.checks(&values)?[i].clone();
            leave_one_out.push(Predicted { check: predicted, values });
        }
    }
    let fitted = with_values(profile, &spec.params, &best)?;
    let values = spec.params.iter().zip(start.iter().zip(&best)).map(|(p, (&s, &b))| (p.path.clone(), s, b)).collect();
    Ok((fitted, Fit { values, checks, cost, evals: seen.run, reused: seen.reused, leave_one_out }))
}

/// The calibrations a fit has run, by parameter values. Each one
/// calibrates every figure of the spec, and a search's cost over some of
/// them is read off it: the leave-one-out searches start where the full
/// fit did and walk mostly the same points, so most of their points are
/// run once for all the searches. A figure is thus always measured in the
/// same calibration, whichever figures the search is fitting.
struct Calibrations<'a> {
    profile: &'a Profile,
    spec: &'a FitSpec,
    /// By the bits of each value: the search is deterministic, so a point
    /// met again is met with exactly the same values.
    done: HashMap<Vec<u64>, Vec<Check>>,
    run: u32,
    reused: u32,
}

impl<'a> Calibrations<'a> {
    fn new(profile: &'a Profile, spec: &'a FitSpec) -> Self {
        Calibrations { profile, spec, done: HashMap::new(), run: 0, reused: 0 }
    }

    /// Every figure of the spec at values `x`.
    fn checks(&mut self, x: &[f64]) -> Result<&[Check], RunError> {
        let key: Vec<u64> = x.iter().map(|v| v.to_bits()).collect();
        if !self.done.contains_key(&key) {
            let mut p = with_values(self.profile, &self.spec.params, x)?;
            p.published = self.spec.figures.clone();
            let c = calibrate(&p, &self.spec.format, self.spec.scale, self.spec.seed, 5, &mut |_| {})?;
            assert_eq!(c.checks.len(), self.spec.figures.len(), "a check for each figure");
            self.done.insert(key.clone(), c.checks);
            self.run += 1;
        } else {
            self.reused += 1;
        }
        Ok(&self.done[&key])
    }

    /// The cost of values `x` over figures `which`: the sum of the squared
    /// log errors of the held figures. Tails, which the model does not
    /// hold (`published::held`), and figures the profile marks as a known
    /// gap of the model are shown, not fitted: fitting them would trade
    /// the figures the model can meet for ones it cannot.
    fn cost(&mut self, x: &[f64], which: &[usize]) -> Result<f64, RunError> {
        let checks = self.checks(x)?;
        Ok(which.iter().map(|&i| &checks[i]).filter(|c| held(c.metric) && c.gap.is_none()).map(log_error).map(|e| e * e).sum())
    }
}

/// The coordinate search over figures `which` from `start`; the best
/// values and their cost. At most the spec's `evals_max` points, whether
/// run or found already calibrated, so the path does not depend on what
/// another search ran before.
fn search(seen: &mut Calibrations, which: &[usize], start: &[f64], progress: &mut dyn FnMut(&str)) -> Result<(Vec<f64>, f64), RunError> {
    let spec = seen.spec;
    let mut x = start.to_vec();
    let mut best = seen.cost(&x, which)?;
    let (mut used, mut step) = (1u32, 2.0f64.ln());
    while step >= 1.01f64.ln() && used < spec.evals_max {
        let mut moved = false;
        for i in 0..x.len() {
            for dir in [1.0, -1.0] {
                if used >= spec.evals_max {
                    break;
                }
                let p = &spec.params[i];
                let tried = (x[i] * (dir * step).exp()).clamp(p.min, p.max);
                if tried == x[i] {
                    continue;
                }
                let mut y = x.clone();
                y[i] = tried;
                let c = seen.cost(&y, which)?;
                used += 1;
                if c < best {
                    (x, best, moved) = (y, c, true);
                    progress(&format!("cost {best:.5}: {}", values_text(&spec.params, &x)));
                    break;
                }
            }
        }
        if !moved {
            step /= 2.0;
        }
    }
    Ok((x, best))
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
