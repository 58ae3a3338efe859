//! The reviewers' whole procedure (StorageReview.com's enterprise test procedure) on simulated devices:
//! for each device, format and profile, secure erase, precondition at
//! 16T/16Q to steady state with the profile's preconditioning workload,
//! then the main tests (4K: 100% write and 100% read at 16T/16Q; mixed
//! profiles: the 16-point thread/queue matrix).
//!
//! Jobs (device x format x profile) are independent and run on as many
//! threads as asked; results come back in job order whatever the threads
//! did, so a seed gives the same results file on any machine.

use crate::procedures::job::{
    matrix_name, Job, Reporter, ReviewEvent, ReviewSpec, Tests, MATRIX_QUEUE_DEPTHS, MATRIX_THREADS, SEQUENTIAL_FILL_DRIVE_WRITES, SEQUENTIAL_TESTS,
};
use crate::runs::failure::FailureRun;
use crate::runs::metrics::readback::Unbelievable;
use crate::runs::phase::Phase;
use crate::runs::published::Check;
use crate::runs::run::{device_info, DeviceInfo, Length, Progress, Rule, RunError, Session, REVIEWERS_QUEUE_DEPTH, REVIEWERS_THREADS};
use crate::runs::workload::Mix;
use serde::{Deserialize, Serialize};

/// What the results file says it is, and the layout version this build
/// reads and writes.
pub const RESULTS_KIND: &str = "flashlab-review";
pub const RESULTS_SCHEMA_VERSION: u32 = 1;

/// One device, format and profile.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct JobResult {
    pub device: DeviceInfo,
    pub profile: String,
    pub profile_title: String,
    pub tests_kind: Tests,
    pub workload: Mix,
    pub preconditioner: Mix,
    pub precondition: Phase,
    /// The main tests in the order run: "4K write", "4K read", or the matrix
    /// points "2T/2Q" ... "16T/16Q".
    pub tests: Vec<Phase>,
    /// Published figures whose conditions a phase of the job met, judged.
    pub comparison: Vec<Check>,
    /// The last phase, through die failures and their rebuilds
    /// (`--fail-die`), left out of the comparison.
    #[serde(default)]
    pub failure: Option<FailureRun>,
    /// Which run of several set side by side (`flashlab compare`: a
    /// `--label`, or the results file's name); none in a review's own file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// Where a job on real storage ran (`real::measured`); none for
    /// a simulated card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<crate::runs::measurement::Measurement>,
}

impl JobResult {
    /// "FlashMAX II stock": how charts name this device and format.
    pub fn label(&self) -> String {
        if self.measured.is_some() {
            return match &self.run {
                Some(run) => format!("{} [measured, {run}]", self.device.id),
                None => format!("{} [measured]", self.device.id),
            };
        }
        // A job on another host than the reviewers' Linux server says so.
        let on = card::host_not_default(self.device.host.as_deref()).map_or(String::new(), |h| format!(" ({})", card::host_short(h)));
        match &self.run {
            Some(run) => format!("{} {}{on} [{run}]", self.device.name, self.device.format),
            None => format!("{} {}{on}", self.device.name, self.device.format),
        }
    }
    /// Whether a stop cut the job short.
    pub fn interrupted(&self) -> bool {
        self.precondition.interrupted || self.tests.iter().any(|t| t.interrupted) || self.failure.as_ref().is_some_and(|f| f.phase.interrupted)
    }
    pub fn test(&self, name: &str) -> Option<&Phase> {
        self.tests.iter().find(|t| t.name == name)
    }
}

/// The results file of a review.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ReviewResults {
    pub kind: String,
    pub schema_version: u32,
    pub flashlab_version: String,
    pub note: String,
    pub seed: u64,
    pub settings: ReviewSpec,
    pub jobs: Vec<JobResult>,
    /// SNIA PTS results (`--pts`), one per device and format.
    #[serde(default)]
    pub pts: Vec<crate::procedures::pts::PtsResult>,
    /// Why the review is not whole (a stop asked for), where it is not:
    /// jobs not started are missing, a job cut short has the phases it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
}

