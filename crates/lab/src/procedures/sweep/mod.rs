//! Design-space sweeps: a base run and axes (a card's profile numbers by
//! their path, the format, the workload, threads, queue depth, seed), as a
//! grid of every combination or a list taken in step; each point a run of
//! its own, deterministic, its results file written whole, so a sweep
//! resumes where it stopped and its points can run anywhere (this
//! machine's cores, a cluster's job array) and be collected after.
//!
//! The file (TOML):
//!
//! ```toml
//! [base]
//! device = "flashmax2"     # a catalog id or a profile file (beside the sweep file)
//! format = "stock"
//! scale = 64
//! procedure = "run"        # or "review", with profiles = ["4k", "8k7030", ...]
//! workload = "4k-write"
//! threads = 16
//! qd = 16
//! precondition = true
//! duration = 5             # virtual seconds measured
//! seed = 1
//!
//! [axes]                   # in their names' order; a grid's last fastest
//! mode = "grid"            # or "list": the axes taken in step
//! format = ["1800GB", "2000GB", "2222GB"]
//! workload = ["4k-write", "8k-7030"]
//! "controller.program_path_bytes_per_sec" = [600e6, 900e6]
//! ```

use crate::procedures::job::{jobs_of, ReviewSpec};
use crate::procedures::review::ReviewResults;
use crate::runs::run::RunResult;
use crate::runs::spec::RunSpec;
use card::Profile;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub mod collect;
pub mod points;

/// A sweep file that is not one, or a point of it that cannot run.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// Reading the file, or what is wrong in it.
    #[error("{file}: {why}")]
    File { file: String, why: Box<SweepError> },
    #[error("{0}")]
    Unreadable(std::io::Error),
    #[error("{0}")]
    Toml(String),
    #[error("unknown section [{0}]: a sweep has [base] and [axes]")]
    UnknownSection(String),
    #[error("no [{0}] section")]
    NoSection(&'static str),
    #[error("[base]: {0}")]
    Base(String),
    #[error("axes.mode {0}: \"grid\" or \"list\"")]
    Mode(String),
    #[error("axes.points_max {0}: a whole number in 1..={POINTS_LIMIT}")]
    PointsMax(String),
    #[error("axis {0}: a list of one value or more")]
    EmptyAxis(String),
    #[error("[axes] names no axis")]
    NoAxis,
    #[error("[axes]: {points} points, more than the {max} this sweep allows: give fewer values, split it into several sweep files, or raise the bound with `points_max = N` in [axes] (at most {POINTS_LIMIT})")]
    TooMany { points: String, max: usize },
    #[error("mode = \"list\": axis {name} has {len} values, {first} has {count}")]
    ListLength { name: String, len: usize, first: String, count: usize },
    /// What is wrong with one point, and which.
    #[error("point {index}: {why}")]
    Point { index: usize, why: Box<SweepError> },
    #[error("the sweep has {count} points (0 to {})", count.saturating_sub(1))]
    NoSuchPoint { count: usize },
    /// An axis's value not of the kind its setting takes.
    #[error("{name} = {value}: {want}")]
    Value { name: String, value: String, want: String },
    #[error("axis {path}: {why}; run settings are {}", RUN_AXES.join(", "))]
    Axis { path: String, why: card::FitError },
    #[error(transparent)]
    Profile(#[from] card::ProfileError),
    #[error(transparent)]
    Device(#[from] card::DeviceError),
    #[error("a review runs its profiles' own workloads, threads and lengths: no workload, duration, threads or qd")]
    ReviewSettings,
    #[error("profiles are a review's: a run has a workload")]
    RunProfiles,
    #[error("a run needs a workload ([base] workload or an axis)")]
    NoWorkload,
    #[error("workload {workload}: {why}")]
    Workload { workload: String, why: crate::runs::workload::WorkloadError },
    #[error(transparent)]
    Run(#[from] crate::runs::run::RunError),
    /// A point's results file with no measured phase.
    #[error("{0}: no measured phase")]
    NoPhase(String),
}

impl SweepError {
    fn value(name: &str, value: &toml::Value, want: impl Into<String>) -> SweepError {
        SweepError::Value { name: name.to_string(), value: value.to_string(), want: want.into() }
    }
}

/// A sweep file's base run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Base {
    pub device: String,
    /// The host the card runs on (`hosts/`; absent: the profile's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    pub format: Option<String>,
    #[serde(default = "default_scale")]
    pub scale: u32,
    /// `run` (one workload at threads x qd) or `review` (the reviewers'
    /// procedure over `profiles`).
    #[serde(default)]
    pub procedure: Procedure,
    /// A run's workload.
    pub workload: Option<String>,
    /// A review's profiles (`4k`, `8k-7030`, `fileserver`, `webserver`,
    /// `sequential`).
    #[serde(default)]
    pub profiles: Vec<String>,
    #[serde(default = "default_16")]
    pub threads: u32,
    #[serde(default = "default_16")]
    pub qd: u32,
    #[serde(default)]
    pub precondition: bool,
    /// Virtual seconds measured.
    pub duration: Option<f64>,
    #[serde(default = "default_seed")]
    pub seed: u64,
}

fn default_scale() -> u32 {
    64
}
fn default_16() -> u32 {
    16
}
fn default_seed() -> u64 {
    1
}

/// What each point runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Procedure {
    #[default]
    Run,
    Review,
}

/// How the axes make points.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Every combination of the axes' values, the axes in their names'
    /// order, the last fastest.
    Grid,
    /// The axes' values taken in step (every axis as long).
    List,
}

