//! Calibration: a device's simulated steady-state 4K figures beside the
//! figures reviewers measured (the profile's `published` table).
//!
//! The procedure is the reviewers': secure erase, precondition with 4K random
//! write at 16T/16Q to steady state, then 4K random write and 4K random read
//! at 16T/16Q.

use crate::run::{Length, Phase, RunError, Session};
use crate::workload::Mix;
use accel::Profile;
use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Figure {
    pub metric: String,
    pub published: Option<f64>,
    pub simulated: f64,
    pub error_percent: Option<f64>,
    /// The tolerance the figure is held to: 10% for IOPS, 15% for latency.
    pub tolerance_percent: f64,
}

impl Figure {
    pub fn within(&self) -> bool {
        self.error_percent.is_none_or(|e| e.abs() <= self.tolerance_percent)
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Calibration {
    pub device: String,
    pub format: String,
    pub scale: u32,
    pub seed: u64,
    pub precondition: Phase,
    pub write: Phase,
    pub read: Phase,
    pub figures: Vec<Figure>,
}

/// Precondition lengths in drive writes: at least `MIN`, at most `CAP`.
pub const PRECONDITION_MIN_DRIVE_WRITES: f64 = 5.0;
pub const PRECONDITION_CAP_DRIVE_WRITES: f64 = 10.0;

pub fn calibrate(
    profile: &Profile,
    format: &str,
    scale: u32,
    seed: u64,
    rounds: u32,
    progress: &mut dyn FnMut(&crate::Progress),
) -> Result<Calibration, RunError> {
    let mut s = Session::new(profile, format, scale, seed, None)?;
    let write = Mix::parse("4k-write").expect("built in");
    let read = Mix::parse("4k-read").expect("built in");
    let pre = s.precondition(&write, PRECONDITION_MIN_DRIVE_WRITES, PRECONDITION_CAP_DRIVE_WRITES, progress)?;
    let length = Length::Duration(rounds as u64 * s.interval_ns);
    let w = s.measure("4k-write", &write, 16, 16, length, progress)?;
    let r = s.measure("4k-read", &read, 16, 16, length, progress)?;
    let p = profile.published.get(format);
    let fig = |metric: &str, published: Option<f64>, simulated: f64, tol: f64| Figure {
        metric: metric.to_string(),
        published,
        simulated,
        error_percent: published.map(|p| (simulated - p) / p * 100.0),
        tolerance_percent: tol,
    };
    let burst = pre.intervals.first().map(|i| i.iops).unwrap_or(0.0);
    let figures = vec![
        fig("4K random write IOPS", p.and_then(|p| p.write_iops_4k), w.summary.write.iops, 10.0),
        fig("4K random write latency avg (ms)", p.and_then(|p| p.write_latency_avg_ms), w.summary.write.latency_avg_ms, 15.0),
        fig("4K random read IOPS", p.and_then(|p| p.read_iops_4k), r.summary.read.iops, 10.0),
        fig("4K random read latency avg (ms)", p.and_then(|p| p.read_latency_avg_ms), r.summary.read.latency_avg_ms, 15.0),
        fig("4K random write burst IOPS (first round)", p.and_then(|p| p.write_burst_iops_4k), burst, 15.0),
    ];
    Ok(Calibration { device: profile.id.clone(), format: format.to_string(), scale, seed, precondition: pre, write: w, read: r, figures })
}
