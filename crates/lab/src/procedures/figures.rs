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

/// Each main test of each job of `results` that ran on real storage or on
/// the simulated `device`, as its IOPS and its average latency, in the
/// card state the review ran it in (steady after the preconditioning;
/// filled after the sequential tests' fill); `tests` keeps the tests of
/// those names only ("4K write", "16T/16Q"; all where empty). A test cut
/// short is left out. A job on real storage names no format of a profile
/// (its figures are of the profile's default format); a simulated job
/// keeps its format. Judged as a reviewer's figures are.
pub fn of_results(results: &ReviewResults, source: &str, device: &str, tests: &[String]) -> Result<Vec<Published>, String> {
    let jobs: Vec<_> = results.jobs.iter().filter(|j| j.measured.is_some() || j.device.id == device).collect();
    let mut measured: Vec<&str> = jobs.iter().filter(|j| j.measured.is_some()).map(|j| j.device.id.as_str()).collect();
    measured.sort_unstable();
    measured.dedup();
    if measured.len() > 1 {
        return Err(format!("{source}: measured on several devices ({}): one device's figures fit one profile", measured.join(", ")));
    }
    let mut out = Vec::new();
    for job in jobs {
        let state = if job.tests_kind == Tests::Sequential { State::Filled } else { State::Steady };
        let format = job.measured.is_none().then(|| job.device.format.clone());
        for t in job.tests.iter().filter(|t| !t.interrupted && (tests.is_empty() || tests.contains(&t.name))) {
            // A matrix point's name is its load; the other tests name their workload.
            let test = match job.tests_kind {
                Tests::Matrix => format!("{} {}", job.profile_title, t.name),
                _ => t.name.clone(),
            };
            let workload = workload_name(&t.workload).ok_or_else(|| format!("{source}: {}, {}: a workload flashlab does not name", job.label(), t.name))?;
            let figure = |metric: Metric, value: f64, what: &str| Published {
                by: By::Reviewer,
                source: format!("{source}: {}", job.label()),
                what: format!("{test}{what}"),
                format: format.clone(),
                workload: workload.clone(),
                threads: t.threads,
                qd: t.queue_depth,
                state,
                metric,
                value,
                range: None,
                bound: Bound::About,
                conflict: None,
                gap: None,
            };
            out.push(figure(Metric::Iops, t.summary.all.iops, ""));
            out.push(figure(Metric::LatencyAvgMs, t.summary.all.latency_avg_ms, " average latency"));
        }
    }
    for p in &out {
        p.validate().map_err(|(field, value, range)| format!("{source}: {}: {field} = {value}: must be {range}", p.what))?;
    }
    if out.is_empty() {
        return Err(match tests.is_empty() {
            true => format!("{source}: no test of real storage or of {device} ran to its end"),
            false => format!("{source}: no test named {} ran to its end (its tests: {})", tests.join(", "), names(results).join(", ")),
        });
    }
    Ok(out)
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
