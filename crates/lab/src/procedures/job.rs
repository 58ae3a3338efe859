//! What a review runs: its settings (`ReviewSpec`), the reviewers' test
//! profiles, and the jobs (device x format x profile, or the SNIA PTS per
//! device and format) with the events they report. Both procedures, the
//! reviewers' (`review`) and the PTS (`pts`), run these jobs.

use crate::runs::run::{Progress, Rule, RunError};
use card::Profile;
use serde::{Deserialize, Serialize};

/// The main tests a profile gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tests {
    /// 100% write then 100% read, 4 KiB, at 16T/16Q.
    FourK,
    /// The profile's mix at threads {2, 4, 8, 16} x queue depth {2, 4, 8, 16}.
    Matrix,
    /// 128 KiB and 64 KiB sequential read, then write, at 16T/16Q, on a
    /// card filled sequentially (`SEQUENTIAL_TESTS`), as vendors rate it.
    Sequential,
}

/// A profile of the procedure.
#[derive(Debug, Clone, Copy)]
pub struct ReviewProfile {
    pub name: &'static str,
    pub title: &'static str,
    /// The workload of the main tests (a name of `workload::NAMED`).
    pub workload: &'static str,
    pub tests: Tests,
}

pub const PROFILES: &[ReviewProfile] = &[
    ReviewProfile { name: "4k", title: "4K random", workload: "4k-write", tests: Tests::FourK },
    ReviewProfile { name: "8k7030", title: "8K 70/30", workload: "8k-7030", tests: Tests::Matrix },
    ReviewProfile { name: "fileserver", title: "File Server", workload: "fileserver", tests: Tests::Matrix },
    ReviewProfile { name: "webserver", title: "Web Server", workload: "webserver", tests: Tests::Matrix },
    ReviewProfile { name: "seq", title: "Sequential", workload: "128k-seq-write", tests: Tests::Sequential },
];

/// The sequential tests, in the order run (reads first, as vendors rate
/// a filled card): test name and workload. A sequential workload is one
/// stream over the card, all threads x queue depth I/Os in flight.
pub const SEQUENTIAL_TESTS: [(&str, &str); 4] =
    [("128K read", "128k-seq-read"), ("64K read", "64k-seq-read"), ("128K write", "128k-seq-write"), ("64K write", "64k-seq-write")];

/// The sequential profile's preconditioning: the SNIA PTS's
/// workload-independent one, twice the capacity in 128 KiB sequential
/// writes, after which the card is filled (`card::State::Filled`).
pub const SEQUENTIAL_FILL_DRIVE_WRITES: u64 = 2;

pub const MATRIX_THREADS: [u32; 4] = [2, 4, 8, 16];
pub const MATRIX_QUEUE_DEPTHS: [u32; 4] = [2, 4, 8, 16];

pub fn profile_find(name: &str) -> Result<&'static ReviewProfile, RunError> {
    PROFILES
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| RunError::Input(format!("unknown profile '{name}': expected one of {}", PROFILES.iter().map(|p| p.name).collect::<Vec<_>>().join(", "))))
}

/// Every setting of a review; stored whole in the results file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ReviewSpec {
    pub devices: Vec<String>,
    /// Formats to review; `None`: every named format of each device.
    pub formats: Option<Vec<String>>,
    pub profiles: Vec<String>,
    pub scale: u32,
    pub seed: u64,
    /// Length of one round (interval), virtual seconds; `None`: each
    /// device's own round for the scale (`card::Scaling::round_ns`).
    #[serde(default)]
    pub interval_s: Option<f64>,
    /// Rounds of each 4K main test.
    pub rounds_4k: u32,
    /// Rounds of each thread/queue point.
    pub rounds_matrix: u32,
    pub precondition_min_drive_writes: f64,
    pub precondition_cap_drive_writes: f64,
    /// Precondition every job by the SNIA rule (the two fields above) even
    /// where the profile gives the reviewers' hours.
    #[serde(default)]
    pub snia_precondition: bool,
    /// The SNIA PTS sequence instead of the reviewers' (see `pts`).
    #[serde(default)]
    pub pts: bool,
    /// The PTS version followed (results of before it: PTS-E 1.1).
    #[serde(default = "pts_version_before")]
    pub pts_version: PtsVersion,
    /// Dies (or channels) that fail in a last phase of every review job,
    /// after its main tests (seconds from that phase's start).
    #[serde(default)]
    pub fail: Vec<crate::runs::failure::FailSpec>,
    /// The rebuild's rate, bytes per second (none: each profile's).
    #[serde(default)]
    pub rebuild_bytes_per_sec: Option<u64>,
    /// The hosts every device is reviewed on, each its own jobs (ids or
    /// files); empty: each device on its profile's host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
}

