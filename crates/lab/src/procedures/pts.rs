//! The SNIA Solid State Storage Performance Test Specification (PTS)
//! Enterprise, on a simulated device, as PTS 2.0.2 (2020) orders it
//! (`PtsVersion::V2_0_2`, the default) or PTS-E 1.1 (`V1_1`). Each of its
//! tests runs on its own:
//!
//! 1. purge (secure erase);
//! 2. workload-independent preconditioning: twice the user capacity in
//!    128 KiB sequential writes;
//! 3. workload-dependent preconditioning and measurement in one: rounds of
//!    the test's cells, one round length each, until every tracking
//!    variable meets the SNIA steady-state criteria over the same 5 rounds
//!    (at most 25 rounds; the last five are the window, flagged, when
//!    they do not); the test's result is each cell averaged over the
//!    window.
//!
//! The tests and what each tracks:
//! - IOPS: 7 read/write mixes x 8 block sizes at 16T/16Q; PTS 2.0.2
//!   tracks RND 4KiB 0/100, 64KiB 65/35 and 1024KiB 100/0 IOPS, PTS-E 1.1
//!   RND 4KiB 0/100 IOPS alone;
//! - throughput: for 128 KiB and for 1024 KiB, each a test of its own,
//!   SEQ 100/0 and 0/100 at 1 thread x 32, tracking the 100% write MB/s;
//! - latency: 0.5, 4 and 8 KiB x 100/0, 65/35 and 0/100 at 1 thread x 1,
//!   tracking the RND 4KiB 0/100 average latency.

use crate::procedures::job::{Job, Reporter, ReviewEvent, ReviewSpec};
use crate::runs::phase::{Phase, SteadyReport};
use crate::runs::run::{device_info, DeviceInfo, Length, Progress, RunError, Session};
use crate::runs::steady::{self, SteadyWindow};
use crate::runs::workload::Mix;
use serde::{Deserialize, Serialize};
use units::{KIB, SLOT_BYTES};

/// Read shares of the IOPS matrix, percent, in the PTS's order.
pub const IOPS_READ_PCTS: [u32; 7] = [100, 95, 65, 50, 35, 5, 0];
/// Block sizes of the IOPS matrix, bytes, in the PTS's order.
pub const IOPS_BLOCK_BYTES: [u32; 8] = [1024 * 1024, 128 * 1024, 64 * 1024, 32 * 1024, 16 * 1024, 8 * 1024, 4 * 1024, 512];
pub const ROUNDS_MAX: usize = 25;
/// Outstanding I/Os of the IOPS test (the reviewers' heavy load).
pub const IOPS_THREADS: u32 = crate::runs::run::REVIEWERS_THREADS;
pub const IOPS_QUEUE_DEPTH: u32 = crate::runs::run::REVIEWERS_QUEUE_DEPTH;
/// Outstanding I/Os of the sequential tests: one stream, 32 deep.
pub const SEQ_QUEUE_DEPTH: u32 = 32;
pub const THROUGHPUT_BLOCK_BYTES: [u32; 2] = [128 * 1024, 1024 * 1024];
pub const LATENCY_BLOCK_BYTES: [u32; 3] = [512, 4 * 1024, 8 * 1024];
pub const LATENCY_READ_PCTS: [u32; 3] = [100, 65, 0];

/// One measured point.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cell {
    pub read_pct: u32,
    pub block_bytes: u32,
    pub sequential: bool,
    pub threads: u32,
    pub queue_depth: u32,
    pub iops: f64,
    pub mb_per_s: f64,
    pub latency_avg_ms: f64,
    pub latency_max_ms: f64,
    pub latency_p9999_ms: f64,
}

impl Cell {
    fn of(mix: &Mix, p: &Phase) -> Cell {
        let s = &p.summary.all;
        Cell {
            read_pct: mix.read_ppm / 10_000,
            block_bytes: mix.sizes[0].0,
            sequential: mix.sequential,
            threads: p.threads,
            queue_depth: p.queue_depth,
            iops: s.iops,
            mb_per_s: s.mb_per_s,
            latency_avg_ms: s.latency_avg_ms,
            latency_max_ms: s.latency_max_ms,
            latency_p9999_ms: s.latency_p9999_ms,
        }
    }
}