/// Runs one job from secure erase to its last main test.
pub fn job_run(spec: &ReviewSpec, job: &Job, index: usize, events: &(dyn Fn(&ReviewEvent) + Sync)) -> Result<JobResult, RunError> {
    let rep = Reporter { index, label: job.label(), events };
    let Some(review) = job.review else { return Err(RunError::Input(format!("{}: a PTS job, not a review profile", rep.label))) };
    let mut s = Session::new(&job.profile, &job.format, spec.scale, spec.seed, spec.interval_s)?;
    s.secure_erase()?;
    let workload = Mix::parse(review.workload).expect("built-in workload");
    let pre_mix = workload.preconditioner();
    let pre = match review.tests {
        Tests::Sequential => fill_step(&mut s, &pre_mix, &rep)?,
        _ => precondition_step(&mut s, &pre_mix, spec.rule_for(&job.profile), &rep)?,
    };
    // A stop asked for ends the job after the phase it cut short.
    let go_on = |phases: &[Phase]| !phases.iter().any(|p| p.interrupted);
    let tests = match (go_on(std::slice::from_ref(&pre)), review.tests) {
        (false, _) => Vec::new(),
        (true, Tests::FourK) => four_k_step(&mut s, spec, &rep)?,
        (true, Tests::Matrix) => matrix_step(&mut s, spec, &workload, &rep)?,
        (true, Tests::Sequential) => sequential_step(&mut s, spec, &rep)?,
    };
    let failure = match spec.fail.is_empty() || !go_on(&tests) || tests.is_empty() {
        true => None,
        false => Some(failure_step(&mut s, spec, &workload, &rep)?),
    };
    // After a sequential fill the card is filled, not in a random
    // workload's steady state.
    let state = if review.tests == Tests::Sequential { card::State::Filled } else { card::State::Steady };
    let mut judged = vec![(card::State::Fresh, &pre)];
    judged.extend(tests.iter().map(|t| (state, t)));
    let comparison = crate::runs::published::compare(&job.profile, &job.format, &judged, Some(s.round_s()));
    Ok(JobResult {
        device: device_info(&job.profile, &job.format, spec.scale, &s.device),
        profile: review.name.to_string(),
        profile_title: review.title.to_string(),
        tests_kind: review.tests,
        workload,
        preconditioner: pre_mix,
        precondition: pre,
        tests,
        comparison,
        failure,
        run: None,
        measured: None,
    })
}

/// Rounds of the failure phase: a quarter of the review's, to resolve the
/// dip; it runs `FAILURE_ROUNDS_AFTER` rounds past the last rebuild's end,
/// and at most `FAILURE_ROUNDS_MAX` past the last failure.
const FAILURE_ROUND_SHARE: u64 = 4;
const FAILURE_ROUNDS_AFTER: u32 = 8;
const FAILURE_ROUNDS_MAX: u32 = 400;

/// The profile's workload at 16T/16Q while `--fail-die`'s dies fail, until
/// the rebuild has ended.
fn failure_step(s: &mut Session, spec: &ReviewSpec, workload: &Mix, rep: &Reporter) -> Result<FailureRun, RunError> {
    rep.step("die failure");
    let interval = (s.interval_ns / FAILURE_ROUND_SHARE).max(1);
    let last = spec.fail.iter().map(|f| f.at_s).fold(0.0, f64::max);
    let run = s.through_failures(
        "die failure",
        workload,
        &spec.fail,
        spec.rebuild_bytes_per_sec,
        interval,
        (FAILURE_ROUNDS_AFTER, FAILURE_ROUNDS_MAX),
        &mut |p: &Progress| {
            let detail = format!("die failure: {:.1} s, {:.0} IOPS", p.virtual_s, p.last.iops);
            rep.round(p, (p.virtual_s / (last + FAILURE_ROUNDS_MAX as f64 * interval as f64 / 1e9)).min(1.0), true, &detail);
        },
    )?;
    let summary = run
        .reports
        .iter()
        .map(|r| match r.rebuild_s {
            Some(t) => format!("{}: rebuild {:.1} MB in {t:.2} s", r.event.what, r.rebuild_bytes as f64 / 1e6),
            None => format!("{}: REBUILD NOT ENDED in the phase", r.event.what),
        })
        .collect::<Vec<_>>()
        .join("; ");
    rep.done("die failure", &summary);
    Ok(run)
}

