//! What a run is asked to do (`RunSpec`: device, format, workload, load,
//! phases, faults) and the checks on it, each naming the field and its
//! range.

use card::Profile;
use serde::{Deserialize, Serialize};
use units::{Ns, NS_PER_SEC};

/// The reviewers' load: 16 threads x 16 outstanding I/Os each (256 in
/// flight). Preconditioning, the 4K tests, the PTS IOPS test and `run`'s
/// default all use it.
pub const REVIEWERS_THREADS: u32 = 16;
pub const REVIEWERS_QUEUE_DEPTH: u32 = 16;

/// Round (interval) lengths a user may give, in virtual seconds.
pub const INTERVAL_S_MIN: f64 = 1e-4;
pub const INTERVAL_S_MAX: f64 = 1e5;

/// A round length given by the user, checked.
pub fn interval_ns_of(interval_s: f64) -> Result<Ns, RunError> {
    if interval_s.is_finite() && (INTERVAL_S_MIN..=INTERVAL_S_MAX).contains(&interval_s) {
        Ok((interval_s * NS_PER_SEC as f64).round() as Ns)
    } else {
        Err(RunError::Input(format!("--interval {interval_s}: must be in {INTERVAL_S_MIN}..={INTERVAL_S_MAX} virtual seconds")))
    }
}

/// The most I/Os a measured phase may be asked for: about five hours of
/// simulation at a few million I/Os a wall second.
pub const IOS_MAX: u64 = 100_000_000_000;

/// Rebuild rates a user may give, bytes per second (1 MB/s to 100 GB/s).
pub const REBUILD_RATES: std::ops::RangeInclusive<u64> = 1_000_000..=100_000_000_000;

/// Precondition lengths in drive writes under the SNIA rule: at least
/// `MIN`, at most `CAP`.
pub const PRECONDITION_MIN_DRIVE_WRITES: f64 = 5.0;
pub const PRECONDITION_CAP_DRIVE_WRITES: f64 = 10.0;

#[derive(Debug, Clone, Serialize)]
pub struct RunSpec {
    pub device: String,
    pub format: String,
    pub workload: String,
    pub threads: u32,
    pub queue_depth: u32,
    pub precondition: bool,
    /// Virtual seconds of the measured phase.
    pub duration_s: Option<f64>,
    /// I/Os of the measured phase (instead of a duration).
    pub ios: Option<u64>,
    pub scale: u32,
    pub seed: u64,
    /// Length of one interval (round), virtual seconds.
    pub interval_s: f64,
    /// Preconditioning gives up after this many drive writes.
    pub precondition_cap_drive_writes: f64,
    /// Preconditioning never stops before this many drive writes.
    pub precondition_min_drive_writes: f64,
    /// Precondition for the reviewers' fixed time instead (hours on the
    /// full-size card, the same drive writes on a scaled one).
    #[serde(default)]
    pub precondition_hours: Option<f64>,
    /// Program/erase cycles every block has seen before the run.
    #[serde(default)]
    pub pe_cycles: u32,
    /// Age, in days, of the data on the card when the measured phase
    /// starts (data written during it is fresh).
    #[serde(default)]
    pub age_days: f64,
    /// Dies (or channels) that fail during the measured phase.
    #[serde(default)]
    pub fail: Vec<crate::runs::failure::FailSpec>,
    /// The rebuild's rate, bytes per second (none: the profile's).
    #[serde(default)]
    pub rebuild_bytes_per_sec: Option<u64>,
    /// Die failures and uncorrectable errors drawn at random during the
    /// measured phase, at the profile's field rates times this (none: no
    /// random failures).
    #[serde(default)]
    pub random_faults: Option<f64>,
}

impl RunSpec {
    /// The reviewers' defaults for a device at a scale: 16 threads x 16
    /// queue depth, rounds of 60 s of the full-size device (a scaled device
    /// fills `scale` times sooner, so its rounds are that much shorter:
    /// `card::Scaling::round_ns`).
    pub fn new(profile: &Profile, format: &str, workload: &str, scale: u32, seed: u64) -> RunSpec {
        RunSpec {
            device: profile.id.clone(),
            format: format.to_string(),
            workload: workload.to_string(),
            threads: REVIEWERS_THREADS,
            queue_depth: REVIEWERS_QUEUE_DEPTH,
            precondition: false,
            duration_s: None,
            ios: None,
            scale,
            seed,
            interval_s: profile.scaling(scale).round_s(),
            precondition_cap_drive_writes: PRECONDITION_CAP_DRIVE_WRITES,
            precondition_min_drive_writes: PRECONDITION_MIN_DRIVE_WRITES,
            precondition_hours: None,
            pe_cycles: 0,
            age_days: 0.0,
            fail: Vec::new(),
            rebuild_bytes_per_sec: None,
            random_faults: None,
        }
    }

    /// The preconditioning rule the spec asks for.
    pub fn rule(&self) -> Rule {
        match self.precondition_hours {
            Some(h) => Rule::Hours(h),
            None => Rule::Snia { min_drive_writes: self.precondition_min_drive_writes, cap_drive_writes: self.precondition_cap_drive_writes },
        }
    }
}