/// The cell of a read share and block size among `cells`.
pub fn cell(cells: &[Cell], read_pct: u32, block_bytes: u32) -> Option<&Cell> {
    cells.iter().find(|c| c.read_pct == read_pct && c.block_bytes == block_bytes)
}

pub use crate::procedures::job::PtsVersion;

/// The IOPS test's tracking variables in `version`: PTS 2.0.2's three,
/// PTS-E 1.1's one.
pub fn iops_tracking(version: PtsVersion) -> Vec<Tracking> {
    let iops = |read_pct, block_bytes| Tracking { read_pct, block_bytes, metric: Metric::Iops };
    match version {
        PtsVersion::V2_0_2 => vec![iops(0, 4096), iops(65, 64 * 1024), iops(100, 1024 * 1024)],
        PtsVersion::V1_1 => vec![iops(0, 4096)],
    }
}

/// What a tracking variable reads from its cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Metric {
    Iops,
    MbPerS,
    LatencyAvgMs,
}

impl Metric {
    /// The unit its values are in.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Iops => "IOPS",
            Metric::MbPerS => "MB/s",
            Metric::LatencyAvgMs => "ms",
        }
    }
}

/// A tracking variable: a cell of the test's rounds and what is read from
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tracking {
    pub read_pct: u32,
    pub block_bytes: u32,
    pub metric: Metric,
}

impl Tracking {
    pub fn name(&self) -> String {
        let what = match self.metric {
            Metric::Iops => "IOPS",
            Metric::MbPerS => "MB/s",
            Metric::LatencyAvgMs => "average latency",
        };
        format!("{} {}/{} {what}", size_name(self.block_bytes), self.read_pct, 100 - self.read_pct)
    }

    fn of(&self, round: &[Cell]) -> f64 {
        cell(round, self.read_pct, self.block_bytes).map_or(0.0, |c| match self.metric {
            Metric::Iops => c.iops,
            Metric::MbPerS => c.mb_per_s,
            Metric::LatencyAvgMs => c.latency_avg_ms,
        })
    }
}

/// A tracking variable's series over the rounds and its last window.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Tracked {
    pub name: String,
    /// The unit of its series (results of before it: none).
    #[serde(default)]
    pub unit: String,
    pub series: Vec<f64>,
    pub window: Option<SteadyWindow>,
}

/// One test of the PTS run to its own steady state: every round's cells,
/// each tracking variable, the determination and the window's average.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TestRounds {
    pub test: String,
    /// Its workload-independent preconditioning (after its purge).
    pub wipc: Phase,
    pub rounds: Vec<Vec<Cell>>,
    pub tracking: Vec<Tracked>,
    pub steady_state: SteadyReport,
    /// Each cell averaged over the window (maxima: the largest).
    pub average: Vec<Cell>,
}

/// The PTS on one device and format.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PtsResult {
    pub device: DeviceInfo,
    /// The version followed (results of before it were PTS-E 1.1's IOPS
    /// rule, with the throughput and latency tests run once after it).
    #[serde(default = "version_before")]
    pub version: PtsVersion,
    /// The IOPS test's workload-independent preconditioning.
    pub wipc: Phase,
    /// Every round of the IOPS test: 56 cells in the PTS's order.
    pub rounds: Vec<Vec<Cell>>,
    /// RND 4KiB 100% write IOPS per round (a tracking variable of every
    /// version).
    pub tracked: Vec<f64>,
    /// The IOPS test's tracking variables.
    #[serde(default)]
    pub iops_tracking: Vec<Tracked>,
    pub steady_state: SteadyReport,
    /// The IOPS matrix: each cell averaged over the steady-state window (the
    /// last 5 rounds when it was not reached).
    pub iops_matrix: Vec<Cell>,
    /// The throughput tests' window averages, 128 KiB then 1024 KiB.
    pub throughput: Vec<Cell>,
    /// The latency test's window average.
    pub latency: Vec<Cell>,
    /// The throughput tests (128 KiB, 1024 KiB), each to its own steady
    /// state.
    #[serde(default)]
    pub throughput_tests: Vec<TestRounds>,
    #[serde(default)]
    pub latency_test: Option<TestRounds>,
    /// The conditions the report's header states, taken from the run.
    #[serde(default)]
    pub conditions: Option<Conditions>,
}

