//! Real storage through fio: a run (optional preconditioning at the
//! reviewers' 16 threads x 16 queue depth with the workload's
//! preconditioning workload, until SNIA steady state judged round by round
//! as fio reports or for a fixed time, then the measured phase), and the
//! reviewers' procedure (per profile: erase, precondition, the 4K tests or
//! the thread/queue matrix). Their results are a simulated run's and
//! review's (`RunResult`, `ReviewResults`: the same schemas), marked
//! measured, with what the target and the host are.

use crate::procedures::job::{matrix_name, ReviewSpec, Tests, MATRIX_QUEUE_DEPTHS, MATRIX_THREADS, SEQUENTIAL_FILL_DRIVE_WRITES, SEQUENTIAL_TESTS};
use crate::procedures::review::{JobResult, ReviewResults, MATRIX_WARMUP_ROUNDS, RESULTS_KIND, RESULTS_SCHEMA_VERSION};
use crate::real::host;
use crate::real::measure::{self, Job, MeasureError, Measurement};
use crate::real::target::{Target, TargetInfo};
use crate::runs::interrupt;
use crate::runs::metrics::Interval;
use crate::runs::phase::{Phase, SteadyReport};
use crate::runs::run::{DeviceInfo, RunResult, REVIEWERS_QUEUE_DEPTH, REVIEWERS_THREADS};
use crate::runs::steady;
use crate::runs::workload::Mix;
use serde::{Deserialize, Serialize};

/// How preconditioning goes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Precondition {
    /// Until the SNIA criteria hold on IOPS over the last 5 rounds, at
    /// least `min_s` seconds and at most `cap_s`.
    Steady { min_s: u64, cap_s: u64 },
    /// For a fixed time, judged at its end (the reviewers' hours).
    Fixed { seconds: u64 },
}

/// A run on a target.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MeasuredSpec {
    pub target: String,
    pub workload: Mix,
    pub threads: u32,
    pub queue_depth: u32,
    /// Seconds of the measured phase.
    pub seconds: u64,
    /// Round length, seconds.
    pub round_s: u64,
    pub precondition: Option<Precondition>,
}

/// Progress of a measured phase, for a progress display.
pub struct MeasuredProgress<'a> {
    pub phase: &'a str,
    pub round: &'a Interval,
    pub rounds: usize,
    pub elapsed_s: f64,
    /// The phase's planned length (a cap when it may end at steady state).
    pub planned_s: u64,
}

/// Why a target could not be erased before preconditioning (a served
/// card's secure erase refused or failed): the run must not go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EraseFailed(pub String);

/// How a target is erased before preconditioning: what was done, said for
/// the results, or why it could not be and the run must not go on.
/// `Target::erase` by default; a served flashlab card, over its control
/// channel (which only the caller can reach).
pub type Erase<'a> = &'a dyn Fn(&Target, &TargetInfo) -> Result<String, EraseFailed>;

/// The erase a target allows by itself (`Target::erase`).
pub fn erase_default(t: &Target, info: &TargetInfo) -> Result<String, EraseFailed> {
    Ok(t.erase(info))
}

