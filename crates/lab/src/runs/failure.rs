//! A die failure during a measured phase, as a run reports it: when it
//! came, how long the rebuild took, and what host I/O did before, during
//! and after (from the phase's rounds).

use crate::runs::metrics::Interval;
use crate::runs::phase::Phase;
use card::{FailTarget, FailureEvent};
use serde::{Deserialize, Serialize};
use units::{Ns, NS_PER_SEC};

/// `--fail-die TARGET@SECONDS`: a die (or channel) failing that many
/// virtual seconds into the measured phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailSpec {
    pub target: FailTarget,
    pub at_s: f64,
}

/// A `--fail-die` that is not `TARGET@SECONDS` as the card can take it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("--fail-die {spec}: {why}")]
pub struct FailSpecError {
    pub spec: String,
    pub why: FailSpecFault,
}

/// What is wrong with a `--fail-die`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FailSpecFault {
    #[error("expected TARGET@SECONDS, such as 3.1@20 (die 1 of channel 3, 20 s into the measured phase) or 3.*@20 (channel 3)")]
    NoTime,
    #[error(transparent)]
    Target(#[from] card::TargetError),
    #[error("'{0}' is not a number of seconds")]
    NotSeconds(String),
    #[error("{0} s: must be in 0..=10000000")]
    Range(f64),
}

impl FailSpec {
    pub fn parse(s: &str) -> Result<FailSpec, FailSpecError> {
        let bad = |why: FailSpecFault| FailSpecError { spec: s.to_string(), why };
        let (t, at) = s.rsplit_once('@').ok_or_else(|| bad(FailSpecFault::NoTime))?;
        let target = FailTarget::parse(t).map_err(|e| bad(e.into()))?;
        let at_s: f64 = at.trim().parse().map_err(|_| bad(FailSpecFault::NotSeconds(at.to_string())))?;
        if !(at_s.is_finite() && (0.0..=1e7).contains(&at_s)) {
            return Err(bad(FailSpecFault::Range(at_s)));
        }
        Ok(FailSpec { target, at_s })
    }
}

/// A failure and its rebuild as seen from the measured phase: times from
/// the phase's start; IOPS averaged over the rounds wholly before the
/// failure, wholly within the rebuild (and its worst round), and wholly
/// after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailureReport {
    pub event: FailureEvent,
    pub failed_at_s: f64,
    /// None: the rebuild had not ended when the phase did.
    pub rebuild_done_at_s: Option<f64>,
    pub rebuild_s: Option<f64>,
    pub rebuild_bytes: u64,
    pub iops_before: Option<f64>,
    pub iops_during: Option<f64>,
    pub iops_during_min: Option<f64>,
    pub iops_after: Option<f64>,
    /// Worst round maximum latency during the rebuild, ms.
    pub latency_max_during_ms: Option<f64>,
}

/// A phase run through die failures and their rebuilds (`review
/// --fail-die`): its rounds, and each failure's report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailureRun {
    pub phase: Phase,
    pub reports: Vec<FailureReport>,
    /// The rebuild's rate, bytes per second.
    pub rebuild_bytes_per_sec: u64,
}

/// A failure in one line: what failed, when, the rebuild and the dip.
pub fn summary(f: &FailureReport) -> String {
    let iops = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0}"));
    let rebuild = match f.rebuild_s {
        Some(t) => format!("rebuild {:.1} MB in {t:.2} s", f.rebuild_bytes as f64 / 1e6),
        None => format!("rebuild NOT ENDED in the phase ({:.1} MB moved)", f.rebuild_bytes as f64 / 1e6),
    };
    let lost = if f.event.lost_offsets.is_empty() { String::new() } else { format!("; LOST {} slots of 4 KiB", f.event.lost_offsets.len()) };
    format!(
        "{} failed at {:.2} s; {rebuild}; IOPS {} before, {} during (worst round {}), {} after{lost}",
        f.event.what,
        f.failed_at_s,
        iops(f.iops_before),
        iops(f.iops_during),
        iops(f.iops_during_min),
        iops(f.iops_after)
    )
}

fn mean(v: &[&Interval]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().map(|i| i.iops).sum::<f64>() / v.len() as f64)
}

/// The report of `event` over a phase that started at `start` and whose
/// rounds are `intervals`.
pub fn report(event: &FailureEvent, start: Ns, intervals: &[Interval]) -> FailureReport {
    let s = |ns: Ns| ns.saturating_sub(start) as f64 / NS_PER_SEC as f64;
    let at = s(event.failed_at_ns);
    let done = event.rebuild_done_ns.map(s);
    let end = |i: &Interval| i.start_s + i.length_s;
    let before: Vec<&Interval> = intervals.iter().filter(|i| end(i) <= at).collect();
    let during: Vec<&Interval> = intervals.iter().filter(|i| i.start_s >= at && done.is_none_or(|d| end(i) <= d)).collect();
    let after: Vec<&Interval> = intervals.iter().filter(|i| done.is_some_and(|d| i.start_s >= d)).collect();
    FailureReport {
        event: event.clone(),
        failed_at_s: at,
        rebuild_done_at_s: done,
        rebuild_s: event.rebuild_s(),
        rebuild_bytes: event.slots_moved * units::SLOT_BYTES,
        iops_before: mean(&before),
        iops_during: mean(&during),
        iops_during_min: during.iter().map(|i| i.iops).reduce(f64::min),
        iops_after: mean(&after),
        latency_max_during_ms: during.iter().map(|i| i.latency_max_ms).reduce(f64::max),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fail_specs_parse_or_say_why_not() {
        let f = FailSpec::parse("3.1@20").unwrap();
        assert_eq!((f.target.channel, f.target.die, f.at_s), (3, Some(1), 20.0));
        assert_eq!(FailSpec::parse("0:5.*@1.5").unwrap().target.die, None);
        for (bad, why) in [("3.1", "TARGET@SECONDS"), ("3.1@x", "not a number"), ("3.1@-1", "must be in"), ("q@1", "CHANNEL.DIE")] {
            let e = FailSpec::parse(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