/// A sweep: its base, its axes in the file's order, its points.
#[derive(Debug, Clone)]
pub struct Sweep {
    pub file: PathBuf,
    pub base: Base,
    pub mode: Mode,
    pub axes: Vec<(String, Vec<toml::Value>)>,
    /// How many points the axes make (each made when wanted, `values`).
    count: usize,
}

/// What a planned point runs.
#[derive(Debug, Clone)]
pub enum Work {
    Run(RunSpec),
    Review(ReviewSpec),
}

/// A point made ready to run: its profile (axes applied) and run.
#[derive(Debug, Clone)]
pub struct Planned {
    pub index: usize,
    pub settings: BTreeMap<String, toml::Value>,
    pub profile: Profile,
    pub format: String,
    pub scale: u32,
    pub work: Work,
    /// The card's maps, bytes (the run's memory, about).
    pub memory_bytes: u64,
    /// An upper bound on the run's wall time, s (`time_bound_s`).
    pub time_bound_s: f64,
}

/// The simulator's speed the time bound assumes, I/Os a second: a
/// quarter of what `flashlab bench` measures on a 2-core machine.
const SIM_IOS_PER_S_LOW: f64 = 1e6;
/// The most I/Os a second any catalog card runs in a measured phase.
const CARD_IOPS_HIGH: f64 = 1.5e6;

/// An upper bound on a run's wall time, s: preconditioning to its cap in
/// 4 KiB writes and the measured phase at a card's highest rate, at a
/// quarter of the simulator's measured speed, plus the card's making.
pub fn time_bound_s(spec: &RunSpec, capacity_bytes: u64) -> f64 {
    let precondition = if spec.precondition { spec.precondition_cap_drive_writes * capacity_bytes as f64 / 4096.0 } else { 0.0 };
    let measured = spec.duration_s.unwrap_or(5.0 * spec.interval_s) * CARD_IOPS_HIGH;
    5.0 + (precondition + measured) / SIM_IOS_PER_S_LOW
}

/// What a point measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Output {
    Run(Box<RunResult>),
    Review(Box<ReviewResults>),
}

/// A point's results file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointResult {
    pub kind: String,
    pub index: usize,
    pub settings: BTreeMap<String, toml::Value>,
    pub output: Output,
}

pub const POINT_KIND: &str = "flashlab sweep point";

/// The most points a sweep holds unless its file asks for more
/// (`[axes] points_max = N`): every point is checked before any runs,
/// one at a time, so a sweep's cost is its points'.
pub const POINTS_MAX: usize = 10_000;