/// Which PTS a `--pts` review follows (`procedures::pts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum PtsVersion {
    /// PTS 2.0.2 (SNIA Standard, October 2020): three tracking variables
    /// in the IOPS test.
    #[default]
    #[serde(rename = "2.0.2")]
    V2_0_2,
    /// PTS-E 1.1 (2013): RND 4KiB 100% write IOPS alone.
    #[serde(rename = "1.1")]
    V1_1,
}

/// A PTS version this build does not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--pts-version {0}: 2.0.2 (the default) or 1.1")]
pub struct PtsVersionError(pub String);

impl PtsVersion {
    pub fn parse(s: &str) -> Result<PtsVersion, PtsVersionError> {
        match s {
            "2.0.2" | "2" | "2.0" => Ok(PtsVersion::V2_0_2),
            "1.1" | "1" => Ok(PtsVersion::V1_1),
            other => Err(PtsVersionError(other.to_string())),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PtsVersion::V2_0_2 => "PTS 2.0.2",
            PtsVersion::V1_1 => "PTS-E 1.1",
        }
    }
}

fn pts_version_before() -> PtsVersion {
    PtsVersion::V1_1
}

impl ReviewSpec {
    fn snia_rule(&self) -> Rule {
        Rule::Snia { min_drive_writes: self.precondition_min_drive_writes, cap_drive_writes: self.precondition_cap_drive_writes }
    }

    /// How a device is preconditioned: for the reviewers' hours where its
    /// profile gives them (their published figures came after those), else
    /// by the SNIA rule.
    pub fn rule_for(&self, profile: &Profile) -> Rule {
        if self.snia_precondition {
            self.snia_rule()
        } else {
            Rule::for_profile(profile, self.snia_rule())
        }
    }

    /// The procedure's defaults: every profile, rounds of 60 s of the
    /// full-size device (shorter in proportion on a scaled one), 5 rounds
    /// of each 4K test and 1 of each matrix point (the reviewers' fio runs
    /// took 60 s each).
    pub fn new(devices: Vec<String>, scale: u32, seed: u64) -> ReviewSpec {
        ReviewSpec {
            devices,
            formats: None,
            profiles: PROFILES.iter().map(|p| p.name.to_string()).collect(),
            scale,
            seed,
            interval_s: None,
            rounds_4k: 5,
            rounds_matrix: 5,
            precondition_min_drive_writes: crate::runs::run::PRECONDITION_MIN_DRIVE_WRITES,
            precondition_cap_drive_writes: crate::runs::run::PRECONDITION_CAP_DRIVE_WRITES,
            snia_precondition: false,
            pts: false,
            pts_version: Default::default(),
            fail: Vec::new(),
            rebuild_bytes_per_sec: None,
            hosts: Vec::new(),
        }
    }
}

/// A job to run.
#[derive(Debug, Clone)]
pub struct Job {
    pub profile: Profile,
    pub format: String,
    /// The profile of the reviewers' procedure; `None`: the SNIA PTS.
    pub review: Option<&'static ReviewProfile>,
}

impl Job {
    pub fn label(&self) -> String {
        let on = card::host_not_default(Some(&self.profile.platform.id)).map_or(String::new(), |h| format!(" on {h}"));
        format!("{} {} {}{on}", self.profile.id, self.format, self.review.map_or("pts", |r| r.name))
    }
}

/// Where a job is, for a progress display.
#[derive(Debug, Clone)]
pub enum ReviewEvent<'a> {
    /// A job starts a step: "precondition", "4K tests" or "matrix".
    Step { job: usize, label: &'a str, step: &'a str },
    /// A round closed. `fraction` is of the step; with `bound`, of the most
    /// the step can take (a search for steady state may end sooner).
    Round { job: usize, progress: &'a Progress<'a>, fraction: f64, bound: bool, detail: &'a str },
    /// A step ended.
    StepDone { job: usize, label: &'a str, step: &'a str, summary: &'a str },
}

/// A list that names something twice would run it twice: refused by name.
fn duplicates_refuse<'a>(what: &str, names: impl Iterator<Item = &'a str>) -> Result<(), RunError> {
    let mut seen = std::collections::BTreeSet::new();
    for n in names {
        if !seen.insert(n) {
            return Err(RunError::Input(format!("{what} '{n}' is named twice: name each once")));
        }
    }
    Ok(())
}