/// Preconditioning at 16T/16Q by `rule`, reported with its verdict.
fn precondition_step(s: &mut Session, mix: &Mix, rule: Rule, rep: &Reporter) -> Result<Phase, RunError> {
    rep.step("precondition");
    let pre = s.precondition(mix, rule, &mut |p: &Progress| {
        rep.round(p, p.fraction, p.fraction_is_bound, &format!("{:.2} drive writes, {:.0} IOPS", p.drive_writes, p.last.iops));
    })?;
    let ss = pre.steady_state.as_ref();
    let steady = ss.map(|r| r.reached).unwrap_or(false);
    let drift = ss.and_then(|r| r.drift_percent_per_drive_write).map(|d| format!(", drift {d:+.1}% per drive write")).unwrap_or_default();
    let summary = format!(
        "{} after {:.2} drive writes, {:.0} virtual s ({}){drift}",
        if pre.interrupted {
            "INTERRUPTED"
        } else if steady {
            "steady state reached"
        } else {
            "STEADY STATE NOT REACHED"
        },
        pre.drive_writes,
        pre.virtual_seconds,
        rule.describe()
    );
    rep.done("precondition", &summary);
    Ok(pre)
}

/// The sequential profile's preconditioning: `SEQUENTIAL_FILL_DRIVE_WRITES`
/// of 128 KiB sequential writes at 16T/16Q, a fixed length with no
/// steady state to judge.
fn fill_step(s: &mut Session, mix: &Mix, rep: &Reporter) -> Result<Phase, RunError> {
    rep.step("precondition");
    let ios = SEQUENTIAL_FILL_DRIVE_WRITES * s.device.capacity_bytes() / mix.max_bytes() as u64;
    let pre = s.measure("precondition", mix, REVIEWERS_THREADS, REVIEWERS_QUEUE_DEPTH, Length::Ios(ios), &mut |p: &Progress| {
        rep.round(p, p.fraction, false, &format!("{:.2} drive writes, {:.0} MB/s", p.drive_writes, p.last.mb_per_s));
    })?;
    let how = if pre.interrupted { "INTERRUPTED" } else { "filled" };
    rep.done("precondition", &format!("{how} after {:.2} drive writes of {}, {:.0} virtual s", pre.drive_writes, mix.name, pre.virtual_seconds));
    Ok(pre)
}

/// `SEQUENTIAL_TESTS` at 16T/16Q, each from an idle card (as vendors
/// rate a filled card, reads first).
fn sequential_step(s: &mut Session, spec: &ReviewSpec, rep: &Reporter) -> Result<Vec<Phase>, RunError> {
    rep.step("sequential tests");
    let length = Length::Duration(spec.rounds_4k as u64 * s.interval_ns);
    let mut tests: Vec<Phase> = Vec::new();
    for (i, (name, w)) in SEQUENTIAL_TESTS.into_iter().enumerate() {
        s.idle();
        let mix = Mix::parse(w).expect("built-in workload");
        tests.push(s.measure(name, &mix, REVIEWERS_THREADS, REVIEWERS_QUEUE_DEPTH, length, &mut |p: &Progress| {
            rep.round(p, (i as f64 + p.fraction) / SEQUENTIAL_TESTS.len() as f64, false, &format!("{name}: {:.0} MB/s", p.last.mb_per_s));
        })?);
        if tests.last().is_some_and(|t| t.interrupted) {
            rep.done("sequential tests", "INTERRUPTED");
            return Ok(tests);
        }
    }
    let said: Vec<String> = tests.iter().map(|t| format!("{} {:.0} MB/s", t.name, t.summary.all.mb_per_s)).collect();
    rep.done("sequential tests", &said.join(", "));
    Ok(tests)
}