/// How preconditioning ends.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// The SNIA PTS rule: steady over the last 5 rounds, after at least
    /// `min_drive_writes`; gives up at `cap_drive_writes`.
    Snia { min_drive_writes: f64, cap_drive_writes: f64 },
    /// The reviewers': a fixed time, in hours, on the full-size card. A
    /// scaled card runs for that time times its capacity's share of the
    /// full card's, which is the same drive writes when the scaled card
    /// keeps the full card's steady state.
    Hours(f64),
}

impl Rule {
    /// The SNIA rule with flashlab's default bounds.
    pub const SNIA_DEFAULT: Rule = Rule::Snia { min_drive_writes: PRECONDITION_MIN_DRIVE_WRITES, cap_drive_writes: PRECONDITION_CAP_DRIVE_WRITES };

    /// The rule in a few words.
    pub fn describe(&self) -> String {
        match *self {
            Rule::Snia { min_drive_writes, cap_drive_writes } => {
                format!("SNIA PTS steady state (5 rounds), {min_drive_writes}..{cap_drive_writes} drive writes")
            }
            Rule::Hours(h) => format!("the reviewers' {h} hours (full-size time)"),
        }
    }

    /// The preconditioning a profile's published steady-state figures came
    /// from: the reviewers' hours where it states them, else `snia`.
    pub fn for_profile(profile: &Profile, snia: Rule) -> Rule {
        profile.precondition_hours.map_or(snia, Rule::Hours)
    }

    pub fn check(&self) -> Result<(), RunError> {
        let bad = match *self {
            Rule::Snia { min_drive_writes: lo, cap_drive_writes: hi } => {
                let ok = lo.is_finite() && hi.is_finite() && (0.0..=hi).contains(&lo) && hi > 0.0 && hi <= 1000.0;
                (!ok).then(|| format!("preconditioning {lo}..{hi} drive writes: the minimum must be in 0..=cap and the cap in (0, 1000]"))
            }
            Rule::Hours(h) => (!(h.is_finite() && h > 0.0 && h <= 1000.0)).then(|| format!("preconditioning for {h} hours: must be in (0, 1000]")),
        };
        bad.map_or(Ok(()), |m| Err(RunError::Input(m)))
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Input(String),
    #[error(transparent)]
    Device(#[from] card::DeviceError),
    #[error(transparent)]
    Workload(#[from] crate::runs::workload::WorkloadError),
    #[error(transparent)]
    Figure(#[from] crate::runs::published::FigureWorkload),
    #[error(transparent)]
    Fit(#[from] card::FitError),
    #[error(transparent)]
    Profile(#[from] card::ProfileError),
    /// A stop was asked for (SIGINT) where a partial result would mislead
    /// (a calibration judges every figure or none).
    #[error("interrupted (SIGINT) before the end: nothing written, and a results file written before is left as it was")]
    Interrupted,
}

/// Checks a spec's numbers, naming the field and its range.
pub fn spec_check(spec: &RunSpec) -> Result<(), RunError> {
    let bad = |m: String| Err(RunError::Input(m));
    if !(1..=1024).contains(&spec.threads) {
        return bad(format!("--threads {}: must be in 1..=1024", spec.threads));
    }
    if !(1..=1024).contains(&spec.queue_depth) {
        return bad(format!("--qd {}: must be in 1..=1024", spec.queue_depth));
    }
    if let Some(d) = spec.duration_s {
        if !(d.is_finite() && d > 0.0 && d <= 1e7) {
            return bad(format!("--duration {d}: must be in (0, 10000000] virtual seconds"));
        }
    }
    if let Some(n) = spec.ios.filter(|n| !(1..=IOS_MAX).contains(n)) {
        return bad(format!("--ios {n}: must be in 1..={IOS_MAX} (about five hours of simulation on one core)"));
    }
    if let (Some(d), Ok(i)) = (spec.duration_s, interval_ns_of(spec.interval_s)) {
        let rounds = d * NS_PER_SEC as f64 / i as f64;
        if rounds > crate::runs::metrics::ROUNDS_MAX as f64 {
            return bad(format!(
                "--duration {d} in rounds of {} s is {rounds:.0} rounds, more than the {} a run keeps: lengthen --interval",
                spec.interval_s,
                crate::runs::metrics::ROUNDS_MAX
            ));
        }
    }
    if let (Some(d), None) = (spec.duration_s, spec.ios) {
        if let Some(f) = spec.fail.iter().find(|f| f.at_s >= d) {
            return bad(format!(
                "--fail-die {}@{}: the measured phase ends at {d} s, before it: nothing would fail (fail it earlier, or run longer)",
                f.target, f.at_s
            ));
        }
    }
    card::Age { pe_cycles: spec.pe_cycles, age_days: spec.age_days }.check().map_err(|e| RunError::Input(e.to_string()))?;
    if let Some(r) = spec.rebuild_bytes_per_sec.filter(|r| !REBUILD_RATES.contains(r)) {
        return bad(format!("--rebuild-rate {} MB/s: must be in 1..=100000", r as f64 / 1e6));
    }
    if let Some(x) = spec.random_faults.filter(|x| !(x.is_finite() && *x > 0.0 && *x <= 1e12)) {
        return bad(format!("--random-faults {x}: must be a multiple of the field rates in (0, 1e12]"));
    }
    spec.rule().check()
}