/// `--fail-die` and `--rebuild-rate` checked against every device before
/// any job runs.
fn failures_check(spec: &ReviewSpec, profiles: &[Profile]) -> Result<(), RunError> {
    if spec.fail.is_empty() {
        return Ok(());
    }
    if spec.pts {
        return Err(RunError::Input("--fail-die with --pts: the SNIA PTS has no failure phase; fail a die in the reviewers' procedure".into()));
    }
    if let Some(r) = spec.rebuild_bytes_per_sec.filter(|r| !crate::runs::run::REBUILD_RATES.contains(r)) {
        return Err(RunError::Input(format!("--rebuild-rate {} MB/s: must be in 1..=100000", r as f64 / 1e6)));
    }
    for p in profiles {
        for f in &spec.fail {
            f.target.dies(&p.nand.geometry, p.members as usize).map_err(|e| RunError::Input(format!("--fail-die on {}: {e}", p.id)))?;
        }
    }
    Ok(())
}

/// The jobs of a spec, in order (device, format, profile), with the
/// formats each device lacks listed apart (reviewing several devices, a
/// format one of them lacks is skipped for it).
pub fn jobs_of(spec: &ReviewSpec, profiles: &[Profile]) -> Result<(Vec<Job>, Vec<String>), RunError> {
    if spec.devices.is_empty() {
        return Err(RunError::Input(format!(
            "no device: name at least one of {} (or a profile file)",
            card::CATALOG.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
        )));
    }
    if spec.profiles.is_empty() {
        return Err(RunError::Input("--profiles is empty: name at least one profile".into()));
    }
    duplicates_refuse("device", profiles.iter().map(|p| p.id.as_str()))?;
    duplicates_refuse("profile", spec.profiles.iter().map(String::as_str))?;
    if let Some(formats) = &spec.formats {
        duplicates_refuse("format", formats.iter().map(String::as_str))?;
    }
    let review: Vec<&'static ReviewProfile> = spec.profiles.iter().map(|p| profile_find(p)).collect::<Result<_, _>>()?;
    if !(1..=1000).contains(&spec.rounds_4k) || !(1..=1000).contains(&spec.rounds_matrix) {
        return Err(RunError::Input(format!("rounds {} / {}: must be in 1..=1000", spec.rounds_4k, spec.rounds_matrix)));
    }
    spec.snia_rule().check()?;
    failures_check(spec, profiles)?;
    duplicates_refuse("host", spec.hosts.iter().map(|h| card::host_id(Some(h))))?;
    let hosted = on_hosts(profiles, &spec.hosts)?;
    let mut jobs = Vec::new();
    let mut skipped = Vec::new();
    for p in &hosted {
        let formats: Vec<String> = match &spec.formats {
            None => p.format_names(),
            Some(list) => {
                let mut f = Vec::new();
                for name in list {
                    if p.formats.contains_key(name) || card::capacity_parse(name).is_some() {
                        f.push(name.clone());
                    } else {
                        skipped.push(format!("{} has no format '{}' (it has {})", p.id, name, p.format_names().join(", ")));
                    }
                }
                f
            }
        };
        for format in formats {
            if spec.pts {
                jobs.push(Job { profile: p.clone(), format: format.clone(), review: None });
                continue;
            }
            for &r in &review {
                jobs.push(Job { profile: p.clone(), format: format.clone(), review: Some(r) });
            }
        }
    }
    if jobs.is_empty() {
        return Err(RunError::Input(format!("nothing to review: {}", skipped.join("; "))));
    }
    Ok((jobs, skipped))
}

/// Each profile on each of `hosts` in turn (a device's jobs on every host
/// before the next device's); the profiles as they are with none.
fn on_hosts(profiles: &[Profile], hosts: &[String]) -> Result<Vec<Profile>, RunError> {
    if hosts.is_empty() {
        return Ok(profiles.to_vec());
    }
    let hosts: Vec<card::Host> = hosts.iter().map(|h| card::host_load(h)).collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    for p in profiles {
        for h in &hosts {
            out.push(p.on_host(h)?);
        }
    }
    Ok(out)
}

/// Where a job reports its progress: its index and label, and the
/// review's event sink.
pub struct Reporter<'a> {
    pub index: usize,
    pub label: String,
    pub events: &'a (dyn Fn(&ReviewEvent) + Sync),
}

impl Reporter<'_> {
    pub fn step(&self, step: &str) {
        (self.events)(&ReviewEvent::Step { job: self.index, label: &self.label, step });
    }
    pub fn done(&self, step: &str, summary: &str) {
        (self.events)(&ReviewEvent::StepDone { job: self.index, label: &self.label, step, summary });
    }
    pub fn round(&self, p: &Progress, fraction: f64, bound: bool, detail: &str) {
        (self.events)(&ReviewEvent::Round { job: self.index, progress: p, fraction, bound, detail });
    }
}

/// The test name of a thread/queue point ("4T/16Q").
pub fn matrix_name(threads: u32, queue_depth: u32) -> String {
    format!("{threads}T/{queue_depth}Q")
}
