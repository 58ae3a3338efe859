//! A sweep's points collected: each point's headline figures, read from
//! its results file, in a table of rows.

use super::points::{error_path, point_path, point_read, PointFile};
use super::{Output, Sweep, SweepError};
use crate::runs::phase::Phase;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// A point's headline figures (its last phase, the measured one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub index: usize,
    pub settings: BTreeMap<String, toml::Value>,
    /// A review's test (`4k 4K write`, `8k-7030 16T/16Q`); none for a run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    pub iops: f64,
    pub mb_per_s: f64,
    pub latency_avg_ms: f64,
    pub latency_p99_ms: f64,
    pub latency_max_ms: f64,
    /// None where the phase wrote nothing (a read test).
    pub write_amplification: Option<f64>,
}

/// A sweep's points collected from its directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Collected {
    pub kind: String,
    pub sweep: String,
    pub axes: Vec<String>,
    pub points: usize,
    pub rows: Vec<Row>,
    /// Points with no results file, and those that failed (with why).
    pub missing: Vec<usize>,
    pub failed: Vec<(usize, String)>,
}

pub const COLLECTED_KIND: &str = "flashlab sweep";

/// Reads every point's results file in `dir`; a file of another sweep's
/// point (other settings) is refused by name.
pub fn collect(sweep: &Sweep, dir: &Path) -> Result<Collected, SweepError> {
    let mut c = Collected {
        kind: COLLECTED_KIND.into(),
        sweep: sweep.file.display().to_string(),
        axes: sweep.axes.iter().map(|a| a.0.clone()).collect(),
        points: sweep.count,
        rows: Vec::new(),
        missing: Vec::new(),
        failed: Vec::new(),
    };
    for index in 0..sweep.count {
        let p = match point_read(sweep, dir, index) {
            PointFile::Whole(p) => p,
            PointFile::Missing => {
                match std::fs::read_to_string(error_path(dir, index)) {
                    Ok(why) => c.failed.push((index, why.trim().to_string())),
                    Err(_) => c.missing.push(index),
                }
                continue;
            }
            PointFile::Damaged(why) => {
                c.failed.push((index, format!("damaged results file, run again by the next `sweep run`: {why}")));
                continue;
            }
        };
        let phases: Vec<(Option<String>, &Phase)> = match &p.output {
            Output::Run(r) => r.phases.last().map(|ph| (None, ph)).into_iter().collect(),
            Output::Review(r) => r.jobs.iter().flat_map(|j| j.tests.iter().map(move |t| (Some(format!("{} {}", j.profile, t.name)), t))).collect(),
        };
        if phases.is_empty() {
            return Err(SweepError::NoPhase(point_path(dir, index).display().to_string()));
        }
        for (test, phase) in phases {
            let a = &phase.summary.all;
            c.rows.push(Row {
                index,
                settings: p.settings.clone(),
                test,
                iops: a.iops,
                mb_per_s: a.mb_per_s,
                latency_avg_ms: a.latency_avg_ms,
                latency_p99_ms: a.latency_p99_ms,
                latency_max_ms: a.latency_max_ms,
                write_amplification: (phase.wa > 0.0).then_some(phase.wa),
            });
        }
    }
    Ok(c)
}