/// The most a sweep file may ask for.
pub const POINTS_LIMIT: usize = 10_000_000;

/// What planning every point found: how many, and the most memory and
/// time one takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanSummary {
    pub points: usize,
    pub memory_bytes_max: u64,
    pub time_bound_s_max: f64,
}

/// The run settings an axis may name besides a profile number's path.
const RUN_AXES: [&str; 7] = ["device", "host", "format", "workload", "threads", "qd", "seed"];

impl Sweep {
    /// Reads a sweep file; every point is checked by `plan`.
    pub fn load(file: &Path) -> Result<Sweep, SweepError> {
        let at = |why: SweepError| SweepError::File { file: file.display().to_string(), why: Box::new(why) };
        let text = card::input::read_text(file, card::input::SMALL_BYTES_MAX).map_err(|e| at(SweepError::Unreadable(e)))?;
        Sweep::parse(file, &text).map_err(at)
    }

    pub fn parse(file: &Path, text: &str) -> Result<Sweep, SweepError> {
        let v: toml::Table = text.parse().map_err(|e: toml::de::Error| SweepError::Toml(e.message().to_string()))?;
        if let Some(k) = v.keys().find(|k| *k != "base" && *k != "axes") {
            return Err(SweepError::UnknownSection(k.clone()));
        }
        let base = v.get("base").ok_or(SweepError::NoSection("base"))?.clone();
        let base: Base = base.try_into().map_err(|e: toml::de::Error| SweepError::Base(e.message().to_string()))?;
        let mut axes = Vec::new();
        let mut mode = Mode::Grid;
        let mut points_max = POINTS_MAX;
        for (name, values) in v.get("axes").and_then(|a| a.as_table()).ok_or(SweepError::NoSection("axes"))? {
            if name == "mode" {
                mode = values.clone().try_into().map_err(|_| SweepError::Mode(values.to_string()))?;
                continue;
            }
            if name == "points_max" {
                points_max = values
                    .as_integer()
                    .and_then(|n| usize::try_from(n).ok())
                    .filter(|n| (1..=POINTS_LIMIT).contains(n))
                    .ok_or_else(|| SweepError::PointsMax(values.to_string()))?;
                continue;
            }
            let list = values.as_array().filter(|l| !l.is_empty()).ok_or_else(|| SweepError::EmptyAxis(name.clone()))?;
            axes.push((name.clone(), list.clone()));
        }
        if axes.is_empty() {
            return Err(SweepError::NoAxis);
        }
        let count = match mode {
            Mode::Grid => axes.iter().try_fold(1usize, |n, (_, v)| n.checked_mul(v.len())),
            Mode::List => Some(axes[0].1.len()),
        };
        let count = match count {
            Some(n) if n <= points_max => n,
            n => return Err(SweepError::TooMany { points: n.map_or("more than 2^64".to_string(), |n| n.to_string()), max: points_max }),
        };
        if mode == Mode::List {
            if let Some((name, vals)) = axes.iter().find(|(_, v)| v.len() != count) {
                return Err(SweepError::ListLength { name: name.clone(), len: vals.len(), first: axes[0].0.clone(), count });
            }
        }
        Ok(Sweep { file: file.to_path_buf(), base, mode, axes, count })
    }

    /// How many points the sweep has.
    pub fn point_count(&self) -> usize {
        self.count
    }

    /// Point `index`'s value of each axis, by the axes' order: a grid's
    /// last axis fastest, a list's values in step.
    pub fn values(&self, index: usize) -> Option<Vec<toml::Value>> {
        if index >= self.count {
            return None;
        }
        Some(match self.mode {
            Mode::List => self.axes.iter().map(|(_, v)| v[index].clone()).collect(),
            Mode::Grid => {
                let mut rest = index;
                let mut vals: Vec<toml::Value> = self
                    .axes
                    .iter()
                    .rev()
                    .map(|(_, v)| {
                        let x = v[rest % v.len()].clone();
                        rest /= v.len();
                        x
                    })
                    .collect();
                vals.reverse();
                vals
            }
        })
    }