/// 4K random write, then read, at 16T/16Q.
fn four_k_step(s: &mut Session, spec: &ReviewSpec, rep: &Reporter) -> Result<Vec<Phase>, RunError> {
    rep.step("4K tests");
    let length = Length::Duration(spec.rounds_4k as u64 * s.interval_ns);
    let mut tests = Vec::new();
    for (i, (name, w)) in [("4K write", "4k-write"), ("4K read", "4k-read")].into_iter().enumerate() {
        let mix = Mix::parse(w).expect("built-in workload");
        tests.push(s.measure(name, &mix, REVIEWERS_THREADS, REVIEWERS_QUEUE_DEPTH, length, &mut |p: &Progress| {
            rep.round(p, (i as f64 + p.fraction) / 2.0, false, &format!("{name}: {:.0} IOPS", p.last.iops));
        })?);
        if tests.last().is_some_and(|t| t.interrupted) {
            rep.done("4K tests", "INTERRUPTED");
            return Ok(tests);
        }
    }
    rep.done("4K tests", &format!("write {:.0} IOPS, read {:.0} IOPS", tests[0].summary.write.iops, tests[1].summary.read.iops));
    Ok(tests)
}

/// The profile's mix at every thread count x queue depth. Each point
/// first runs `MATRIX_WARMUP_ROUNDS` rounds, discarded, so that GC comes
/// to its pace at the point's load (after a lighter point the free pool
/// is fuller than the load can hold, and a short sample measures that
/// transient); then its measured rounds, judged by the SNIA criteria
/// where they are a window or more (`steady_state`).
fn matrix_step(s: &mut Session, spec: &ReviewSpec, workload: &Mix, rep: &Reporter) -> Result<Vec<Phase>, RunError> {
    rep.step("matrix");
    let (warmup, length) = (Length::Duration(MATRIX_WARMUP_ROUNDS * s.interval_ns), Length::Duration(spec.rounds_matrix as u64 * s.interval_ns));
    let points = MATRIX_THREADS.len() * MATRIX_QUEUE_DEPTHS.len();
    let mut tests = Vec::new();
    for (i, (t, q)) in MATRIX_THREADS.iter().flat_map(|&t| MATRIX_QUEUE_DEPTHS.iter().map(move |&q| (t, q))).enumerate() {
        let name = matrix_name(t, q);
        let mut progress = |p: &Progress| rep.round(p, (i as f64 + p.fraction) / points as f64, false, &format!("{name}: {:.0} IOPS", p.last.iops));
        let warm = s.measure(&name, workload, t, q, warmup, &mut progress)?;
        let mut point = if warm.interrupted { warm } else { s.measure(&name, workload, t, q, length, &mut progress)? };
        point.steady_state = point_steadiness(&point);
        tests.push(point);
        if tests.last().is_some_and(|t| t.interrupted) {
            rep.done("matrix", "INTERRUPTED");
            return Ok(tests);
        }
    }
    let last = tests.last().expect("16 points");
    let unsteady: Vec<&str> = tests.iter().filter(|t| t.steady_state.as_ref().is_some_and(|s| !s.reached)).map(|t| t.name.as_str()).collect();
    let steadiness =
        if unsteady.is_empty() { String::new() } else { format!("; NOT STEADY (SNIA criteria over the measured rounds): {}", unsteady.join(", ")) };
    rep.done("matrix", &format!("16T/16Q {:.0} IOPS, {:.3} ms average{steadiness}", last.summary.all.iops, last.summary.all.latency_avg_ms));
    Ok(tests)
}

/// Rounds each matrix point runs before its measured ones.
pub const MATRIX_WARMUP_ROUNDS: u64 = 5;

/// A matrix point's measured rounds judged by the SNIA criteria (its
/// IOPS over the last window); none with fewer rounds than a window.
pub(crate) fn point_steadiness(p: &Phase) -> Option<crate::runs::phase::SteadyReport> {
    let y: Vec<f64> = p.intervals.iter().map(|i| i.iops).collect();
    let window = crate::runs::steady::latest(&y)?;
    Some(crate::runs::phase::SteadyReport {
        reached: window.steady,
        rounds: y.len(),
        drive_writes: p.drive_writes,
        window: Some(window),
        tracked: "IOPS".into(),
        rule: format!("SNIA PTS criteria over the measured rounds, after {MATRIX_WARMUP_ROUNDS} rounds of warm-up"),
        drift_percent_per_drive_write: None,
    })
}