/// Runs `spec` on its target (which the caller has checked may be
/// written), calling `progress` each round. With preconditioning the
/// target is erased first, by `erase`.
pub fn run(spec: &MeasuredSpec, erase: Erase, progress: &mut dyn FnMut(&MeasuredProgress)) -> Result<RunResult, MeasureError> {
    let target = Target::parse(&spec.target);
    let info = target.inspect()?;
    let mut phases = Vec::new();
    let mut incomplete = None;
    let mut fio = String::new();
    let erased = spec.precondition.map(|_| erase(&target, &info)).transpose().map_err(|e| MeasureError::Erase(e.0))?;
    if let Some(p) = spec.precondition {
        let (seconds, min_rounds) = precondition_length(p, spec.round_s);
        let job = job_of(&target, &spec.workload.preconditioner(), REVIEWERS_THREADS, REVIEWERS_QUEUE_DEPTH, seconds, spec.round_s);
        let (phase, version) = phase_run(&job, "precondition", min_rounds, info.size_bytes, progress)?;
        fio = version;
        incomplete = phase.interrupted.then(|| crate::runs::run::incomplete_why("preconditioning"));
        phases.push(judged(phase, p));
    }
    if incomplete.is_none() {
        let job = job_of(&target, &spec.workload, spec.threads, spec.queue_depth, spec.seconds, spec.round_s);
        let (phase, version) = phase_run(&job, "measure", usize::MAX, info.size_bytes, progress)?;
        fio = version;
        incomplete = phase.interrupted.then(|| crate::runs::run::incomplete_why("the measured phase"));
        phases.push(phase);
    }
    let measurement = measurement_of(&target, &info, fio, erased);
    Ok(RunResult {
        flashlab_version: env!("CARGO_PKG_VERSION").to_string(),
        note: format!("measured: every figure is fio's, on {} ({}), not a model's", info.target, info.kind),
        seed: 0,
        settings: serde_json::to_value(spec).expect("a spec serialises"),
        device: device_of(&info),
        phases,
        comparison: Vec::new(),
        failures: Vec::new(),
        incomplete,
        warnings: Vec::new(),
        measured: Some(measurement),
    })
}

/// What the results say of the device under test: the target, as found.
fn device_of(info: &TargetInfo) -> DeviceInfo {
    DeviceInfo {
        id: info.target.clone(),
        name: info.model.clone().unwrap_or_else(|| info.kind.clone()),
        format: "as found".into(),
        scale: 1,
        capacity_bytes: info.size_bytes.unwrap_or(0),
        raw_bytes: 0,
        dies: 0,
        effective_op: 0.0,
        full_capacity_bytes: None,
        command_slots: None,
        host: None,
    }
}

fn measurement_of(target: &Target, info: &TargetInfo, fio: String, erased: Option<String>) -> Measurement {
    let engine = if matches!(target, Target::Nbd(_)) { "nbd" } else { "libaio, O_DIRECT" };
    Measurement { target: info.clone(), fio, engine: engine.into(), erased, kernel: host::kernel(), cpu: host::cpu() }
}

/// The reviewers' procedure on one target or several, one after another.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MeasuredReview {
    pub targets: Vec<String>,
    /// Profile names (`job::PROFILES`).
    pub profiles: Vec<String>,
    pub round_s: u64,
    pub rounds_4k: u32,
    pub rounds_matrix: u32,
    pub precondition: Precondition,
}

/// Runs the reviewers' procedure on each target (which the caller has
/// checked may be written), a profile after another, calling `progress`
/// with the target, the profile's name and each round. A stop asked for
/// (SIGINT) ends it after the phase it cut short, the results marked
/// incomplete.
pub fn review(r: &MeasuredReview, erase: Erase, progress: &mut dyn FnMut(&str, &str, &MeasuredProgress)) -> Result<ReviewResults, MeasureError> {
    assert!(!r.targets.is_empty(), "a review has a target");
    let mut jobs: Vec<JobResult> = Vec::new();
    let mut found = Vec::new();
    'targets: for t in &r.targets {
        let target = Target::parse(t);
        let info = target.inspect()?;
        found.push(format!("{} ({})", info.target, info.kind));
        for name in &r.profiles {
            let profile = crate::procedures::job::profile_find(name).map_err(|e| MeasureError::Profile(e.to_string()))?;
            let job = review_job(r, &target, &info, profile, erase, &mut |p| progress(t, profile.name, p))?;
            let cut = job.interrupted();
            jobs.push(job);
            if cut {
                break 'targets;
            }
        }
    }
    let whole = jobs.iter().filter(|j| !j.interrupted()).count();
    let planned = r.targets.len() * r.profiles.len();
    let incomplete = interrupt::asked().then(|| {
        format!("interrupted (SIGINT): {whole} of {planned} profiles whole; a profile cut short has the phases it ran, profiles not started are missing")
    });
    let mut settings = ReviewSpec::new(r.targets.clone(), 1, 0);
    settings.profiles = r.profiles.clone();
    settings.interval_s = Some(r.round_s as f64);
    settings.rounds_4k = r.rounds_4k;
    settings.rounds_matrix = r.rounds_matrix;
    Ok(ReviewResults {
        kind: RESULTS_KIND.to_string(),
        schema_version: RESULTS_SCHEMA_VERSION,
        flashlab_version: env!("CARGO_PKG_VERSION").to_string(),
        note: format!("measured: every figure is fio's, on {}, not a model's", found.join(", ")),
        seed: 0,
        settings,
        jobs,
        pts: Vec::new(),
        incomplete,
    })
}