/// The test conditions the PTS report's header names, as the run had
/// them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Conditions {
    /// The device's write cache: its buffer and whether it is protected
    /// against power loss.
    pub write_cache: String,
    /// What the I/Os carry.
    pub data_pattern: String,
    /// The share of the user capacity preconditioned and tested, bytes.
    pub active_range_bytes: u64,
    /// One round's (one cell's) length, virtual seconds.
    pub round_s: f64,
    pub seed: u64,
    /// What ran the test.
    pub platform: String,
    pub software: String,
}

impl Conditions {
    fn of(job: &Job, spec: &ReviewSpec, s: &Session) -> Conditions {
        let ftl = &job.profile.ftl;
        let buffer = job.profile.write_buffer_bytes(spec.scale) as f64 / 1048576.0;
        let protection = if ftl.power_loss_protection {
            "protected against power loss (every acknowledged write kept)"
        } else {
            "not protected (a write is kept once flushed)"
        };
        Conditions {
            write_cache: format!("write-back, {buffer:.1} MiB, {protection}"),
            data_pattern: "none: the simulated card moves no data (the exported fio jobs write random data, refill_buffers)".into(),
            active_range_bytes: s.device.capacity_bytes(),
            round_s: s.interval_ns as f64 / 1e9,
            seed: spec.seed,
            platform: format!("flashlab's simulated card in virtual time, scale 1/{}, on {}", spec.scale, s.device.profile.platform.name),
            software: format!("flashlab {}", env!("CARGO_PKG_VERSION")),
        }
    }
}

fn version_before() -> PtsVersion {
    PtsVersion::V1_1
}

/// A block size as the PTS names it: `4KiB`, `512B`.
fn size_name(block_bytes: u32) -> String {
    if block_bytes >= KIB as u32 {
        format!("{}KiB", block_bytes / KIB as u32)
    } else {
        format!("{block_bytes}B")
    }
}

/// A mix of one block size, named as the PTS names its points.
pub fn mix_of(read_pct: u32, block_bytes: u32, sequential: bool) -> Mix {
    let kind = if sequential { "SEQ" } else { "RND" };
    let size = size_name(block_bytes);
    Mix { name: format!("{kind} {size} {read_pct}/{}", 100 - read_pct), read_ppm: read_pct * 10_000, sizes: vec![(block_bytes, 1_000_000)], sequential }
}

/// Runs the PTS on one job's device and format: the IOPS test, the two
/// throughput tests and the latency test, each after its own purge and
/// preconditioning.
pub fn pts_run(spec: &ReviewSpec, job: &Job, index: usize, events: &(dyn Fn(&ReviewEvent) + Sync)) -> Result<PtsResult, RunError> {
    let rep = Reporter { index, label: job.label(), events };
    let mut s = crate::runs::run::Session::new(&job.profile, &job.format, spec.scale, spec.seed, spec.interval_s)?;
    let version = spec.pts_version;
    let iops = test_run(&mut s, &rep, &iops_plan(version))?;
    let mut throughput_tests = Vec::new();
    for bs in THROUGHPUT_BLOCK_BYTES {
        throughput_tests.push(test_run(&mut s, &rep, &throughput_plan(bs))?);
    }
    let latency_test = test_run(&mut s, &rep, &latency_plan())?;
    let tracked = iops.rounds.iter().map(|r| cell(r, 0, 4096).map_or(0.0, |c| c.iops)).collect();
    Ok(PtsResult {
        device: device_info(&job.profile, &job.format, spec.scale, &s.device),
        version,
        wipc: iops.wipc,
        rounds: iops.rounds,
        tracked,
        iops_tracking: iops.tracking,
        steady_state: iops.steady_state,
        iops_matrix: iops.average,
        throughput: throughput_tests.iter().flat_map(|t| t.average.iter().cloned()).collect(),
        latency: latency_test.average.clone(),
        throughput_tests,
        latency_test: Some(latency_test),
        conditions: Some(Conditions::of(job, spec, &s)),
    })
}