/// A job's expected cost, for scheduling, in tenths of the 4K profile's:
/// preconditioning dominates, and takes longer the less a profile writes
/// per I/O and the less spare the format leaves (measured at full size on
/// the FlashMAX II stock format: File Server 2.9x, 8K 70/30 2.2x, Web Server
/// 0.8x the 4K profile; hp ~0.7x stock).
fn job_weight(job: &Job) -> u32 {
    let profile = match job.review.map(|r| r.name) {
        None => 25,
        Some("fileserver") => 29,
        Some("8k7030") => 22,
        Some("webserver") => 8,
        Some("seq") => 4,
        _ => 10,
    };
    let spare = match job.profile.formats.get(&job.format) {
        Some(&u) => (job.profile.usable_bytes_max() as f64 / u as f64 * 100.0) as u32,
        None => 100,
    };
    // Less spare, more GC: the format with the most usable capacity (the
    // least over-provisioning) weighs most.
    profile * 10_000 / spare.max(1)
}

/// Runs every job on up to `threads` threads. The first error (in job
/// order) stops the jobs not yet started and is returned.
pub fn review(spec: &ReviewSpec, jobs: &[Job], threads: usize, events: &(dyn Fn(&ReviewEvent) + Sync)) -> Result<ReviewResults, RunError> {
    enum Out {
        Review(Box<JobResult>),
        Pts(Box<crate::procedures::pts::PtsResult>),
    }
    // Longest jobs first, so that the last job to start is a short one and
    // the threads end together; results still land in job order.
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(job_weight(&jobs[i])));
    let out = crate::runs::threads::on_threads(&order, threads, |i| {
        let job = &jobs[i];
        match job.review {
            Some(_) => job_run(spec, job, i, events).map(|r| Out::Review(Box::new(r))),
            None => crate::procedures::pts::pts_run(spec, job, i, events).map(|r| Out::Pts(Box::new(r))),
        }
    });
    let (mut results, mut pts) = (Vec::new(), Vec::new());
    for r in out.into_iter().flatten() {
        match r? {
            Out::Review(j) => results.push(*j),
            Out::Pts(p) => pts.push(*p),
        }
    }
    let done = results.iter().filter(|j: &&JobResult| !j.interrupted()).count() + pts.len();
    let incomplete = crate::runs::interrupt::asked()
        .then(|| format!("interrupted (SIGINT): {done} of {} jobs whole; a job cut short has the phases it ran, jobs not started are missing", jobs.len()));
    Ok(ReviewResults {
        incomplete,
        kind: RESULTS_KIND.to_string(),
        schema_version: RESULTS_SCHEMA_VERSION,
        flashlab_version: env!("CARGO_PKG_VERSION").to_string(),
        note: "simulated: every figure comes from flashlab's model of the device, in virtual time".into(),
        seed: spec.seed,
        settings: spec.clone(),
        jobs: results,
        pts,
    })
}

/// Reads a results file back, refusing what is not one or is of another
/// layout version.
pub fn results_parse(text: &str, source: &str) -> Result<ReviewResults, RunError> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| RunError::Input(format!("results file {source}: not valid JSON ({e}); is it corrupted or truncated?")))?;
    let kind = v.get("kind").and_then(|k| k.as_str());
    if kind != Some(RESULTS_KIND) {
        return Err(RunError::Input(format!("results file {source}: not a flashlab review results file (kind {kind:?}, expected \"{RESULTS_KIND}\")")));
    }
    let version = v.get("schema_version").and_then(|k| k.as_u64());
    if version != Some(RESULTS_SCHEMA_VERSION as u64) {
        let writer = v.get("flashlab_version").and_then(|k| k.as_str()).unwrap_or("unknown");
        return Err(RunError::Input(format!(
            "results file {source}: schema version {} (written by flashlab {writer}); this flashlab ({}) reads version {RESULTS_SCHEMA_VERSION}",
            version.map_or("missing".to_string(), |v| v.to_string()),
            env!("CARGO_PKG_VERSION")
        )));
    }
    let r: ReviewResults = serde_json::from_value(v)
        .map_err(|e| RunError::Input(format!("results file {source}: does not match schema version {RESULTS_SCHEMA_VERSION} ({e}); is it corrupted?")))?;
    r.check().map_err(|e| RunError::Input(format!("results file {source}: {e}; is it corrupted or altered?")))?;
    Ok(r)
}

