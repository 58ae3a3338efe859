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
//! (`STEP_MIN`). A point is calibrated one chain (card) at a time,
//! cheapest first, only as far as it takes to know whether it beats the
//! search's best.
//!
//! Figures of several formats are fitted together (one parameter set a
//! card: a format changes only the capacity): each format is calibrated
//! on its own card, and a format's capacity (`formats.NAME`) is a
//! parameter of that format's calibrations only, so moving it runs no
//! other format's figures again; likewise a number that times host reads
//! alone (`card::HOST_READS_ONLY`) runs no format again whose
//! figures are writes alone.

use crate::procedures::calibrate::{calibrate_keeping, chain_groups, host_reads};
use crate::procedures::prefixes::Prefixes;
use crate::runs::published::{held, Check};
use crate::runs::run::RunError;
use card::{Bound, FitParam, Profile, Published, State};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
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
    /// Calibrations run: one a chain of `calibrate` (a card from a secure
    /// erase and the loads measured on it) at each point, tried ahead of
    /// a search included.
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
    /// Chains of the points tried that were never run: at each, the
    /// chains calibrated before them already cost more than the search's
    /// best.
    pub skipped: u32,
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
    fit_calibrating(profile, spec, false, progress)
}

/// As `fit`; with `whole`, every point a search tries is calibrated
/// whole (each chain whose figures it counts), as no search needs.
fn fit_calibrating(profile: &Profile, spec: &FitSpec, whole: bool, progress: &(dyn Fn(&str) + Sync)) -> Result<(Profile, Fit), RunError> {
    if spec.params.is_empty() || spec.figures.is_empty() {
        return Err(RunError::Input("a fit needs at least one parameter and one figure".into()));
    }
    for p in &spec.params {
        p.check(profile)?;
    }
    let start: Vec<f64> = spec.params.iter().map(|p| profile.number(&p.path)).collect::<Result<_, _>>()?;
    let seen = Calibrations::new(profile, spec, whole)?;
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
        let predicted = seen.figure(&values, i)?;
        leave_one_out.push(Predicted { check: predicted, values });
    }
    let fitted = with_values(profile, &spec.params, &best)?;
    let values = spec.params.iter().zip(start.iter().zip(&best)).map(|(p, (&s, &b))| (p.path.clone(), s, b)).collect();
    let evals_by_format: Vec<(String, u32)> = seen.formats.iter().zip(&seen.run).map(|((f, _), n)| (f.clone(), n.load(Ordering::Relaxed))).collect();
    let evals: u32 = evals_by_format.iter().map(|(_, n)| n).sum();
    let (reused, unasked, skipped, kept_reused) = (seen.reused(), seen.unasked(evals), seen.skipped(), seen.kept.reused());
    Ok((fitted, Fit { values, checks, cost, evals, evals_by_format, reused, unasked, skipped, kept_reused, leave_one_out }))
}

/// The calibrations a fit has run, by the card each figure is measured
/// on and parameter values, shared by its searches. A calibration is one
/// chain of `calibrate` (a card from a secure erase and the loads it
/// measures), so a figure is always measured in the same calibration,
/// whichever figures the search is fitting, and a search's cost is read
/// off the chains it needs: the leave-one-out searches start where the
/// full fit did and walk mostly the same points, so most of their points
/// are run once for all the searches.
///
/// A search asks only whether a point costs less than its best: the
/// chains are calibrated cheapest first, and once the figures calibrated
/// cost more than the best the rest are not run (the errors are squares,
/// so no figure lowers the cost). The decision, and so the search's path,
/// is the one the whole calibration gives.
struct Calibrations<'a> {
    profile: &'a Profile,
    spec: &'a FitSpec,
    /// Each format the figures were measured on, with the indices of its
    /// figures in the spec.
    formats: Vec<(String, Vec<usize>)>,
    /// The figures by the chain that measures them, cheapest first.
    groups: Vec<Group>,
    /// Every point calibrated whole (its chains at once), needed or not.
    whole: bool,
    /// By group, then the bits of each value that acts on it
    /// (`FitParam::acts_on`; the others count as 0): the search is
    /// deterministic, so a point met again is met with exactly the same
    /// values. A chain that serves no host read is thus not calibrated
    /// again for a move of the read command rate.
    done: Mutex<HashMap<PointKey, Arc<Point>>>,
    /// Every point a search tried or tried ahead (its values' bits).
    tried: Mutex<HashSet<Vec<u64>>>,
    /// Chains calibrated of each format, tried points included
    /// (`Calibrations::ahead`).
    run: Vec<AtomicU32>,
    /// Chains the searches asked for, and how many were distinct: what
    /// was reused is their difference, whichever search ran each.
    asked: AtomicU32,
    asked_distinct: AtomicU32,
    /// Calibrations running; at most `running_max` at once (each holds
    /// its card in memory).
    running: (Mutex<usize>, Condvar),
    running_max: usize,
    /// The cards steady chains left after their write-only part, kept
    /// for the points the searches stand on: each search moves the read
    /// command rate from its point.
    kept: Prefixes,
}