/// One profile: erase, precondition, then its main tests.
fn review_job(
    r: &MeasuredReview,
    target: &Target,
    info: &TargetInfo,
    profile: &crate::procedures::job::ReviewProfile,
    erase: Erase,
    progress: &mut dyn FnMut(&MeasuredProgress),
) -> Result<JobResult, MeasureError> {
    let workload = Mix::parse(profile.workload).expect("built-in workload");
    let pre_mix = workload.preconditioner();
    let erased = erase(target, info).map_err(|e| MeasureError::Erase(e.0))?;
    let (seconds, min_rounds) = precondition_length(r.precondition, r.round_s);
    let mut pre_job = job_of(target, &pre_mix, REVIEWERS_THREADS, REVIEWERS_QUEUE_DEPTH, seconds, r.round_s);
    // The sequential profile fills the target twice over, whatever time
    // that takes (at most the preconditioning's); without a known size,
    // for the preconditioning's time.
    let fill = profile.tests == Tests::Sequential;
    if fill {
        pre_job.io_bytes = info.size_bytes.map(|b| b * SEQUENTIAL_FILL_DRIVE_WRITES);
        pre_job.runtime_s = pre_job.runtime_s.max(PRECONDITION_CAP_S);
    }
    let (pre, mut fio) = phase_run(&pre_job, "precondition", if fill { usize::MAX } else { min_rounds }, info.size_bytes, progress)?;
    let pre = if fill { pre } else { judged(pre, r.precondition) };
    let mut tests = Vec::new();
    let plan: Vec<(String, Mix, u32, u32, u64, u64)> = match profile.tests {
        Tests::FourK => [("4K write", "4k-write"), ("4K read", "4k-read")]
            .iter()
            .map(|(n, w)| (n.to_string(), Mix::parse(w).expect("built-in workload"), REVIEWERS_THREADS, REVIEWERS_QUEUE_DEPTH, 0, r.rounds_4k as u64))
            .collect(),
        Tests::Sequential => SEQUENTIAL_TESTS
            .iter()
            .map(|(n, w)| (n.to_string(), Mix::parse(w).expect("built-in workload"), REVIEWERS_THREADS, REVIEWERS_QUEUE_DEPTH, 0, r.rounds_4k as u64))
            .collect(),
        Tests::Matrix => MATRIX_THREADS
            .iter()
            .flat_map(|&t| MATRIX_QUEUE_DEPTHS.iter().map(move |&q| (t, q)))
            .map(|(t, q)| (matrix_name(t, q), workload.clone(), t, q, MATRIX_WARMUP_ROUNDS, r.rounds_matrix as u64))
            .collect(),
    };
    for (name, mix, t, q, warm, rounds) in plan {
        if pre.interrupted || tests.last().is_some_and(|p: &Phase| p.interrupted) {
            break;
        }
        let job = Job { ramp_s: warm * r.round_s, ..job_of(target, &mix, t, q, rounds * r.round_s, r.round_s) };
        let (mut phase, version) = phase_run(&job, &name, usize::MAX, info.size_bytes, progress)?;
        fio = version;
        if profile.tests == Tests::Matrix {
            phase.steady_state = crate::procedures::review::point_steadiness(&phase);
        }
        tests.push(phase);
    }
    Ok(JobResult {
        device: device_of(info),
        profile: profile.name.to_string(),
        profile_title: profile.title.to_string(),
        tests_kind: profile.tests,
        workload,
        preconditioner: pre_mix,
        precondition: pre,
        tests,
        comparison: Vec::new(),
        failure: None,
        run: None,
        measured: Some(measurement_of(target, info, fio, Some(erased))),
    })
}

