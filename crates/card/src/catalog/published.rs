//! Published figures a profile carries: what reviewers measured on the real
//! card and what its vendor rates it at, each with the conditions it was
//! measured under, so that a simulated run under the same conditions can be
//! set beside it (see `lab::published`).

use serde::{Deserialize, Serialize};

/// Who published a figure. Reviewers' measurements are the calibration
/// targets; vendor ratings are a second set of checks, and where the two
/// cannot both hold the reviewers win (the figure says why, in `conflict`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum By {
    Reviewer,
    Vendor,
}

/// The card's state when the figure was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// Fresh out of the box: the first round of the workload on a
    /// secure-erased card (the reviewers' "burst"). A sequential write
    /// figure is measured over the card's first fill.
    Fresh,
    /// Filled once with 128 KiB sequential writes, then left idle: the
    /// state in which vendors rate reads and queue-depth-1 latencies.
    Filled,
    /// Preconditioned with the workload's preconditioner at 16T/16Q (the
    /// reviewers' hours where the profile gives them, else the SNIA rule).
    Steady,
}

/// What is measured, with its unit. Latencies are over all I/Os of the
/// workload (for a pure read or write workload, that direction's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    Iops,
    /// Decimal megabytes (10^6 bytes) per second, as vendors rate them.
    MbPerS,
    LatencyAvgMs,
    LatencyAvgUs,
    LatencyMaxMs,
    LatencyStdMs,
}

impl Metric {
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Iops => "IOPS",
            Metric::MbPerS => "MB/s",
            Metric::LatencyAvgMs => "ms avg",
            Metric::LatencyAvgUs => "us avg",
            Metric::LatencyMaxMs => "ms max",
            Metric::LatencyStdMs => "ms std dev",
        }
    }

    /// Whether more is better (throughput) or less (latency).
    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::Iops | Metric::MbPerS)
    }

    /// The values a figure of this metric may take: what a storage device
    /// can measure, from one I/O a second or 100 ns to a billion I/Os a
    /// second or about 11 days; outside them a figure is a typing slip
    /// (a unit, an exponent).
    pub fn believable(self) -> (f64, f64) {
        match self {
            Metric::Iops => (1.0, 1e9),
            Metric::MbPerS => (1e-3, 1e7),
            Metric::LatencyAvgMs | Metric::LatencyMaxMs => (1e-4, 1e6),
            Metric::LatencyAvgUs => (0.1, 1e9),
            // A spread may be far below the average, never below 1 ns.
            Metric::LatencyStdMs => (1e-6, 1e6),
        }
    }
}

/// How the publisher states the figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// A measured or typical value: the model must come within tolerance.
    #[default]
    About,
    /// "Up to" (throughput) or "under" (latency): the model may fall short
    /// of it, not beyond it by more than the tolerance.
    UpTo,
    Under,
}

fn sixteen() -> u32 {
    16
}

/// One published figure and the conditions it was measured under.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Published {
    pub by: By,
    /// The review, datasheet or product brief, by name and date.
    pub source: String,
    /// What the figure is, in the publisher's words.
    pub what: String,
    /// The format it was measured on (default: the profile's default).
    #[serde(default)]
    pub format: Option<String>,
    /// A workload as `flashlab run --workload` takes it.
    pub workload: String,
    #[serde(default = "sixteen")]
    pub threads: u32,
    #[serde(default = "sixteen")]
    pub qd: u32,
    pub state: State,
    pub metric: Metric,
    pub value: f64,
    /// The spread the publisher gives ("53,700-55,500"), where it gives
    /// one: the error is measured from the nearer end.
    #[serde(default)]
    pub range: Option<[f64; 2]>,
    #[serde(default)]
    pub bound: Bound,
    /// Vendor figures only: the physical reason the figure cannot hold
    /// together with the reviewers' measurements, when it cannot.
    #[serde(default)]
    pub conflict: Option<String>,
    /// The host it was measured on, by id or short name (`hosts/`):
    /// absent, the reviewers' Linux server (vendors' ratings are taken as
    /// measured there too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Reviewer figures only: a gap the model is known to have (the
    /// mechanism it lacks), when it misses the figure. Shown as a miss
    /// with its reason and not a failure; a mark on a figure the model
    /// meets is stale (the calibration tests refuse it).
    #[serde(default)]
    pub gap: Option<String>,
}

impl Published {
    /// The format it applies to on a profile whose default is `default`.
    pub fn format_or<'a>(&'a self, default: &'a str) -> &'a str {
        self.format.as_deref().unwrap_or(default)
    }

    /// The id of the host it was measured on (`host`, its short name
    /// resolved; absent, the reviewers' Linux server).
    pub fn host_id(&self) -> &str {
        crate::catalog::host::host_id(self.host.as_deref())
    }

    /// Checks the figure's own fields; the error names the field.
    /// Whether `other` measures what this figure does: the same
    /// publisher, format, workload, load, state and metric.
    pub fn same_measurement(&self, other: &Published) -> bool {
        (self.by, &self.format, &self.workload, self.threads, self.qd, self.state, self.metric, self.host_id())
            == (other.by, &other.format, &other.workload, other.threads, other.qd, other.state, other.metric, other.host_id())
    }

    pub fn validate(&self) -> Result<(), (String, String, String)> {
        let bad = |field: &str, value: String, range: &str| Err((field.to_string(), value, range.to_string()));
        let (lo, hi) = self.metric.believable();
        if !(self.value.is_finite() && (lo..=hi).contains(&self.value)) {
            return bad("value", self.value.to_string(), &format!("a number of {} in {lo:e}..={hi:e}", self.metric.unit()));
        }
        if let Some([lo, hi]) = self.range {
            if !(lo.is_finite() && hi.is_finite() && 0.0 < lo && lo <= self.value && self.value <= hi) {
                return bad("range", format!("[{lo}, {hi}]"), "[low, high] with 0 < low <= value <= high");
            }
        }
        if !(1..=1024).contains(&self.threads) {
            return bad("threads", self.threads.to_string(), "in 1..=1024");
        }
        if !(1..=1024).contains(&self.qd) {
            return bad("qd", self.qd.to_string(), "in 1..=1024");
        }
        if self.conflict.is_some() && self.by == By::Reviewer {
            return bad("conflict", "given".into(), "absent on a reviewer's figure (the reviewers' figures are the targets)");
        }
        if self.gap.is_some() && self.by == By::Vendor {
            return bad("gap", "given".into(), "absent on a vendor's figure (a vendor figure the model cannot meet is a conflict, with its reason)");
        }
        if self.bound == Bound::UpTo && !self.metric.higher_is_better() {
            return bad("bound", "up_to".into(), "'under' for a latency");
        }
        if self.bound == Bound::Under && self.metric.higher_is_better() {
            return bad("bound", "under".into(), "'up_to' for a throughput");
        }
        if let Some(h) = &self.host {
            if let Err(e) = crate::catalog::host::host_load(h) {
                return bad("host", h.clone(), &format!("a host by id, short name or file ({e})"));
            }
        }
        if self.source.trim().is_empty() || self.what.trim().is_empty() {
            return bad("source", "empty".into(), "the publication and what it measured");
        }
        Ok(())
    }
}