/// The figures one chain of `calibrate` measures.
struct Group {
    /// Its format's index in `Calibrations::formats`.
    format: usize,
    /// Its figures' indices in the spec, in the spec's order.
    figures: Vec<usize>,
    /// Whether the chain serves host reads.
    reads: bool,
}

/// A group's index, and the bits of the values that act on it.
type PointKey = (usize, Vec<u64>);

/// One point's calibration of one group: run once, by the first search
/// to need it, while any other that needs it waits.
#[derive(Default)]
struct Point {
    running: Mutex<()>,
    checks: OnceLock<Vec<Check>>,
    asked: AtomicBool,
}

impl<'a> Calibrations<'a> {
    fn new(profile: &'a Profile, spec: &'a FitSpec, whole: bool) -> Result<Self, RunError> {
        let mut formats: Vec<(String, Vec<usize>)> = Vec::new();
        for (i, f) in spec.figures.iter().enumerate() {
            let name = f.format_or(&profile.default_format);
            match formats.iter_mut().find(|(n, _)| n == name) {
                Some((_, of)) => of.push(i),
                None => formats.push((name.to_string(), vec![i])),
            }
        }
        let mut groups = Vec::new();
        for (format, (_, of)) in formats.iter().enumerate() {
            let figures: Vec<&Published> = of.iter().map(|&i| &spec.figures[i]).collect();
            for g in chain_groups(&figures)? {
                let in_spec: Vec<usize> = g.iter().map(|&j| of[j]).collect();
                let reads = host_reads(&g.iter().map(|&j| figures[j]).collect::<Vec<_>>())?;
                groups.push(Group { format, figures: in_spec, reads });
            }
        }
        // Every format's fresh and filled cards (a round or a fill each)
        // before the steady ones (hours of preconditioning).
        groups.sort_by_key(|g| spec.figures[g.figures[0]].state == State::Steady);
        let run = formats.iter().map(|_| AtomicU32::new(0)).collect();
        Ok(Calibrations {
            profile,
            spec,
            formats,
            groups,
            whole,
            done: Mutex::new(HashMap::new()),
            tried: Mutex::new(HashSet::new()),
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

    /// Of the chains of every point tried, those no search needed.
    fn skipped(&self) -> u32 {
        let tried = self.tried.lock().expect("no search panics holding the set");
        let done = self.done.lock().expect("no search panics holding the map");
        let mut n = 0;
        for bits in tried.iter() {
            let x: Vec<f64> = bits.iter().map(|&b| f64::from_bits(b)).collect();
            n += (0..self.groups.len()).filter(|&g| done.get(&self.key(g, &x)).is_none_or(|p| p.checks.get().is_none())).count() as u32;
        }
        n
    }

    /// Every figure of the spec at values `x`, in the spec's order.
    fn checks(&self, x: &[f64]) -> Result<Vec<Check>, RunError> {
        let all: Vec<usize> = (0..self.groups.len()).collect();
        let mut out: Vec<Option<Check>> = vec![None; self.spec.figures.len()];
        for (g, checks) in all.iter().zip(self.at_once(x, &all, true)) {
            for (&i, c) in self.groups[*g].figures.iter().zip(checks?) {
                out[i] = Some(c);
            }
        }
        Ok(out.into_iter().map(|c| c.expect("every figure is of one group")).collect())
    }

    /// Figure `i` at values `x` (its chain alone calibrated).
    fn figure(&self, x: &[f64], i: usize) -> Result<Check, RunError> {
        let g = self.groups.iter().position(|g| g.figures.contains(&i)).expect("every figure is of one group");
        let at = self.groups[g].figures.iter().position(|&j| j == i).expect("found above");
        Ok(self.group_checks(g, x, true)?.swap_remove(at))
    }

    /// Tries `x` ahead of a search that may ask for it next, with the
    /// best it would compare `x` with.
    fn ahead(&self, x: &[f64], which: &[usize], best: f64) {
        // An error is the search's to meet, should it ask for the point.
        let _ = self.cost_from(x, which, best, false);
    }

    /// Groups `gs`' figures at `x`, calibrated at once (each is a card of
    /// its own).
    fn at_once(&self, x: &[f64], gs: &[usize], asked: bool) -> Vec<Result<Vec<Check>, RunError>> {
        std::thread::scope(|scope| {
            let others: Vec<_> = gs.iter().skip(1).map(|&g| scope.spawn(move || self.group_checks(g, x, asked))).collect();
            let first = gs.first().map(|&g| self.group_checks(g, x, asked));
            first.into_iter().chain(others.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))).collect()
        })
    }

    /// The key of group `g`'s point at `x`.
    fn key(&self, g: usize, x: &[f64]) -> PointKey {
        let (format, reads) = (&self.formats[self.groups[g].format].0, self.groups[g].reads);
        (g, self.spec.params.iter().zip(x).map(|(p, v)| if p.acts_on(format, reads) { v.to_bits() } else { 0 }).collect())
    }

    /// Group `g`'s figures at `x`, in the spec's order; `asked` when a
    /// search needs them (not tried ahead).
    fn group_checks(&self, g: usize, x: &[f64], asked: bool) -> Result<Vec<Check>, RunError> {
        let point = self.done.lock().expect("no search panics holding the map").entry(self.key(g, x)).or_default().clone();
        if asked {
            self.asked.fetch_add(1, Ordering::Relaxed);
            if !point.asked.swap(true, Ordering::Relaxed) {
                self.asked_distinct.fetch_add(1, Ordering::Relaxed);
            }
        }
        let _only_one = point.running.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = point.checks.get() {
            return Ok(c.clone());
        }
        let (format, figures) = (&self.formats[self.groups[g].format].0, &self.groups[g].figures);
        let mut p = with_values(self.profile, &self.spec.params, x)?;
        p.published = figures.iter().map(|&i| self.spec.figures[i].clone()).collect();
        let c = {
            let _slot = self.running_slot();
            calibrate_keeping(&p, format, self.spec.scale, self.spec.seed, 5, Some(&self.kept), &mut |_| {})?
        };
        assert_eq!(c.checks.len(), figures.len(), "a check for each figure");
        self.run[self.groups[g].format].fetch_add(1, Ordering::Relaxed);
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
        self.cost_from(x, which, f64::INFINITY, true)
    }

    /// As `cost`, for a search that asks only whether `x` costs less than
    /// `best`: the chains are calibrated cheapest first, and once those
    /// calibrated cost more than `best`, that partial cost is the answer.
    fn cost_from(&self, x: &[f64], which: &[usize], best: f64, asked: bool) -> Result<f64, RunError> {
        self.tried.lock().expect("no search panics holding the set").insert(x.iter().map(|v| v.to_bits()).collect());
        let counts = |i: usize| which.contains(&i) && held(self.spec.figures[i].metric) && self.spec.figures[i].gap.is_none();
        let needed: Vec<usize> = (0..self.groups.len()).filter(|&g| self.groups[g].figures.iter().any(|&i| counts(i))).collect();
        let mut checks: Vec<Option<Check>> = vec![None; self.spec.figures.len()];
        let mut place = |g: usize, got: Vec<Check>| -> f64 {
            let mut part = 0.0;
            for (&i, c) in self.groups[g].figures.iter().zip(got) {
                if counts(i) {
                    part += log_error(&c) * log_error(&c);
                }
                checks[i] = Some(c);
            }
            part
        };
        if best == f64::INFINITY || self.whole {
            // Every chain counts: all at once.
            for (&g, got) in needed.iter().zip(self.at_once(x, &needed, asked)) {
                place(g, got?);
            }
        } else {
            let mut partial = 0.0;
            for &g in &needed {
                partial += place(g, self.group_checks(g, x, asked)?);
                // Past the best by more than rounding explains, the
                // figures not calibrated cannot bring the cost under it.
                if partial > best * (1.0 + 1e-9) {
                    return Ok(partial);
                }
            }
        }
        // Summed in the spec's order, as the whole calibration sums them.
        Ok(which.iter().filter(|&&i| counts(i)).map(|&i| log_error(checks[i].as_ref().expect("its chain was calibrated"))).map(|e| e * e).sum())
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
                    scope.spawn(move || seen.ahead(second, which, best));
                }
                for y in &tries {
                    if used >= spec.evals_max {
                        break;
                    }
                    let c = seen.cost_from(y, which, best, true)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A search that stops calibrating a point once the chains it ran
    /// cost more than its best takes the path the whole calibrations
    /// give: the same values, figures, cost and leave-one-out, with
    /// fewer chains run.
    #[test]
    fn a_point_calibrated_only_as_far_as_its_decision_fits_as_a_whole_one() {
        let mut profile = card::profile_load("p420m").unwrap();
        profile.fit.clear();
        let params = vec![
            FitParam { path: "controller.program_path_bytes_per_sec".into(), min: 2e8, max: 3e9, why: "test".into() },
            FitParam { path: "controller.read_commands_per_sec".into(), min: 1e5, max: 3e6, why: "test".into() },
        ];
        // A fresh card's burst (the program path) and a filled card's read
        // (the read command rate), each a chain of its own.
        let text = "[[published]]\nby = \"reviewer\"\nsource = \"test\"\nwhat = \"4K write, burst\"\nworkload = \"4k-write\"\nstate = \"fresh\"\nmetric = \"iops\"\nvalue = 100000\n\n[[published]]\nby = \"reviewer\"\nsource = \"test\"\nwhat = \"4K read, filled\"\nworkload = \"4k-read\"\nstate = \"filled\"\nmetric = \"iops\"\nvalue = 560000\n";
        let figures = card::figures_parse("test", text).unwrap();
        let spec = FitSpec { params, figures, scale: 64, seed: 1, evals_max: 10, leave_one_out: true };
        let (p_part, part) = fit_calibrating(&profile, &spec, false, &|_| {}).unwrap();
        let (p_whole, whole) = fit_calibrating(&profile, &spec, true, &|_| {}).unwrap();
        assert_eq!(part.values, whole.values);
        assert_eq!(part.cost.to_bits(), whole.cost.to_bits());
        assert_eq!(part.checks, whole.checks);
        let predicted = |f: &Fit| f.leave_one_out.iter().map(|p| (p.check.clone(), p.values.clone())).collect::<Vec<_>>();
        assert_eq!(predicted(&part), predicted(&whole));
        assert_eq!(p_part.to_toml(), p_whole.to_toml());
        assert!(part.evals < whole.evals, "no chain left unrun: {} against {}", part.evals, whole.evals);
        assert!(part.skipped > whole.skipped, "{} against {}", part.skipped, whole.skipped);
        // Point by point: beside bests around its cost, a point off the
        // known values beats each exactly when its whole cost does.
        let seen = Calibrations::new(&profile, &spec, false).unwrap();
        let all = [0, 1];
        for x in [[700e6, 300_000.0], [450e6, 600_000.0]] {
            let c = seen.cost(&x, &all).unwrap();
            let first = log_error(&seen.figure(&x, 0).unwrap()).powi(2);
            assert!(first > 0.0 && first < c, "both figures count at {x:?}: {first} of {c}");
            for best in [first * 0.5, first * 1.01, c * 0.999, c, c * 1.001, c * 2.0] {
                assert_eq!(seen.cost_from(&x, &all, best, true).unwrap() < best, c < best, "{x:?}: cost {c}, best {best}");
            }
        }
    }
}