/// A test's cells (read share, block size, sequential, threads, queue
/// depth) in the PTS's order and its tracking variables.
pub struct TestPlan {
    pub test: String,
    pub cells: Vec<(u32, u32, bool, u32, u32)>,
    pub tracking: Vec<Tracking>,
}

/// The IOPS test: 7 mixes x 8 block sizes at 16T/16Q.
pub fn iops_plan(version: PtsVersion) -> TestPlan {
    let cells = IOPS_READ_PCTS.iter().flat_map(|&rd| IOPS_BLOCK_BYTES.iter().map(move |&bs| (rd, bs, false, IOPS_THREADS, IOPS_QUEUE_DEPTH))).collect();
    TestPlan { test: "IOPS".into(), cells, tracking: iops_tracking(version) }
}

/// A throughput test: SEQ `bs` 100% write, then 100% read, at 1 x 32,
/// tracking the write MB/s.
pub fn throughput_plan(bs: u32) -> TestPlan {
    let cells = [0, 100].map(|rd| (rd, bs, true, 1, SEQ_QUEUE_DEPTH)).to_vec();
    TestPlan {
        test: format!("throughput SEQ {}KiB", bs / KIB as u32),
        cells,
        tracking: vec![Tracking { read_pct: 0, block_bytes: bs, metric: Metric::MbPerS }],
    }
}

/// The latency test: 3 mixes x 3 block sizes at 1 x 1, tracking the RND
/// 4KiB 100% write average latency.
pub fn latency_plan() -> TestPlan {
    let cells = LATENCY_READ_PCTS.iter().flat_map(|&rd| LATENCY_BLOCK_BYTES.map(|bs| (rd, bs, false, 1, 1))).collect();
    TestPlan { test: "latency".into(), cells, tracking: vec![Tracking { read_pct: 0, block_bytes: 4096, metric: Metric::LatencyAvgMs }] }
}

/// One test: purge, workload-independent preconditioning, rounds to
/// steady state.
fn test_run(s: &mut Session, rep: &Reporter, plan: &TestPlan) -> Result<TestRounds, RunError> {
    s.secure_erase()?;
    let wipc = wipc_run(s, rep, &plan.test)?;
    let step = format!("{} rounds", plan.test);
    rep.step(&step);
    let round = Length::Duration(s.interval_ns);
    let n = plan.cells.len();
    let (rounds, tracking) = rounds_to_steady(&plan.tracking, |r| {
        let mut row = Vec::with_capacity(n);
        for (i, &(rd, bs, sequential, threads, qd)) in plan.cells.iter().enumerate() {
            let mix = mix_of(rd, bs, sequential);
            let ph = s.measure(&mix.name, &mix, threads, qd, round, &mut |p: &Progress| {
                let f = (r as f64 + i as f64 / n as f64) / ROUNDS_MAX as f64;
                rep.round(p, f, true, &format!("{}: round {} of at most {ROUNDS_MAX}, {}", plan.test, r + 1, p.phase));
            })?;
            row.push(Cell::of(&mix, &ph));
        }
        Ok(row)
    })?;
    let steady_state = determination(&tracking, rounds.len(), written_drive_writes(s), &plan.test);
    let summary =
        format!("{} after {} rounds", if steady_state.reached { "steady state reached" } else { "STEADY STATE NOT REACHED (25 rounds)" }, rounds.len());
    rep.done(&step, &summary);
    let average = window_average(&rounds);
    Ok(TestRounds { test: plan.test.clone(), wipc, rounds, tracking, steady_state, average })
}

fn written_drive_writes(s: &Session) -> f64 {
    s.device.counters().host_slots_written as f64 / (s.device.capacity_bytes() / SLOT_BYTES) as f64
}

