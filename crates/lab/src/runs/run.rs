//! One run: format (secure erase), optional preconditioning to steady
//! state, then the measured phase, with every figure kept for the results.

use crate::runs::failure::{FailSpec, FailureRun};
use crate::runs::metrics::{interval_of, Closed, Interval, Meter};
use crate::runs::phase::{drift_of, phase_states, utilisation_of, Phase, SteadyReport};
use crate::runs::steady;
use crate::runs::workload::{Mix, MixGen};
use card::{Device, DeviceCounters, Profile};
use serde::{Deserialize, Serialize};
use sim::{Engine, Io, Observer};
use units::{Ns, NS_PER_SEC, SLOT_BYTES};

pub use crate::runs::spec::*;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DeviceInfo {
    pub id: String,
    pub name: String,
    pub format: String,
    pub scale: u32,
    pub capacity_bytes: u64,
    pub raw_bytes: u64,
    pub dies: u32,
    pub effective_op: f64,
    /// The full-size card's usable capacity (a scaled card runs its drive
    /// writes in this share of the time); none for real storage and in
    /// results written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_capacity_bytes: Option<u64>,
    /// The most commands the card holds at once, where its driver limits
    /// them (more in flight wait in the host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_slots: Option<u32>,
    /// The host the simulated card ran on (`hosts/`); none for real
    /// storage and in results written before hosts were named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunResult {
    pub flashlab_version: String,
    pub note: String,
    pub seed: u64,
    pub settings: serde_json::Value,
    pub device: DeviceInfo,
    pub phases: Vec<Phase>,
    /// Published figures (reviewers' and vendor's) whose conditions a phase
    /// of this run met, judged.
    pub comparison: Vec<crate::runs::published::Check>,
    /// Die failures during the measured phase and their rebuilds.
    #[serde(default)]
    pub failures: Vec<crate::runs::failure::FailureReport>,
    /// Why the run is not whole (a stop asked for), where it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    /// What the figures do not stand for (conditions outside what the
    /// model holds for, a card without data to read), each a sentence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Where a run on real storage ran (`real::measured`, `real::measure`); none for
    /// a simulated card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<crate::runs::measurement::Measurement>,
}

/// Progress of a phase, for a progress display.
#[derive(Debug, Clone)]
pub struct Progress<'a> {
    pub phase: &'a str,
    /// The workload's name (a preconditioning phase's name does not say).
    pub workload: &'a str,
    pub virtual_s: f64,
    pub drive_writes: f64,
    pub last: &'a Interval,
    /// Fraction done: exact for a fixed duration or I/O count; for a search
    /// for steady state, the fraction of its cap, so that the phase may end
    /// sooner (`fraction_is_bound`) but never later than an ETA from it.
    pub fraction: f64,
    pub fraction_is_bound: bool,
}

enum Stop {
    Duration(Ns),
    /// A fixed duration at whose end the steady state is judged.
    Judged(Ns),
    Ios(u64),
    Steady {
        min_slots: u64,
        cap_slots: u64,
    },
    /// Until `failures` failures have happened and every rebuild has
    /// ended, then `after` more; at most `cap` in all.
    Rebuilt {
        failures: usize,
        after: Ns,
        cap: Ns,
    },
}

/// When a phase through failures may end: `after` past the last
/// rebuild's end, once `failures` have happened and every rebuild has
/// ended (`None` before).
fn rebuilt_end(dev: &Device, failures: usize, after: Ns) -> Option<Ns> {
    let ev = dev.failures();
    if ev.len() < failures || dev.rebuilding() {
        return None;
    }
    ev.iter().map(|e| e.rebuild_done_ns).collect::<Option<Vec<Ns>>>().map(|d| d.into_iter().max().unwrap_or(0) + after)
}

