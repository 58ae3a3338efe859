//! A phase of a run as the results keep it: its figures, per-round series,
//! resource utilisation and bottleneck, and (for preconditioning) the
//! steady-state judgement and drift; the card's state in each phase.

use crate::runs::metrics::readback::Unbelievable;
use crate::runs::metrics::{Interval, Summary};
use crate::runs::steady::{self, SteadyWindow};
use crate::runs::workload::Mix;
use card::DeviceCounters;
use serde::{Deserialize, Serialize};
use units::Ns;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SteadyReport {
    pub reached: bool,
    pub rounds: usize,
    pub drive_writes: f64,
    /// The window that was judged last (the steady one when reached).
    pub window: Option<SteadyWindow>,
    pub tracked: String,
    /// How preconditioning ended (the rule, in words).
    #[serde(default)]
    pub rule: String,
    /// How much the tracked value still moved, in percent of its mean per
    /// drive write, over the last drive write (or the whole phase when
    /// shorter): how far from converged a "steady" figure is.
    #[serde(default)]
    pub drift_percent_per_drive_write: Option<f64>,
}

/// Rounds of the last drive write (at least a SNIA window), for the drift.
pub(crate) fn drift_of(intervals: &[Interval], round_dw: &[f64]) -> Option<f64> {
    let end = *round_dw.last()?;
    let first = round_dw.iter().position(|&d| d >= end - 1.0).unwrap_or(0).min(round_dw.len().saturating_sub(steady::WINDOW));
    let y: Vec<f64> = intervals[first..].iter().map(|i| i.iops).collect();
    steady::drift_percent(&round_dw[first..], &y)
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Phase {
    pub name: String,
    pub workload: Mix,
    pub threads: u32,
    pub queue_depth: u32,
    pub virtual_seconds: f64,
    pub summary: Summary,
    pub intervals: Vec<Interval>,
    /// Data write amplification over the phase: (host + GC) / host.
    pub wa: f64,
    /// NAND slots programmed (parity included) per host slot written.
    pub wa_with_parity: f64,
    pub drive_writes: f64,
    pub die_utilisation: f64,
    /// Each kind of resource's busy share over the phase, and the busiest.
    #[serde(default)]
    pub utilisation: Vec<Utilisation>,
    #[serde(default)]
    pub bottleneck: String,
    pub counters: DeviceCounters,
    /// Read retries and reads beyond ECC over the phase.
    #[serde(default)]
    pub read_errors: card::ErrorCounters,
    /// NAND page reads over the phase (host and GC): what the retries are
    /// a share of.
    #[serde(default)]
    pub page_reads: u64,
    pub steady_state: Option<SteadyReport>,
    /// The host the card ran on (`hosts/`), for a simulated card; absent
    /// for a phase measured on real storage (this machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The phase was cut short by a stop asked for (SIGINT): its figures
    /// are those of the rounds it ran.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

impl Phase {
    /// A phase read back from a results file: its figures (see
    /// `metrics::readback`), each named by its place under `at`.
    pub fn check(&self, at: &str) -> Result<(), Unbelievable> {
        let at = format!("{at} phase {}", self.name);
        use crate::runs::metrics::readback::{figure, share};
        figure(&format!("{at}: virtual_seconds"), self.virtual_seconds)?;
        figure(&format!("{at}: wa"), self.wa)?;
        figure(&format!("{at}: wa_with_parity"), self.wa_with_parity)?;
        figure(&format!("{at}: drive_writes"), self.drive_writes)?;
        share(&format!("{at}: die_utilisation"), self.die_utilisation)?;
        self.summary.check(&format!("{at}: summary"))?;
        self.intervals.iter().enumerate().try_for_each(|(i, iv)| iv.check(&format!("{at}: intervals[{i}]")))
    }
}

/// One kind of resource's share of time busy over a phase, in percent of
/// its servers' time. Work booked past the phase's end is left out
/// (`Device::busy_by`); an idle time a resource no longer remembers counts
/// as busy at both ends, and what that could add over 100 is cut.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Utilisation {
    pub resource: String,
    pub servers: u32,
    pub percent: f64,
}

/// Below this, no resource is named the bottleneck: the load (threads x
/// queue depth) or a wait that holds no resource sets the rate.
pub const BOTTLENECK_PERCENT_MIN: f64 = 80.0;

/// The utilisation table of a phase from the device's busy times at its
/// start and end, and the bottleneck it names.
pub fn utilisation_of(before: &[card::ResourceBusy], after: &[card::ResourceBusy], elapsed: Ns) -> (Vec<Utilisation>, String) {
    let rows: Vec<Utilisation> = before
        .iter()
        .zip(after)
        .map(|(b, a)| {
            debug_assert_eq!(b.name, a.name);
            let capacity = elapsed as f64 * a.servers.max(1) as f64;
            let share = if elapsed == 0 { 0.0 } else { (a.busy_ns - b.busy_ns) as f64 / capacity };
            Utilisation { resource: a.name.to_string(), servers: a.servers, percent: (share * 100.0).min(100.0) }
        })
        .collect();
    let top = rows.iter().max_by(|x, y| x.percent.total_cmp(&y.percent));
    let bottleneck = match top {
        Some(u) if u.percent >= BOTTLENECK_PERCENT_MIN => format!("{} ({:.0}%)", u.resource, u.percent),
        Some(u) => format!("none: the busiest resource, {}, is at {:.0}% (the load or a wait sets the rate)", u.resource, u.percent),
        None => String::new(),
    };
    (rows, bottleneck)
}

/// The card's state in each phase of a run that starts on a secure-erased
/// card: the first phase is fresh (its first round is the burst); a phase
/// after preconditioning is steady.
pub fn phase_states(phases: &[Phase]) -> Vec<(card::State, &Phase)> {
    phases
        .iter()
        .enumerate()
        .map(|(k, ph)| {
            let after_precondition = phases[..k].iter().any(|p| p.steady_state.is_some());
            (if after_precondition { card::State::Steady } else { card::State::Fresh }, ph)
        })
        .collect()
}