/// Rounds, each made by `round` (given its index), until every tracking
/// variable is steady over the last `steady::WINDOW` rounds, or
/// `ROUNDS_MAX` rounds: the rounds and each variable's series and last
/// window.
pub fn rounds_to_steady(
    tracking: &[Tracking],
    mut round: impl FnMut(usize) -> Result<Vec<Cell>, RunError>,
) -> Result<(Vec<Vec<Cell>>, Vec<Tracked>), RunError> {
    assert!(!tracking.is_empty(), "a test tracks at least one variable");
    let mut rounds = Vec::new();
    let mut tracked: Vec<Tracked> =
        tracking.iter().map(|t| Tracked { name: t.name(), unit: t.metric.unit().into(), series: Vec::new(), window: None }).collect();
    for r in 0..ROUNDS_MAX {
        let row = round(r)?;
        for (t, v) in tracking.iter().zip(&mut tracked) {
            v.series.push(t.of(&row));
            v.window = steady::latest(&v.series);
        }
        rounds.push(row);
        if all_steady(&tracked) {
            break;
        }
    }
    Ok((rounds, tracked))
}

/// Whether every tracking variable is steady over the same (the last)
/// window.
pub fn all_steady(tracked: &[Tracked]) -> bool {
    !tracked.is_empty() && tracked.iter().all(|t| t.window.as_ref().is_some_and(|w| w.steady))
}

/// The determination of a test: reached when every variable is steady
/// over the last window; its window shown is the first variable's, and
/// the rule names every variable.
fn determination(tracked: &[Tracked], rounds: usize, drive_writes: f64, test: &str) -> SteadyReport {
    let names: Vec<&str> = tracked.iter().map(|t| t.name.as_str()).collect();
    SteadyReport {
        reached: all_steady(tracked),
        rounds,
        drive_writes,
        window: tracked.first().and_then(|t| t.window.clone()),
        tracked: names.join(", "),
        rule: format!("SNIA PTS {test} rounds: every tracking variable steady over the same 5 rounds (25 at most)"),
        drift_percent_per_drive_write: None,
    }
}

/// Workload-independent preconditioning: twice the capacity in 128 KiB
/// sequential writes.
fn wipc_run(s: &mut Session, rep: &Reporter, test: &str) -> Result<Phase, RunError> {
    rep.step(&format!("{test}: purge, precondition"));
    let wipc_mix = mix_of(0, 128 * 1024, true);
    let ios = 2 * s.device.capacity_bytes() / (128 * 1024);
    let wipc = s.measure("wipc", &wipc_mix, 1, SEQ_QUEUE_DEPTH, Length::Ios(ios), &mut |p: &Progress| {
        rep.round(p, p.fraction, false, &format!("{:.2} drive writes", p.drive_writes));
    })?;
    rep.done("preconditioning", &format!("{:.0} MB/s", wipc.summary.write.mb_per_s));
    Ok(wipc)
}