struct PhaseRun<'p> {
    meter: Meter,
    closed: Vec<Closed>,
    intervals: Vec<Interval>,
    stop: Stop,
    ios: u64,
    base: DeviceCounters,
    prev: DeviceCounters,
    steady: Option<SteadyReport>,
    /// Drive writes of the phase at the end of each round.
    round_dw: Vec<f64>,
    capacity_slots: u64,
    name: String,
    workload: String,
    progress: &'p mut dyn FnMut(&Progress),
    /// Ended by a stop asked for, at a round's close.
    interrupted: bool,
}

impl<'p> PhaseRun<'p> {
    /// A phase named `name` of workload `workload` about to run on `dev`.
    fn new(dev: &Device, meter: Meter, stop: Stop, (name, workload): (&str, &str), progress: &'p mut dyn FnMut(&Progress)) -> PhaseRun<'p> {
        let base = dev.counters();
        PhaseRun {
            meter,
            closed: Vec::new(),
            intervals: Vec::new(),
            stop,
            ios: 0,
            prev: base.clone(),
            base,
            steady: None,
            round_dw: Vec::new(),
            capacity_slots: dev.capacity_bytes() / SLOT_BYTES,
            name: name.to_string(),
            workload: workload.to_string(),
            progress,
            interrupted: false,
        }
    }

    /// The SNIA judgement of the last 5 rounds so far and the drift;
    /// `enough`: the phase has run the rule's minimum (else not reached).
    fn steady_report(&self, enough: bool) -> SteadyReport {
        let y: Vec<f64> = self.intervals.iter().map(|i| i.iops).collect();
        let window = steady::latest(&y);
        SteadyReport {
            reached: enough && window.as_ref().is_some_and(|w| w.steady),
            rounds: self.intervals.len(),
            drive_writes: self.round_dw.last().copied().unwrap_or(0.0),
            window,
            tracked: "IOPS".into(),
            rule: String::new(),
            drift_percent_per_drive_write: drift_of(&self.intervals, &self.round_dw),
        }
    }
}

impl Observer<Device> for PhaseRun<'_> {
    #[inline]
    fn complete(&mut self, dev: &mut Device, issued: Ns, completed: Ns, io: &Io) -> bool {
        self.meter.record(issued, completed, io, &mut self.closed);
        self.ios += 1;
        let mut go = true;
        if !self.closed.is_empty() {
            go = self.rounds_closed(dev, completed);
            if self.interrupted || self.meter.full() {
                return false;
            }
        }
        match self.stop {
            Stop::Duration(d) | Stop::Judged(d) => go && completed - self.meter.start < d,
            Stop::Ios(n) => go && self.ios < n,
            Stop::Steady { .. } => go,
            Stop::Rebuilt { failures, after, cap } => completed - self.meter.start < cap && rebuilt_end(dev, failures, after).is_none_or(|end| completed < end),
        }
    }
}

impl PhaseRun<'_> {
    /// Rounds the meter just closed: kept, reported, and judged for steady
    /// state; whether the phase goes on (an interrupt sets `interrupted`).
    #[inline(never)]
    fn rounds_closed(&mut self, dev: &mut Device, completed: Ns) -> bool {
        let mut go = true;
        {
            let c = dev.counters();
            for cl in self.closed.drain(..) {
                let iv = interval_of(&cl, self.meter.start, c.wa_since(&self.prev), c.free_superblocks);
                self.intervals.push(iv);
            }
            self.prev = c.clone();
            let written = c.host_slots_written - self.base.host_slots_written;
            let drive_writes = written as f64 / self.capacity_slots as f64;
            self.round_dw.resize(self.intervals.len(), drive_writes);
            let virtual_s = (completed - self.meter.start) as f64 / NS_PER_SEC as f64;
            let fraction = match self.stop {
                Stop::Duration(d) | Stop::Judged(d) | Stop::Rebuilt { cap: d, .. } => (completed - self.meter.start) as f64 / d as f64,
                Stop::Ios(n) => self.ios as f64 / n as f64,
                Stop::Steady { cap_slots, .. } => written as f64 / cap_slots as f64,
            };
            let fraction_is_bound = matches!(self.stop, Stop::Steady { .. } | Stop::Rebuilt { .. });
            (self.progress)(&Progress {
                phase: &self.name,
                workload: &self.workload,
                virtual_s,
                drive_writes,
                last: self.intervals.last().unwrap(),
                fraction: fraction.min(1.0),
                fraction_is_bound,
            });
            if crate::runs::interrupt::asked() {
                self.interrupted = true;
                return false;
            }
            if let Stop::Steady { min_slots, cap_slots } = self.stop {
                let report = self.steady_report(written >= min_slots);
                if report.reached || written >= cap_slots {
                    self.steady = Some(report);
                    go = false;
                }
            }
        }
        go
    }
}