    /// A device: a catalog id, or a profile file beside the sweep file.
    fn profile_of(&self, device: &str) -> Result<Profile, card::ProfileError> {
        let beside = self.file.parent().unwrap_or(Path::new(".")).join(device);
        let device = if device.ends_with(".toml") && beside.exists() { beside.display().to_string() } else { device.to_string() };
        card::profile_load(&device)
    }

    /// Point `index` made ready: axes applied and the card checked; an
    /// error names the point and its axis.
    pub fn plan(&self, index: usize) -> Result<Planned, SweepError> {
        self.plan_point(index).map_err(|why| SweepError::Point { index, why: Box::new(why) })
    }

    fn plan_point(&self, index: usize) -> Result<Planned, SweepError> {
        let values = self.values(index).ok_or(SweepError::NoSuchPoint { count: self.count })?;
        let b = &self.base;
        let axis = |name: &str| self.axes.iter().position(|a| a.0 == name).map(|i| &values[i]);
        let device = match axis("device") {
            Some(v) => v.as_str().ok_or_else(|| SweepError::value("device", v, "a catalog id or a profile file"))?.to_string(),
            None => b.device.clone(),
        };
        let mut profile = self.profile_of(&device)?;
        let (mut format, mut workload, mut threads, mut qd, mut seed) =
            (b.format.clone().unwrap_or_else(|| profile.default_format.clone()), b.workload.clone(), b.threads, b.qd, b.seed);
        let mut host = b.host.clone();
        let mut settings = BTreeMap::new();
        for ((name, _), v) in self.axes.iter().zip(values) {
            settings.insert(name.clone(), v.clone());
            let text = || v.as_str().map(str::to_string).ok_or_else(|| SweepError::value(name, &v, "a string"));
            let whole = || v.as_integer().filter(|&i| i > 0).ok_or_else(|| SweepError::value(name, &v, "a whole number above 0"));
            match name.as_str() {
                "device" => {}
                "host" => host = Some(text()?),
                "format" => format = text()?,
                "workload" => workload = Some(text()?),
                "threads" | "qd" => {
                    let n = u32::try_from(whole()?).map_err(|_| SweepError::value(name, &v, format!("at most {}", u32::MAX)))?;
                    *(if name == "threads" { &mut threads } else { &mut qd }) = n;
                }
                "seed" => seed = whole()?.unsigned_abs(),
                path => {
                    let x = v.as_float().or_else(|| v.as_integer().map(|i| i as f64)).ok_or_else(|| SweepError::value(path, &v, "a number"))?;
                    profile.number(path).map_err(|why| SweepError::Axis { path: path.to_string(), why })?;
                    profile = profile.with_number(path, x)?;
                }
            }
        }
        if let Some(h) = host {
            profile = profile.on_host(&card::host_load(&h)?)?;
        }
        card::Device::validate(&profile, &format, b.scale)?;
        let memory_bytes = card::Device::map_bytes(&profile, &format, b.scale)?;
        let capacity = card::Device::capacity_of(&profile, &format, b.scale)?;
        let (work, time_bound_s) = match b.procedure {
            Procedure::Run => self.run_work(&profile, &format, workload, (threads, qd, seed), capacity)?,
            Procedure::Review => {
                if workload.is_some() || b.duration.is_some() || settings.contains_key("threads") || settings.contains_key("qd") {
                    return Err(SweepError::ReviewSettings);
                }
                self.review_work(&profile, &format, seed, capacity)?
            }
        };
        Ok(Planned { index, settings, profile, format, scale: b.scale, work, memory_bytes, time_bound_s })
    }

