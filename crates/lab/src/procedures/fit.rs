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

/// What to fit and how.
#[derive(Debug, Clone)]
pub struct FitSpec {
    pub params: Vec<FitParam>,
    /// The figures to fit to (each of the profile's format `format`).
    pub figures: Vec<Published>,
    pub format: String,
    pub scale: u32,
    pub seed: u64,
    /// Calibrations a fit may run.
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
    pub evals: u32,
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
    let mut evals = 0;
    let (best, cost) = search(profile, spec, &spec.figures, &start, spec.evals_max, &mut evals, progress)?;
    let fitted = with_values(profile, &spec.params, &best)?;
    let checks = figures_checked(&fitted, spec, &spec.figures)?;
    let mut leave_one_out = Vec::new();
    if spec.leave_one_out && spec.figures.len() > 1 {
        for i in 0..spec.figures.len() {
            progress(&format!("leave-one-out: without {}", spec.figures[i].what));
            let others: Vec<Published> = spec.figures.iter().enumerate().filter(|&(k, _)| k != i).map(|(_, f)| f.clone()).collect();
            // From the starting values, not the full fit: a parameter the
            // other figures do not pin down then shows in the prediction.
            let (values, _) = search(profile, spec, &others, &start, spec.evals_max, &mut evals, progress)?;
            let predicted = figures_checked(&with_values(profile, &spec.params, &values)?, spec, &spec.figures[i..=i])?;
            leave_one_out.push(Predicted { check: predicted.into_iter().next().expect("one figure"), values });
        }
    }
    let values = spec.params.iter().zip(start.iter().zip(&best)).map(|(p, (&s, &b))| (p.path.clone(), s, b)).collect();
    Ok((fitted, Fit { values, checks, cost, evals, leave_one_out }))
}

/// The coordinate search from `start`; the best values and their cost.
fn search(
    profile: &Profile,
    spec: &FitSpec,
    figures: &[Published],
    start: &[f64],
    evals_max: u32,
    evals: &mut u32,
    progress: &mut dyn FnMut(&str),
) -> Result<(Vec<f64>, f64), RunError> {
    let mut x = start.to_vec();
    let mut best = cost_of(profile, spec, figures, &x)?;
    let (mut used, mut step) = (1u32, 2.0f64.ln());
    while step >= 1.01f64.ln() && used < evals_max {
        let mut moved = false;
        for i in 0..x.len() {
            for dir in [1.0, -1.0] {
                if used >= evals_max {
                    break;
                }
                let p = &spec.params[i];
                let tried = (x[i] * (dir * step).exp()).clamp(p.min, p.max);
                if tried == x[i] {
                    continue;
                }
                let mut y = x.clone();
                y[i] = tried;
                let c = cost_of(profile, spec, figures, &y)?;
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
    *evals += used;
    Ok((x, best))
}

/// The cost of values `x`: the sum of the squared log errors of the held
/// figures. Tails, which the model does not hold (`published::held`),
/// and figures the profile marks as a known gap of the model are shown,
/// not fitted: fitting them would trade the figures the model can meet
/// for ones it cannot.
fn cost_of(profile: &Profile, spec: &FitSpec, figures: &[Published], x: &[f64]) -> Result<f64, RunError> {
    let checks = figures_checked(&with_values(profile, &spec.params, x)?, spec, figures)?;
    Ok(checks.iter().filter(|c| held(c.metric) && c.gap.is_none()).map(log_error).map(|e| e * e).sum())
}

/// A check's error as a log ratio: 0 inside its range, or on the right
/// side of an "up to" or "under" bound.
pub fn log_error(c: &Check) -> f64 {
    if c.bound != Bound::About && c.within {
        return 0.0;
    }
    (1.0 + c.error_percent / 100.0).max(1e-9).ln()
}

/// `figures` calibrated on `profile` (its published figures replaced).
fn figures_checked(profile: &Profile, spec: &FitSpec, figures: &[Published]) -> Result<Vec<Check>, RunError> {
    let mut p = profile.clone();
    p.published = figures.to_vec();
    let c = calibrate(&p, &spec.format, spec.scale, spec.seed, 5, &mut |_| {})?;
    assert_eq!(c.checks.len(), figures.len(), "a check for each figure");
    Ok(c.checks)
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
