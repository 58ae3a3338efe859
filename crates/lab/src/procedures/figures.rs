//! Figures to fit a profile to, read off a review's results file
//! (`flashlab fit --figures results.json`): a review run on real storage
//! through fio (or on a simulated card) gives its main tests as figures,
//! each with the conditions it was measured in, as a profile's
//! `[[published]]` entries hold them.

use crate::procedures::job::Tests;
use crate::procedures::review::ReviewResults;
use crate::runs::phase::Phase;
use crate::runs::published::same_load;
use crate::runs::workload::Mix;
use card::{Bound, By, Metric, Published, State};

/// Figures read off a results file, and what was left out, each with
/// why.
pub struct OfResults {
    pub figures: Vec<Published>,
    pub left_out: Vec<String>,
}

/// Results that give no figures to fit to, or figures that cannot be.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OfResultsError {
    #[error("{results}: measured on several devices ({devices}): one device's figures fit one profile")]
    Devices { results: String, devices: String },
    #[error("{results}: {job}, {test}: a workload flashlab does not name")]
    Workload { results: String, job: String, test: String },
    #[error(transparent)]
    Figures(#[from] card::FigureError),
    /// No test to fit to (`why`: what was left out, said).
    #[error("{results}: no test of real storage or of {device} to fit to{why}")]
    NoTest { results: String, device: String, why: String },
    #[error("{results}: no test named {named} to fit to (its tests: {tests}){why}")]
    NoTestNamed { results: String, named: String, tests: String, why: String },
}

/// Each main test of each job of `results` that ran on real storage or on
/// the simulated `device`, as its IOPS and its average latency, steady
/// after the review's preconditioning (as `calibrate` measures a steady
/// figure: the 4K tests to the digit on the card that ran them, a matrix
/// point within a few percent, as the points before it differ); `tests`
/// keeps the tests of those names only ("4K write", "16T/16Q"; all where
/// empty). A test cut short is left out, and so are the sequential
/// tests: the review fills the card twice and runs each test for its
/// rounds, where `calibrate`'s filled card is filled once and measured
/// for a round. A job on real storage names no format of a profile (its
/// figures are of the profile's default format); a simulated job keeps
/// its format. Judged as a reviewer's figures are.
pub fn of_results(results: &ReviewResults, source: &str, device: &str, tests: &[String]) -> Result<OfResults, OfResultsError> {
    let jobs: Vec<_> = results.jobs.iter().filter(|j| j.measured.is_some() || j.device.id == device).collect();
    let mut measured: Vec<&str> = jobs.iter().filter(|j| j.measured.is_some()).map(|j| j.device.id.as_str()).collect();
    measured.sort_unstable();
    measured.dedup();
    if measured.len() > 1 {
        return Err(OfResultsError::Devices { results: source.to_string(), devices: measured.join(", ") });
    }
    let (mut out, mut left_out): (Vec<Published>, Vec<(&str, Vec<String>)>) = (Vec::new(), Vec::new());
    for job in jobs {
        let format = job.measured.is_none().then(|| job.device.format.clone());
        for t in job.tests.iter().filter(|t| tests.is_empty() || tests.contains(&t.name)) {
            let why = match (t.interrupted, job.tests_kind) {
                (true, _) => Some("cut short"),
                (false, Tests::Sequential) => Some("sequential: the review fills the card twice, calibrate once"),
                _ => None,
            };
            if let Some(why) = why {
                match left_out.iter_mut().find(|(w, _): &&mut (&str, Vec<String>)| *w == why) {
                    Some((_, of)) => of.push(t.name.clone()),
                    None => left_out.push((why, vec![t.name.clone()])),
                }
                continue;
            }
            // A matrix point's name is its load; the other tests name their workload.
            let test = match job.tests_kind {
                Tests::Matrix => format!("{} {}", job.profile_title, t.name),
                _ => t.name.clone(),
            };
            let workload =
                workload_name(&t.workload).ok_or_else(|| OfResultsError::Workload { results: source.to_string(), job: job.label(), test: t.name.clone() })?;
            let figure = |metric: Metric, value: f64, what: &str| Published {
                by: By::Reviewer,
                source: format!("{source}: {}", job.label()),
                what: format!("{test}{what}"),
                format: format.clone(),
                workload: workload.clone(),
                threads: t.threads,
                qd: t.queue_depth,
                state: State::Steady,
                metric,
                value,
                range: None,
                bound: Bound::About,
                conflict: None,
                gap: None,
                // A simulated job's host; a measured one's is this machine,
                // taken as the reviewers' Linux server it stands for.
                host: job.measured.is_none().then(|| card::host_not_default(job.device.host.as_deref()).map(str::to_string)).flatten(),
            };
            out.push(figure(Metric::Iops, t.summary.all.iops, ""));
            out.push(figure(Metric::LatencyAvgMs, t.summary.all.latency_avg_ms, " average latency"));
        }
    }
    card::figures_check(source, &out)?;
    let left_out: Vec<String> = left_out.into_iter().map(|(why, of)| format!("{} ({why})", of.join(", "))).collect();
    if out.is_empty() {
        let why = if left_out.is_empty() { String::new() } else { format!(" (left out: {})", left_out.join("; ")) };
        let results_file = source.to_string();
        return Err(match tests.is_empty() {
            true => OfResultsError::NoTest { results: results_file, device: device.to_string(), why },
            false => OfResultsError::NoTestNamed { results: results_file, named: tests.join(", "), tests: names(results).join(", "), why },
        });
    }
    Ok(OfResults { figures: out, left_out })
}

/// The tests of `results`, by name, each once.
fn names(results: &ReviewResults) -> Vec<String> {
    let mut n: Vec<String> = Vec::new();
    for t in results.jobs.iter().flat_map(|j| &j.tests).map(|t: &Phase| &t.name) {
        if !n.contains(t) {
            n.push(t.clone());
        }
    }
    n
}

/// The name a profile's figure gives the mix: its own where it is one of
/// the named ones (whose preconditioner the name decides).
fn workload_name(mix: &Mix) -> Option<String> {
    Mix::parse(&mix.name).ok().filter(|m| same_load(m, mix)).map(|_| mix.name.clone())
}