    /// A point's run, checked as `run` checks it, and a bound on its time.
    fn run_work(
        &self,
        profile: &Profile,
        format: &str,
        workload: Option<String>,
        (threads, qd, seed): (u32, u32, u64),
        capacity: u64,
    ) -> Result<(Work, f64), SweepError> {
        let b = &self.base;
        if !b.profiles.is_empty() {
            return Err(SweepError::RunProfiles);
        }
        let workload = workload.ok_or(SweepError::NoWorkload)?;
        crate::runs::workload::Mix::parse(&workload).map_err(|why| SweepError::Workload { workload: workload.clone(), why })?;
        let mut spec = RunSpec::new(profile, format, &workload, b.scale, seed);
        (spec.threads, spec.queue_depth, spec.precondition, spec.duration_s) = (threads, qd, b.precondition, b.duration);
        // The checks `run` makes, made here: a plan passes only what its
        // run takes.
        crate::runs::spec::spec_check(&spec)?;
        let t = time_bound_s(&spec, capacity);
        Ok((Work::Run(spec), t))
    }

    /// A point's review of one profile, its jobs checked, and a bound on
    /// its time.
    fn review_work(&self, profile: &Profile, format: &str, seed: u64, capacity: u64) -> Result<(Work, f64), SweepError> {
        let b = &self.base;
        let mut spec = ReviewSpec::new(vec![profile.id.clone()], b.scale, seed);
        spec.formats = Some(vec![format.to_string()]);
        if !b.profiles.is_empty() {
            spec.profiles = b.profiles.clone();
        }
        jobs_of(&spec, std::slice::from_ref(profile))?;
        // Each profile: preconditioning to its cap, then about 45 rounds
        // of tests at a card's highest rate.
        let round_s = profile.scaling(b.scale).round_s();
        let per = spec.precondition_cap_drive_writes * capacity as f64 / 4096.0 + 45.0 * round_s * CARD_IOPS_HIGH;
        let t = 5.0 + spec.profiles.len() as f64 * per / SIM_IOS_PER_S_LOW;
        Ok((Work::Review(spec), t))
    }

    /// Point `index`'s settings: each axis's value there.
    pub fn settings_of(&self, index: usize) -> BTreeMap<String, toml::Value> {
        self.axes.iter().map(|a| a.0.clone()).zip(self.values(index).expect("a point of the sweep")).collect()
    }

    /// Every point checked; the first bad one's error.
    pub fn plan_all(&self) -> Result<PlanSummary, SweepError> {
        self.plan_each(|_| {})
    }