/// The longest preconditioning on real storage (to steady state, or the
/// sequential fill): the reviewers' longest fixed time.
pub const PRECONDITION_CAP_S: u64 = 12 * 3600;

/// A preconditioning's fio run time and the rounds before steady state
/// may end it.
fn precondition_length(p: Precondition, round_s: u64) -> (u64, usize) {
    match p {
        Precondition::Steady { min_s, cap_s } => (cap_s, (min_s / round_s).max(steady::WINDOW as u64) as usize),
        Precondition::Fixed { seconds } => (seconds, usize::MAX),
    }
}

fn job_of(target: &Target, mix: &Mix, threads: u32, queue_depth: u32, runtime_s: u64, round_s: u64) -> Job {
    Job { target: target.clone(), mix: mix.clone(), threads, queue_depth, runtime_s, round_s, ramp_s: 0, size_bytes: None, io_bytes: None }
}

/// One phase through fio: ends at its run time, when a stop is asked
/// (SIGINT), or, after `min_rounds`, when the last 5 rounds' IOPS are
/// steady. The phase (its drive writes counted on a target of known
/// `size`) and fio's version.
fn phase_run(
    job: &Job,
    name: &str,
    min_rounds: usize,
    size: Option<u64>,
    progress: &mut dyn FnMut(&MeasuredProgress),
) -> Result<(Phase, String), MeasureError> {
    let mut interrupted = false;
    let m = measure::run(job, |round, rounds| {
        let elapsed_s = rounds.iter().map(|r| r.length_s).sum();
        progress(&MeasuredProgress { phase: name, round, rounds: rounds.len(), elapsed_s, planned_s: job.runtime_s });
        if interrupt::asked() {
            interrupted = true;
            return false;
        }
        let iops: Vec<f64> = rounds.iter().map(|r| r.iops).collect();
        !(rounds.len() >= min_rounds && steady::latest(&iops).is_some_and(|w| w.steady))
    })?;
    // fio may have had the terminal's Ctrl-C itself and ended first.
    interrupted |= interrupt::asked();
    let written = m.summary.write.mb_per_s * 1e6 * m.runtime_s;
    let drive_writes = size.map_or(0.0, |b| written / b as f64);
    let phase = Phase {
        name: name.into(),
        workload: job.mix.clone(),
        threads: job.threads,
        queue_depth: job.queue_depth,
        virtual_seconds: m.runtime_s,
        summary: m.summary,
        intervals: m.rounds,
        wa: 0.0,
        wa_with_parity: 0.0,
        drive_writes,
        die_utilisation: 0.0,
        utilisation: Vec::new(),
        bottleneck: String::new(),
        counters: Default::default(),
        read_errors: Default::default(),
        page_reads: 0,
        steady_state: None,
        host: None,
        interrupted,
    };
    Ok((phase, m.fio))
}

/// A preconditioning phase with its steady-state judgement.
fn judged(mut phase: Phase, p: Precondition) -> Phase {
    let iops: Vec<f64> = phase.intervals.iter().map(|r| r.iops).collect();
    let window = steady::latest(&iops);
    let rule = match p {
        Precondition::Steady { min_s, cap_s } => {
            format!("SNIA steady state on IOPS over 5 rounds (range <= 20% of the mean, slope excursion <= 10%), after at least {min_s} s, at most {cap_s} s")
        }
        Precondition::Fixed { seconds } => format!("a fixed {seconds} s, judged at its end by the SNIA criteria on IOPS over the last 5 rounds"),
    };
    phase.steady_state = Some(SteadyReport {
        reached: window.as_ref().is_some_and(|w| w.steady),
        rounds: phase.intervals.len(),
        drive_writes: phase.drive_writes,
        window,
        tracked: "IOPS".into(),
        rule,
        drift_percent_per_drive_write: None,
    });
    phase
}