impl ReviewResults {
    /// Results read back: every phase's figures (`Phase::check`).
    pub fn check(&self) -> Result<(), Unbelievable> {
        for (i, j) in self.jobs.iter().enumerate() {
            let at = format!("jobs[{i}] ({})", j.label());
            j.precondition.check(&at)?;
            j.tests.iter().try_for_each(|t| t.check(&at))?;
        }
        self.pts.iter().enumerate().try_for_each(|(i, p)| p.wipc.check(&format!("pts[{i}]")))
    }
}

/// Several results files as one review (for `flashlab compare`): their jobs
/// in file order, each labelled with its run's label where there are
/// several (so that two runs of one card and format differ in every name
/// and colour). An incomplete file keeps the merged one incomplete.
pub fn results_merge(all: Vec<(String, ReviewResults)>) -> Option<ReviewResults> {
    let several = all.len() > 1;
    // The seed the report names is a simulated run's (a measured one has none).
    let simulated_seed = all.iter().map(|(_, r)| r).find(|r| r.jobs.iter().any(|j| j.measured.is_none()) || !r.pts.is_empty()).map(|r| r.seed);
    let mut it = all.into_iter().map(|(label, mut r)| {
        if several {
            for j in &mut r.jobs {
                j.run = Some(label.clone());
            }
        }
        (label, r)
    });
    let (label, mut first) = it.next()?;
    first.seed = simulated_seed.unwrap_or(first.seed);
    let note = |label: &str, why: &str| format!("{label}: {why}");
    first.incomplete = first.incomplete.take().map(|w| note(&label, &w));
    for (label, r) in it {
        first.jobs.extend(r.jobs);
        first.pts.extend(r.pts);
        if let Some(why) = r.incomplete {
            first.incomplete = Some(first.incomplete.map_or(note(&label, &why), |w| format!("{w}; {}", note(&label, &why))));
        }
    }
    Some(first)
}

/// One figure of one test in a later run against the same test in the
/// first run that has it (same device, format, scale and profile).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Delta {
    pub device: String,
    pub format: String,
    pub profile: String,
    pub test: String,
    pub figure: &'static str,
    pub base_run: String,
    pub run: String,
    pub base: f64,
    pub value: f64,
    /// None where the base is zero (no percentage of it).
    pub delta_percent: Option<f64>,
}

/// Every later run's IOPS and average latency against the first run's,
/// test by test, where two runs hold the same job (`flashlab compare`).
pub fn deltas(r: &ReviewResults) -> Vec<Delta> {
    let key = |j: &JobResult| (j.device.id.clone(), j.device.format.clone(), j.device.scale, j.profile.clone());
    let mut out = Vec::new();
    for (i, j) in r.jobs.iter().enumerate() {
        let Some(base) = r.jobs[..i].iter().find(|b| key(b) == key(j) && b.run != j.run) else { continue };
        for t in &j.tests {
            let Some(bt) = base.test(&t.name) else { continue };
            let figures: [(&'static str, f64, f64); 2] =
                [("IOPS", bt.summary.all.iops, t.summary.all.iops), ("avg latency ms", bt.summary.all.latency_avg_ms, t.summary.all.latency_avg_ms)];
            for (figure, b, v) in figures {
                out.push(Delta {
                    device: j.device.name.clone(),
                    format: j.device.format.clone(),
                    profile: j.profile.clone(),
                    test: t.name.clone(),
                    figure,
                    base_run: base.run.clone().unwrap_or_default(),
                    run: j.run.clone().unwrap_or_default(),
                    base: b,
                    value: v,
                    delta_percent: (b != 0.0).then(|| (v - b) / b * 100.0),
                });
            }
        }
    }
    out
}
