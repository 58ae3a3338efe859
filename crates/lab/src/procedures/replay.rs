//! A trace replayed on a simulated card, in virtual time: each I/O at its
//! recorded arrival (open loop, the times scaled by a speed), or as fast as
//! the card takes them at a queue depth (closed loop, the trace's order
//! kept). The card is first brought to a state: fresh, filled once by
//! sequential writes, or preconditioned to steady state by random writes.

use crate::metrics::{Closed, Meter, Summary};
use crate::run::{device_info, DeviceInfo, Rule, RunError, Session};
use crate::runs::trace::{Op, Record, Trace, ARRIVAL_NS_MAX};
use crate::workload::Mix;
use card::Profile;
use serde::{Deserialize, Serialize};
use sim::{Gate, Io, Target};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use units::{Ns, NS_PER_SEC};

/// How the trace's I/Os are issued.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pace {
    /// At the recorded times divided by `speed` (2: twice as fast).
    Trace { speed: f64 },
    /// `qd` I/Os in flight, the next issued as one completes.
    Closed { qd: u32 },
}

/// The card's state before the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Before {
    /// Just formatted: reads of never-written data touch no flash.
    Fresh,
    /// Written once over by 128 KiB sequential writes.
    Filled,
    /// Preconditioned by 4 KiB random writes to steady state (SNIA rule).
    Steady,
}

impl Before {
    pub const ALL: [Before; 3] = [Before::Fresh, Before::Filled, Before::Steady];