/// Each cell averaged over the last window of rounds (maxima and five
/// nines: the largest).
fn window_average(rounds: &[Vec<Cell>]) -> Vec<Cell> {
    let w = &rounds[rounds.len().saturating_sub(steady::WINDOW)..];
    let n = w.len() as f64;
    (0..w[0].len())
        .map(|i| {
            let mut c = w[0][i].clone();
            c.iops = w.iter().map(|r| r[i].iops).sum::<f64>() / n;
            c.mb_per_s = w.iter().map(|r| r[i].mb_per_s).sum::<f64>() / n;
            c.latency_avg_ms = w.iter().map(|r| r[i].latency_avg_ms).sum::<f64>() / n;
            c.latency_max_ms = w.iter().map(|r| r[i].latency_max_ms).fold(0.0, f64::max);
            c.latency_p9999_ms = w.iter().map(|r| r[i].latency_p9999_ms).fold(0.0, f64::max);
            c
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A round whose cells give `iops` for each of `version`'s IOPS
    /// tracking variables.
    fn round(tracking: &[Tracking], iops: &[f64]) -> Vec<Cell> {
        tracking
            .iter()
            .zip(iops)
            .map(|(t, &v)| Cell {
                read_pct: t.read_pct,
                block_bytes: t.block_bytes,
                sequential: false,
                threads: IOPS_THREADS,
                queue_depth: IOPS_QUEUE_DEPTH,
                iops: v,
                mb_per_s: 0.0,
                latency_avg_ms: 0.0,
                latency_max_ms: 0.0,
                latency_p9999_ms: 0.0,
            })
            .collect()
    }

    /// The rounds the IOPS test runs on `series` (one per tracking
    /// variable, indexed by round; the last value repeats).
    fn run(version: PtsVersion, series: &[Vec<f64>]) -> (usize, Vec<Tracked>) {
        let tracking = iops_tracking(version);
        let (rounds, tracked) = rounds_to_steady(&tracking, |r| {
            let iops: Vec<f64> = series.iter().map(|s| s[r.min(s.len() - 1)]).collect();
            Ok(round(&tracking, &iops))
        })
        .unwrap();
        (rounds.len(), tracked)
    }

    #[test]
    fn a_window_within_range_but_sloped_is_not_steady() {
        // Range 16% of the mean (<= 20%), the line rising 16% (> 10%).
        let w = steady::window_judge(&[92.0, 96.0, 100.0, 104.0, 108.0], 0).unwrap();
        assert!(w.range <= w.range_allowed && w.slope_excursion > w.slope_excursion_allowed && !w.steady, "{w:?}");
    }

    #[test]
    fn a_window_flat_but_too_wide_is_not_steady() {
        // No slope, range 30% of the mean.
        let w = steady::window_judge(&[85.0, 115.0, 100.0, 115.0, 85.0], 0).unwrap();
        assert!(w.slope_excursion <= w.slope_excursion_allowed && w.range > w.range_allowed && !w.steady, "{w:?}");
    }

    /// PTS 2.0.2: the 4 KiB write steady from the first round but the
    /// 64 KiB 65/35 still falling: no steady state until it settles; PTS-E
    /// 1.1 stops at the first window.
    #[test]
    fn a_second_tracking_variable_still_moving_holds_steady_state_off() {
        let flat = vec![100_000.0; 25];
        let falling = [90_000.0, 70_000.0, 55_000.0, 45_000.0, 40_000.0, 38_500.0, 38_000.0, 38_000.0, 38_000.0, 38_000.0, 38_000.0].to_vec();
        let (rounds, tracked) = run(PtsVersion::V2_0_2, &[flat.clone(), falling, vec![3_500.0]]);
        assert!(all_steady(&tracked));
        let w = tracked[1].window.as_ref().unwrap();
        assert!(rounds > 5 && w.steady && w.first_round == rounds - steady::WINDOW, "{rounds} rounds, window {w:?}");
        let first_steady = (steady::WINDOW..=11).find(|&n| steady::latest(&tracked[1].series[..n]).is_some_and(|w| w.steady)).unwrap();
        assert_eq!(rounds, first_steady, "it stops at the first window where all three are steady");
        let (rounds_1_1, _) = run(PtsVersion::V1_1, &[flat]);
        assert_eq!(rounds_1_1, steady::WINDOW, "PTS-E 1.1 tracks the 4 KiB write alone");
    }

    /// 25 rounds without steady state: the test stops there, the last five
    /// rounds are the window, judged not steady.
    #[test]
    fn twenty_five_rounds_without_steady_state_end_with_the_last_five_flagged() {
        let sawtooth: Vec<f64> = (0..30).map(|i| if i % 2 == 0 { 60_000.0 } else { 100_000.0 }).collect();
        let (rounds, tracked) = run(PtsVersion::V2_0_2, &[sawtooth, vec![38_000.0], vec![3_500.0]]);
        assert_eq!(rounds, ROUNDS_MAX);
        assert!(!all_steady(&tracked));
        let w = tracked[0].window.as_ref().unwrap();
        assert!(!w.steady && w.first_round == ROUNDS_MAX - steady::WINDOW, "{w:?}");
        let s = determination(&tracked, rounds, 0.0, "IOPS");
        assert!(!s.reached && s.tracked.contains("4KiB 0/100 IOPS") && s.tracked.contains("64KiB 65/35 IOPS"), "{s:?}");
    }

    /// The reported matrix is the window's average: rounds before it (a
    /// fresh card's) are not in it.
    #[test]
    fn the_matrix_averages_the_window_alone() {
        let tracking = iops_tracking(PtsVersion::V1_1);
        let rows: Vec<Vec<Cell>> = [300.0, 200.0, 100.0, 100.0, 100.0, 100.0, 100.0].iter().map(|&v| round(&tracking, &[v])).collect();
        assert_eq!(window_average(&rows)[0].iops, 100.0);
    }
}