#[allow(clippy::too_many_arguments)]
fn phase(
    engine: &mut Engine,
    dev: &mut Device,
    name: &str,
    mix: &Mix,
    threads: u32,
    qd: u32,
    stop: Stop,
    interval_ns: Ns,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Phase, RunError> {
    let base = dev.counters();
    let used0 = dev.busy_by(engine.now);
    let dies0 = dev.die_busy_by(engine.now);
    let mut run = PhaseRun::new(dev, Meter::new(engine.now, interval_ns), stop, (name, &mix.name), progress);
    let mut gen = MixGen::new(mix, dev.capacity_bytes());
    let start = engine.now;
    engine.run(dev, &mut gen, threads, qd, &mut run)?;
    if run.meter.full() {
        return Err(RunError::Input(format!(
            "{name}: {} rounds of {} virtual s, the most a run keeps, before its end: lengthen --interval (or shorten the run)",
            crate::runs::metrics::ROUNDS_MAX,
            interval_ns as f64 / NS_PER_SEC as f64
        )));
    }
    let elapsed = engine.now - start;
    // The next step starts once this one's I/Os have completed, as a
    // benchmark's next job does: the card never holds two steps' I/Os.
    engine.drain();
    if let (Stop::Judged(_) | Stop::Steady { .. }, None) = (&run.stop, &run.steady) {
        // Judged at its end; cut short, never steady.
        run.steady = Some(run.steady_report(!run.interrupted));
    }
    let end = dev.counters();
    let host = end.host_slots_written - base.host_slots_written;
    // Work booked past the phase's end (GC's backlog, a write buffer's
    // programs) is not the phase's.
    let used = dev.busy_by(start + elapsed);
    let (utilisation, bottleneck) = utilisation_of(&used0, &used, elapsed);
    Ok(Phase {
        name: name.to_string(),
        workload: mix.clone(),
        threads,
        queue_depth: qd,
        virtual_seconds: elapsed as f64 / NS_PER_SEC as f64,
        summary: run.meter.summary(elapsed),
        intervals: run.intervals,
        wa: end.wa_since(&base),
        wa_with_parity: end.wa_nand_since(&base),
        drive_writes: host as f64 / run.capacity_slots as f64,
        die_utilisation: if elapsed == 0 { 0.0 } else { ((dev.die_busy_by(start + elapsed) - dies0) as f64 / (elapsed as f64 * dev.dies() as f64)).min(1.0) },
        utilisation,
        bottleneck,
        read_errors: end.read_errors.since(&base.read_errors),
        page_reads: end.nand_page_reads_host + end.nand_page_reads_gc - base.nand_page_reads_host - base.nand_page_reads_gc,
        counters: end,
        steady_state: run.steady,
        host: Some(dev.profile.platform.id.clone()),
        interrupted: run.interrupted,
    })
}

/// A device in the lab: its state and clock carry from one step to the
/// next (secure erase, preconditioning, main tests), as on a real card.
/// A step starts once the last one's I/Os have completed (`Engine::drain`),
/// as a benchmark's next job does.
pub struct Session {
    pub device: Device,
    pub engine: Engine,
    pub interval_ns: Ns,
}

/// How a measured step ends.
#[derive(Debug, Clone, Copy)]
pub enum Length {
    Duration(Ns),
    Ios(u64),
}

impl Session {
    /// A formatted device and its clock. Rounds are `interval_s` long, or
    /// the device's own round for its scale when `None`.
    pub fn new(profile: &Profile, format: &str, scale: u32, seed: u64, interval_s: Option<f64>) -> Result<Session, RunError> {
        // The device first: a bad scale is the likelier mistake than the
        // interval derived from it.
        let device = Device::new(profile, format, scale)?;
        let interval_ns = match interval_s {
            None => device.round_ns(),
            Some(i) => interval_ns_of(i)?,
        };
        Ok(Session { device, engine: Engine::new(seed), interval_ns })
    }

    /// A copy of the session, its card's whole state and its clock (see
    /// `Device::snapshot`: none for a card that keeps data).
    pub fn snapshot(&self) -> Option<Session> {
        Some(Session { device: self.device.snapshot()?, engine: self.engine.clone(), interval_ns: self.interval_ns })
    }

    /// A session on a card whose blocks wear out (see `card::Aging`),
    /// rounds of the device's own length.
    pub fn aging(profile: &Profile, format: &str, scale: u32, seed: u64, aging: card::Aging) -> Result<Session, RunError> {
        let device = Device::aging(profile, format, scale, aging)?;
        let interval_ns = device.round_ns();
        Ok(Session { device, engine: Engine::new(seed), interval_ns })
    }

    /// The reviewers' round at this card's scale, in seconds (a
    /// session's own rounds may be shorter: `--interval`).
    pub fn round_s(&self) -> f64 {
        self.device.round_ns() as f64 / NS_PER_SEC as f64
    }

    pub fn secure_erase(&mut self) -> Result<(), RunError> {
        Ok(self.device.secure_erase()?)
    }

    /// Preconditions with `mix` at 16T/16Q by `rule`. The phase's
    /// steady-state report judges the last 5 rounds by the SNIA criteria
    /// either way ("not reached" when they fail) and gives the drift.
    pub fn precondition(&mut self, mix: &Mix, rule: Rule, progress: &mut dyn FnMut(&Progress)) -> Result<Phase, RunError> {
        rule.check()?;
        let cap = self.device.capacity_bytes() / SLOT_BYTES;
        let stop = match rule {
            Rule::Snia { min_drive_writes, cap_drive_writes } => {
                Stop::Steady { min_slots: (cap as f64 * min_drive_writes) as u64, cap_slots: (cap as f64 * cap_drive_writes) as u64 }
            }
            Rule::Hours(h) => {
                let share = self.device.capacity_bytes() as f64 / self.device.full_capacity_bytes() as f64;
                Stop::Judged((h * 3600.0 * NS_PER_SEC as f64 * share).round().max(1.0) as Ns)
            }
        };
        let mut ph =
            phase(&mut self.engine, &mut self.device, "precondition", mix, REVIEWERS_THREADS, REVIEWERS_QUEUE_DEPTH, stop, self.interval_ns, progress)?;
        if let Some(ss) = ph.steady_state.as_mut() {
            ss.rule = rule.describe();
        }
        Ok(ph)
    }

    /// Lets the card finish everything queued (buffered programs, garbage
    /// collection): the clock moves to when it is idle.
    pub fn idle(&mut self) {
        self.engine.now = self.engine.now.max(self.device.quiet_at());
    }

    /// Schedules `fails` (seconds from now) at a rebuild rate (the
    /// profile's if `None`); returns now.
    pub fn failures_schedule(&mut self, fails: &[FailSpec], rebuild_bytes_per_sec: Option<u64>) -> Result<Ns, RunError> {
        let start = self.engine.now;
        if let Some(r) = rebuild_bytes_per_sec {
            self.device.rebuild_rate_set(r);
        }
        for f in fails {
            self.device.fail_at(&f.target, start + (f.at_s * NS_PER_SEC as f64).round() as Ns)?;
        }
        Ok(start)
    }

    /// Runs `mix` at 16T/16Q while `fails` happen (seconds from the
    /// phase's start), in rounds of `interval_ns`, until every rebuild
    /// has ended and `after_rounds` more have run, or at most
    /// `cap_rounds` past the last failure (a rebuild not ended by then is
    /// reported so).
    #[allow(clippy::too_many_arguments)]
    pub fn through_failures(
        &mut self,
        name: &str,
        mix: &Mix,
        fails: &[FailSpec],
        rebuild_bytes_per_sec: Option<u64>,
        interval_ns: Ns,
        (after_rounds, cap_rounds): (u32, u32),
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<FailureRun, RunError> {
        assert!(!fails.is_empty(), "a phase through failures has failures");
        let before = self.device.failures().len();
        let start = self.failures_schedule(fails, rebuild_bytes_per_sec)?;
        let last = fails.iter().map(|f| (f.at_s * NS_PER_SEC as f64).round() as Ns).max().unwrap_or(0);
        let stop = Stop::Rebuilt { failures: before + fails.len(), after: after_rounds as Ns * interval_ns, cap: last + cap_rounds as Ns * interval_ns };
        let phase = phase(&mut self.engine, &mut self.device, name, mix, REVIEWERS_THREADS, REVIEWERS_QUEUE_DEPTH, stop, interval_ns, progress)?;
        let reports = self.device.failures()[before..].iter().map(|e| crate::runs::failure::report(e, start, &phase.intervals)).collect();
        Ok(FailureRun { phase, reports, rebuild_bytes_per_sec: self.device.rebuild_rate() })
    }

    /// Measures `mix` at `threads` x `queue_depth` for `length`.
    pub fn measure(
        &mut self,
        name: &str,
        mix: &Mix,
        threads: u32,
        queue_depth: u32,
        length: Length,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<Phase, RunError> {
        let stop = match length {
            Length::Duration(d) => Stop::Duration(d),
            Length::Ios(n) => Stop::Ios(n),
        };
        phase(&mut self.engine, &mut self.device, name, mix, threads, queue_depth, stop, self.interval_ns, progress)
    }
}

/// Runs a spec end to end. `progress` sees each interval as it closes.
pub fn run(profile: &Profile, spec: &RunSpec, progress: &mut dyn FnMut(&Progress)) -> Result<RunResult, RunError> {
    spec_check(spec)?;
    let mix = Mix::parse(&spec.workload)?;
    let mut session = Session::new(profile, &spec.format, spec.scale, spec.seed, Some(spec.interval_s))?;
    session.device.wear_set(spec.pe_cycles, 0.0, spec.seed);
    let mut phases = Vec::new();
    if spec.precondition {
        phases.push(session.precondition(&mix.preconditioner(), spec.rule(), progress)?);
        if crate::runs::interrupt::asked() {
            let mut r = result_of(profile, spec, &session, phases);
            r.incomplete = Some(incomplete_why("the precondition phase"));
            return Ok(r);
        }
    }
    if spec.age_days > 0.0 {
        session.device.wear_set(spec.pe_cycles, spec.age_days, spec.seed);
    }
    let length = match (spec.ios, spec.duration_s) {
        (Some(n), _) => Length::Ios(n),
        (None, Some(d)) => Length::Duration((d * NS_PER_SEC as f64).round() as Ns),
        (None, None) => Length::Duration(5 * session.interval_ns),
    };
    let start = session.failures_schedule(&spec.fail, spec.rebuild_bytes_per_sec)?;
    if let Some(x) = spec.random_faults {
        session.device.random_faults_set(x, spec.seed, start)?;
    }
    let warnings = warnings_of(profile, spec, &mix, &session.device);
    phases.push(session.measure("main", &mix, spec.threads, spec.queue_depth, length, progress)?);
    let main = phases.last().expect("the measured phase");
    let incomplete = main.interrupted.then(|| incomplete_why("the main phase"));
    let failures: Vec<_> = session.device.failures().iter().map(|e| crate::runs::failure::report(e, start, &main.intervals)).collect();
    let mut r = result_of(profile, spec, &session, phases);
    if !failures.is_empty() {
        // A card with a failed die is not the card the figures were
        // measured on: only the phases before the failure are compared.
        r.comparison = crate::runs::published::compare(profile, &spec.format, &phase_states(&r.phases[..r.phases.len() - 1]), Some(session.round_s()));
    }
    Ok(RunResult { failures, incomplete, warnings, ..r })
}

/// Below this share of LBAs holding data, a read workload's figures are
/// not those of a card in use.
const MAPPED_FOR_READS: f64 = 0.5;

/// What the measured phase's figures will not stand for, said before it
/// runs: wear or age past what the error model was fitted for, reads of a
/// card that holds little data.
fn warnings_of(profile: &Profile, spec: &RunSpec, mix: &Mix, device: &card::Device) -> Vec<String> {
    let mut w = Vec::new();
    if spec.scale > SCALE_CHECKED_MAX {
        w.push(format!(
            "--scale {}: a scaled card settles where the full-size card does only up to scale {SCALE_CHECKED_MAX} (checked within 3% on 4K write and 8K 70/30); beyond it a block holds so few pages that GC and the write buffer no longer behave as at full size, and figures move",
            spec.scale
        ));
    }
    w.extend(card::Age { pe_cycles: spec.pe_cycles, age_days: spec.age_days }.warnings(profile));
    let mapped = device.mapped_fraction();
    if mix.read_ppm > 0 && mapped < MAPPED_FOR_READS {
        w.push(format!(
            "the card holds data in {:.0}% of its LBAs: a read of a never-written LBA returns zeros without reading the NAND (the card has no page to read), so these read figures are not a filled card's; fill it first (--precondition)",
            mapped * 100.0
        ));
    }
    w
}

/// The largest scale checked against full size (`crates/lab/tests/scale.rs`).
pub const SCALE_CHECKED_MAX: u32 = 64;

/// What a results file says of a run a stop cut short.
pub fn incomplete_why(during: &str) -> String {
    format!("interrupted (SIGINT) during {during}: the figures are those of the rounds run before; later phases did not run")
}

/// The results file's content for phases run on a session.
pub fn result_of(profile: &Profile, spec: &RunSpec, session: &Session, phases: Vec<Phase>) -> RunResult {
    let comparison = crate::runs::published::compare(profile, &spec.format, &phase_states(&phases), Some(session.round_s()));
    RunResult {
        flashlab_version: env!("CARGO_PKG_VERSION").to_string(),
        note: "simulated: every figure comes from flashlab's model of the device, in virtual time".into(),
        seed: spec.seed,
        settings: serde_json::to_value(spec).expect("a spec serialises"),
        device: device_info(profile, &spec.format, spec.scale, &session.device),
        phases,
        comparison,
        failures: Vec::new(),
        incomplete: None,
        warnings: Vec::new(),
        measured: None,
    }
}

/// What the results say of the device under test.
pub fn device_info(profile: &Profile, format: &str, scale: u32, dev: &Device) -> DeviceInfo {
    DeviceInfo {
        id: profile.id.clone(),
        name: profile.name.clone(),
        format: format.to_string(),
        scale,
        capacity_bytes: dev.capacity_bytes(),
        raw_bytes: dev.raw_bytes(),
        dies: dev.dies(),
        effective_op: dev.effective_op(),
        full_capacity_bytes: Some(dev.full_capacity_bytes()),
        command_slots: profile.host.command_slots,
        host: Some(profile.platform.id.clone()),
    }
}