    /// Every point checked, one at a time (none held after), each given
    /// to `each`; the first bad one's error.
    pub fn plan_each(&self, mut each: impl FnMut(&Planned)) -> Result<PlanSummary, SweepError> {
        let mut sum = PlanSummary { points: self.count, memory_bytes_max: 0, time_bound_s_max: 0.0 };
        for i in 0..self.count {
            let p = self.plan(i)?;
            sum.memory_bytes_max = sum.memory_bytes_max.max(p.memory_bytes);
            sum.time_bound_s_max = sum.time_bound_s_max.max(p.time_bound_s);
            each(&p);
        }
        Ok(sum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
[base]
device = "p420m"
scale = 1024
workload = "4k-write"
duration = 0.2

[axes]
workload = ["4k-write", "8k-7030"]
"controller.program_path_bytes_per_sec" = [600e6, 900e6, 1200e6]
"#;

    #[test]
    fn a_grid_is_every_combination_the_last_axis_fastest() {
        let s = Sweep::parse(Path::new("s.toml"), FILE).unwrap();
        assert_eq!(s.point_count(), 6);
        // Axes in their names' order: the program path, then the
        // workload (fastest).
        let p = s.plan(3).unwrap();
        let Work::Run(spec) = &p.work else { panic!("a run") };
        assert_eq!(spec.workload, "8k-7030");
        assert_eq!(p.profile.controller.program_path_bytes_per_sec, 900_000_000);
        assert_eq!((spec.threads, spec.queue_depth, spec.scale, spec.format.as_str()), (16, 16, 1024, "stock"));
        assert!(p.memory_bytes > 0);
        let list = Sweep::parse(Path::new("s.toml"), &FILE.replace("[axes]", "[axes]\nmode = \"list\"")).unwrap_err().to_string();
        assert_eq!(list, "mode = \"list\": axis workload has 2 values, controller.program_path_bytes_per_sec has 3");
    }

    #[test]
    fn a_review_sweep_runs_its_profiles_and_takes_no_run_settings() {
        let review = "[base]\nprocedure = \"review\"\ndevice = \"p420m\"\nscale = 1024\nprofiles = [\"4k\"]\n\n[axes]\ndevice = [\"p420m\", \"mx6300\"]\n";
        let s = Sweep::parse(Path::new("s.toml"), review).unwrap();
        let p = s.plan(1).unwrap();
        let Work::Review(spec) = &p.work else { panic!("a review") };
        assert_eq!((p.profile.id.as_str(), spec.profiles.clone(), spec.formats.clone()), ("mx6300", vec!["4k".to_string()], Some(vec!["stock".to_string()])));
        let bad = |text: &str| Sweep::parse(Path::new("s.toml"), text).unwrap().plan(0).unwrap_err().to_string();
        assert!(bad(&review.replace("profiles = [\"4k\"]", "workload = \"4k-write\"")).contains("a review runs its profiles' own workloads"));
        assert!(bad(&review.replace("\"4k\"]", "\"4k\", \"8k-7030\"]")).contains("unknown profile '8k-7030'"));
        assert!(bad(&review.replace("procedure = \"review\"", "procedure = \"run\"")).contains("profiles are a review's"));
        assert!(bad(&review.replace("procedure = \"review\"\n", "").replace("profiles = [\"4k\"]\n", "")).contains("a run needs a workload"));
    }

    #[test]
    fn a_sweep_past_its_bound_is_refused_unless_its_file_raises_it() {
        let wide = |extra: &str| {
            format!(
                "[base]\ndevice = \"p420m\"\nscale = 1024\nworkload = \"4k-write\"\n\n[axes]\n{extra}seed = [{}]\nqd = [1, 2]\n",
                (1..=5001).map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
            )
        };
        let e = Sweep::parse(Path::new("s.toml"), &wide("")).unwrap_err().to_string();
        assert!(e.contains("10002 points, more than the 10000 this sweep allows") && e.contains("points_max"), "{e}");
        let s = Sweep::parse(Path::new("s.toml"), &wide("points_max = 20000\n")).unwrap();
        assert_eq!(s.point_count(), 10002);
        // The axes in their names' order (qd, seed), the last fastest,
        // each point made when wanted.
        assert_eq!(s.values(3), Some(vec![toml::Value::Integer(1), toml::Value::Integer(4)]));
        assert_eq!(s.values(10001), Some(vec![toml::Value::Integer(2), toml::Value::Integer(5001)]));
        assert_eq!(s.values(10002), None);
        assert!(Sweep::parse(Path::new("s.toml"), &wide("points_max = 0\n")).unwrap_err().to_string().contains("axes.points_max 0"));
    }

    #[test]
    fn a_bad_point_is_named_with_its_axis() {
        let bad =
            |from: &str, to: &str| Sweep::parse(Path::new("s.toml"), &FILE.replace(from, to)).and_then(|s| s.plan_all().map(|_| ())).unwrap_err().to_string();
        assert!(bad("\"8k-7030\"", "\"8k-70x30\"").starts_with("point 1: workload 8k-70x30"), "{}", bad("\"8k-7030\"", "\"8k-70x30\""));
        assert!(bad("\"controller.program", "\"controller.nothing").contains("point 0: axis controller.nothing"));
        assert!(bad("1200e6", "1.0").starts_with("point 4: profile p420m: controller.program_path_bytes_per_sec = 1: must be in"), "{}", bad("1200e6", "1.0"));
        assert!(bad("workload = [", "threads = [0, ").contains("threads = 0: a whole number above 0"), "{}", bad("workload = [", "threads = [0, "));
        assert_eq!(bad("[axes]", "[axis]"), "unknown section [axis]: a sweep has [base] and [axes]");
        assert!(bad("duration = 0.2", "duration = 0.2\nqd_typo = 3").starts_with("[base]: unknown field `qd_typo`"));
        assert!(Sweep::parse(Path::new("s.toml"), FILE).unwrap().plan(6).unwrap_err().to_string().contains("the sweep has 6 points (0 to 5)"));
    }
}