    /// Its name on the command line and in the output.
    pub fn name(self) -> &'static str {
        match self {
            Before::Fresh => "fresh",
            Before::Filled => "filled",
            Before::Steady => "steady",
        }
    }

    pub fn parse(name: &str) -> Result<Before, RunError> {
        Before::ALL.into_iter().find(|b| b.name() == name).ok_or_else(|| RunError::Input(format!("--before {name}: expected fresh, filled or steady")))
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ReplaySpec {
    pub format: String,
    pub scale: u32,
    pub seed: u64,
    pub pace: Pace,
    pub before: Before,
    /// Offsets past the card's capacity wrap around it (else refused).
    pub wrap: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ReplayResult {
    pub flashlab_version: String,
    pub note: String,
    pub spec: ReplaySpec,
    pub trace_format: String,
    pub device: DeviceInfo,
    /// Reads and writes replayed (flushes and trims run too, unmeasured),
    /// and the requests whose offset wrapped around the card.
    pub ios: u64,
    pub flushes: u64,
    pub trims: u64,
    pub wrapped: u64,
    /// Virtual seconds from the first arrival to the last completion.
    pub virtual_seconds: f64,
    /// The trace's own span (first to last arrival), seconds, at its speed.
    pub trace_seconds: f64,
    pub summary: Summary,
    /// The average latency the trace records (a served card's capture on
    /// this card, format and scale), ms, to set beside the replay's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_avg_ms: Option<f64>,
    /// NAND slots written per host slot over the replay (GC and parity
    /// included).
    pub write_amplification: f64,
    /// What the figures do not stand for, each a sentence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Checks the spec's numbers, naming the option.
fn spec_check(spec: &ReplaySpec) -> Result<(), RunError> {
    match spec.pace {
        Pace::Trace { speed } if !(speed.is_finite() && (1e-3..=1e6).contains(&speed)) => {
            Err(RunError::Input(format!("--speed {speed}: must be in 0.001..=1000000")))
        }
        Pace::Closed { qd } if !(1..=1 << 16).contains(&qd) => Err(RunError::Input(format!("--qd {qd}: must be in 1..=65536"))),
        _ => Ok(()),
    }
}

/// The trace's I/Os placed on a card of `capacity` bytes: wrapped around
/// it when asked, else the first past it refused.
struct Placer {
    capacity: u64,
    wrap: bool,
    /// The trace's highest byte, for the refusal's message.
    end_bytes: u64,
    /// Requests placed so far, and those that wrapped.
    n: u64,
    wrapped: u64,
}

impl Placer {
    fn place(&mut self, mut r: Record) -> Result<Record, RunError> {
        self.n += 1;
        let (i, capacity) = (self.n, self.capacity);
        if r.op == Op::Flush {
            return Ok(r);
        }
        if r.len as u64 > capacity {
            return Err(RunError::Input(format!("I/O {i} of the trace moves {} bytes, more than the card's {capacity}", r.len)));
        }
        if r.offset + r.len as u64 > capacity {
            if !self.wrap {
                return Err(RunError::Input(format!(
                    "I/O {i} of the trace ends at byte {}, past the card's {capacity} (the trace reaches {}): give --wrap to fold offsets around the card, or a larger format",
                    r.offset + r.len as u64,
                    self.end_bytes
                )));
            }
            r.offset %= capacity;
            if r.offset + r.len as u64 > capacity {
                r.offset = capacity - r.len as u64;
            }
            self.wrapped += 1;
        }
        Ok(r)
    }
}

/// The trace's requests as the card takes them, read from its file.
fn placed<'a>(trace: &'a Trace, placer: &'a mut Placer) -> impl Iterator<Item = Result<Record, RunError>> + 'a {
    trace.records().map(move |r| r.map_err(|e| RunError::Input(format!("the trace, {e}"))).and_then(|r| placer.place(r)))
}

/// Refuses, before the card is prepared, a trace the card cannot take
/// (read through only when its highest byte is past the card).
fn placement_check(trace: &Trace, capacity: u64, wrap: bool) -> Result<(), RunError> {
    if trace.end_bytes <= capacity {
        return Ok(());
    }
    let mut placer = Placer { capacity, wrap, end_bytes: trace.end_bytes, n: 0, wrapped: 0 };
    let checked = placed(trace, &mut placer).try_for_each(|r| r.map(|_| ()));
    checked
}

fn io_of(r: &Record) -> Io {
    Io { offset_bytes: r.offset, len_bytes: r.len, write: r.op == Op::Write }
}

/// Runs one request on the card at `t`: when it completes.
fn submit(s: &mut Session, t: Ns, r: &Record) -> Result<Ns, RunError> {
    Ok(match r.op {
        Op::Read | Op::Write => s.device.submit(t, &io_of(r))?,
        Op::Flush => s.device.flush(t)?,
        Op::Trim => s.device.trim_at(t, r.offset, r.len as u64)?,
    })
}

/// Brings the card to the state asked for.
fn prepare(s: &mut Session, before: Before) -> Result<(), RunError> {
    let quiet = &mut |_: &crate::run::Progress| {};
    match before {
        Before::Fresh => {}
        Before::Filled => {
            let mix = Mix::parse("128k-seq-write").expect("built-in workload");
            let ios = s.device.capacity_bytes() / mix.max_bytes() as u64;
            s.measure("fill", &mix, 16, 16, crate::run::Length::Ios(ios), quiet)?;
        }
        Before::Steady => {
            let mix = Mix::parse("4k-write").expect("built-in workload");
            s.precondition(&mix, Rule::Snia { min_drive_writes: 5.0, cap_drive_writes: 10.0 }, quiet)?;
        }
    }
    s.idle();
    Ok(())
}

/// A time on the trace's clock at `speed`, ns; the trace's span at that
/// speed must fit virtual time.
fn at_speed(at_ns: Ns, speed: f64) -> Ns {
    (at_ns as f64 / speed).round() as Ns
}

/// Replays `trace` on the card of `profile` as `spec` says.
pub fn replay(profile: &Profile, trace: &Trace, spec: &ReplaySpec) -> Result<ReplayResult, RunError> {
    spec_check(spec)?;
    let speed = if let Pace::Trace { speed } = spec.pace { speed } else { 1.0 };
    if trace.span_ns as f64 / speed > ARRIVAL_NS_MAX as f64 {
        return Err(RunError::Input(format!(
            "--speed {speed}: the trace's {:.3e} s would span more than virtual time holds (2^62 ns, about 146 years)",
            trace.span_ns as f64 / 1e9
        )));
    }
    let mut s = Session::new(profile, &spec.format, spec.scale, spec.seed, None)?;
    let capacity = s.device.capacity_bytes();
    placement_check(trace, capacity, spec.wrap)?;
    prepare(&mut s, spec.before)?;
    let base = s.device.counters();
    let start = s.engine.now;
    let mut meter = Meter::whole(start);
    let mut placer = Placer { capacity, wrap: spec.wrap, end_bytes: trace.end_bytes, n: 0, wrapped: 0 };
    let records = placed(trace, &mut placer);
    let end = match spec.pace {
        Pace::Trace { speed } => open_loop(&mut s, records, speed, &mut meter)?,
        Pace::Closed { qd } => closed_loop(&mut s, records, qd, &mut meter)?,
    };
    let elapsed = end.saturating_sub(start);
    let mut warnings = Vec::new();
    if spec.before == Before::Fresh && trace.reads > 0 {
        warnings.push(
            "the card was fresh: reads of data the trace did not write first touch no flash and cost only the command path (--before filled or steady)"
                .to_string(),
        );
    }
    Ok(ReplayResult {
        flashlab_version: env!("CARGO_PKG_VERSION").to_string(),
        note: "simulated: a trace replayed on a model of the card in virtual time".into(),
        spec: spec.clone(),
        trace_format: trace.format.name().into(),
        device: device_info(profile, &spec.format, spec.scale, &s.device),
        ios: trace.ios,
        flushes: trace.flushes,
        trims: trace.trims,
        wrapped: placer.wrapped,
        virtual_seconds: elapsed as f64 / NS_PER_SEC as f64,
        trace_seconds: trace.span_ns as f64 / speed / NS_PER_SEC as f64,
        summary: meter.summary(elapsed),
        recorded_avg_ms: trace
            .recorded_avg_ms
            .filter(|_| trace.captured_on.as_ref().is_some_and(|(id, f, sc)| *id == profile.id && *f == spec.format && *sc == spec.scale)),
        write_amplification: s.device.counters().wa_since(&base),
        warnings,
    })
}

/// A request's completion: metered if it is a read or a write (the
/// meter keeps no intervals: a replay reports the whole).
fn metered(meter: &mut Meter, closed: &mut Vec<Closed>, r: &Record, issued: Ns, done: Ns) {
    if r.is_io() {
        meter.record(issued, done, &io_of(r), closed);
        debug_assert!(closed.is_empty(), "a whole meter closes no interval");
    }
}

/// A request in flight: its completion, its issue and its place in the
/// trace (ties keep the trace's order).
type Flying = (Ns, Ns, u64);

/// Requests in flight in completion order, and those waiting in the host
/// for one of the card's command slots: what a replay holds. The requests
/// themselves are kept by their place, from the oldest not completed.
struct InFlight {
    pending: BinaryHeap<Reverse<Flying>>,
    gate: Option<Gate<(Ns, u64)>>,
    held: std::collections::VecDeque<Option<Record>>,
    /// The place of `held[0]`.
    first: u64,
}

impl InFlight {
    fn new(s: &Session) -> InFlight {
        InFlight { pending: BinaryHeap::new(), gate: s.device.command_slots().map(Gate::new), held: Default::default(), first: 0 }
    }

    fn record(&self, i: u64) -> Record {
        self.held[(i - self.first) as usize].expect("a request in flight is held")
    }

    /// `r` issued at `t`: submitted now if the card has a command slot for
    /// it, else when one frees.
    fn issue(&mut self, s: &mut Session, t: Ns, r: Record) -> Result<(), RunError> {
        let i = self.first + self.held.len() as u64;
        self.held.push_back(Some(r));
        if self.gate.as_mut().is_some_and(|g| !g.take((t, i))) {
            return Ok(());
        }
        let done = submit(s, t, &r)?;
        self.pending.push(Reverse((done, t, i)));
        Ok(())
    }

    /// The next completion at or before `upto`, taken out with its
    /// request; its command slot goes to the request that has waited
    /// longest, submitted then.
    fn complete(&mut self, s: &mut Session, upto: Ns) -> Result<Option<(Ns, Ns, Record)>, RunError> {
        let Some(&Reverse((done, issued, i))) = self.pending.peek() else { return Ok(None) };
        if done > upto {
            return Ok(None);
        }
        self.pending.pop();
        if let Some((waited_since, j)) = self.gate.as_mut().and_then(|g| g.release()) {
            let t = submit(s, done, &self.record(j))?;
            self.pending.push(Reverse((t, waited_since, j)));
        }
        let r = self.held[(i - self.first) as usize].take().expect("a request in flight is held");
        while self.held.front().is_some_and(Option::is_none) {
            self.held.pop_front();
            self.first += 1;
        }
        Ok(Some((done, issued, r)))
    }
}

/// Each I/O issued at its arrival; completions metered in time order
/// as later arrivals pass them. Returns the last completion.
fn open_loop(s: &mut Session, records: impl Iterator<Item = Result<Record, RunError>>, speed: f64, meter: &mut Meter) -> Result<Ns, RunError> {
    let start = s.engine.now;
    let mut flight = InFlight::new(s);
    let mut closed: Vec<Closed> = Vec::new();
    let mut last = start;
    for r in records {
        let r = r?;
        let t = start + at_speed(r.at_ns, speed);
        while let Some((done, issued, k)) = flight.complete(s, t)? {
            metered(meter, &mut closed, &k, issued, done);
            last = done;
        }
        flight.issue(s, t, r)?;
    }
    while let Some((done, issued, k)) = flight.complete(s, Ns::MAX)? {
        metered(meter, &mut closed, &k, issued, done);
        last = done;
    }
    s.engine.now = last;
    Ok(last)
}

/// The trace's I/Os in order, `qd` in flight: each completion issues the
/// next, and the last ones drain with nothing after them.
fn closed_loop(s: &mut Session, mut records: impl Iterator<Item = Result<Record, RunError>>, qd: u32, meter: &mut Meter) -> Result<Ns, RunError> {
    let start = s.engine.now;
    let mut flight = InFlight::new(s);
    let mut closed: Vec<Closed> = Vec::new();
    for r in records.by_ref().take(qd as usize) {
        flight.issue(s, start, r?)?;
    }
    let mut last = start;
    while let Some((done, issued, r)) = flight.complete(s, Ns::MAX)? {
        metered(meter, &mut closed, &r, issued, done);
        last = done;
        if let Some(next) = records.next() {
            flight.issue(s, done, next?)?;
        }
    }
    s.engine.now = last;
    Ok(last)
}

/// Replays ranked by average latency, lowest first (the order a reader
/// of the reviews' application charts ranks cards by).
pub fn ranked(results: &[ReplayResult]) -> Vec<&ReplayResult> {
    let mut r: Vec<&ReplayResult> = results.iter().collect();
    r.sort_by(|a, b| a.summary.all.latency_avg_ms.total_cmp(&b.summary.all.latency_avg_ms));
    r
}
