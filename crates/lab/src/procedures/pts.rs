//! The SNIA Solid State Storage Performance Test Specification's sequence
//! (StorageReview.com's enterprise test procedure), on a simulated device:
//!
//! 1. purge (secure erase);
//! 2. workload-independent preconditioning: twice the user capacity in
//!    128 KiB sequential writes;
//! 3. IOPS test, workload-dependent preconditioning and measurement in one:
//!    rounds of random I/O over 7 read/write mixes x 8 block sizes, one
//!    round-length each, until the tracked variable (4 KiB 100% write IOPS)
//!    meets the SNIA steady-state criteria over 5 rounds (at most 25 rounds);
//!    the reported matrix is the window's average;
//! 4. throughput test: 128 KiB and 1024 KiB sequential, 100% write then 100%
//!    read;
//! 5. latency test: 1 thread at queue depth 1, 0.5/4/8 KiB x 100/0, 65/35
//!    and 0/100.
//!
//! Unlike the full PTS the throughput and latency tests follow the IOPS
//! test on the same device, without a purge of their own.

use crate::procedures::job::{Job, Reporter, ReviewEvent, ReviewSpec};
use crate::runs::phase::{Phase, SteadyReport};
use crate::runs::run::{device_info, DeviceInfo, Length, Progress, RunError, Session};
use crate::runs::steady;
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

/// The PTS on one device and format.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PtsResult {
    pub device: DeviceInfo,
    /// Workload-independent preconditioning.
    pub wipc: Phase,
    /// Every round of the IOPS test: 56 cells in the PTS's order.
    pub rounds: Vec<Vec<Cell>>,
    /// The tracked variable per round: 4 KiB 100% write IOPS.
    pub tracked: Vec<f64>,
    pub steady_state: SteadyReport,
    /// The IOPS matrix: each cell averaged over the steady-state window (the
    /// last 5 rounds when it was not reached).
    pub iops_matrix: Vec<Cell>,
    pub throughput: Vec<Cell>,
    pub latency: Vec<Cell>,
}

/// A mix of one block size, named as the PTS names its points.
pub fn mix_of(read_pct: u32, block_bytes: u32, sequential: bool) -> Mix {
    let kind = if sequential { "SEQ" } else { "RND" };
    let size = if block_bytes >= KIB as u32 { format!("{}KiB", block_bytes / KIB as u32) } else { format!("{block_bytes}B") };
    Mix { name: format!("{kind} {size} {read_pct}/{}", 100 - read_pct), read_ppm: read_pct * 10_000, sizes: vec![(block_bytes, 1_000_000)], sequential }
}

/// Runs the PTS sequence on one job's device and format.
pub fn pts_run(spec: &ReviewSpec, job: &Job, index: usize, events: &(dyn Fn(&ReviewEvent) + Sync)) -> Result<PtsResult, RunError> {
    let rep = Reporter { index, label: job.label(), events };
    let mut s = crate::runs::run::Session::new(&job.profile, &job.format, spec.scale, spec.seed, spec.interval_s)?;
    s.secure_erase()?;
    let wipc = wipc_run(&mut s, &rep)?;
    rep.step("IOPS rounds");
    let (rounds, tracked, window) = iops_rounds(&mut s, &rep)?;
    let reached = window.as_ref().is_some_and(|w| w.steady);
    let written = s.device.counters().host_slots_written as f64 / (s.device.capacity_bytes() / SLOT_BYTES) as f64;
    let steady_state = SteadyReport {
        reached,
        rounds: rounds.len(),
        drive_writes: written,
        window,
        tracked: "4KiB 100% write IOPS".into(),
        rule: "SNIA PTS IOPS rounds (25 at most)".into(),
        drift_percent_per_drive_write: None,
    };
    let summary = format!("{} after {} rounds", if reached { "steady state reached" } else { "STEADY STATE NOT REACHED (25 rounds)" }, rounds.len());
    rep.done("IOPS rounds", &summary);
    let iops_matrix = window_average(&rounds);
    let (throughput, latency) = throughput_latency_run(&mut s, spec, &rep)?;
    Ok(PtsResult {
        device: device_info(&job.profile, &job.format, spec.scale, &s.device),
        wipc,
        rounds,
        tracked,
        steady_state,
        iops_matrix,
        throughput,
        latency,
    })
}

/// Workload-independent preconditioning: twice the capacity in 128 KiB
/// sequential writes.
fn wipc_run(s: &mut Session, rep: &Reporter) -> Result<Phase, RunError> {
    rep.step("purge, precondition");
    let wipc_mix = mix_of(0, 128 * 1024, true);
    let ios = 2 * s.device.capacity_bytes() / (128 * 1024);
    let wipc = s.measure("wipc", &wipc_mix, 1, SEQ_QUEUE_DEPTH, Length::Ios(ios), &mut |p: &Progress| {
        rep.round(p, p.fraction, false, &format!("{:.2} drive writes", p.drive_writes));
    })?;
    rep.done("preconditioning", &format!("{:.0} MB/s", wipc.summary.write.mb_per_s));
    Ok(wipc)
}

/// Every round's cells, the tracked series, the last window judged.
type IopsRounds = (Vec<Vec<Cell>>, Vec<f64>, Option<steady::SteadyWindow>);

/// The IOPS test's rounds until the tracked 4 KiB write IOPS is steady (at
/// most `ROUNDS_MAX`): every round's cells, the tracked series, the last
/// window judged.
fn iops_rounds(s: &mut Session, rep: &Reporter) -> Result<IopsRounds, RunError> {
    let round = Length::Duration(s.interval_ns);
    let cells = IOPS_READ_PCTS.len() * IOPS_BLOCK_BYTES.len();
    let (mut rounds, mut tracked, mut window) = (Vec::new(), Vec::new(), None);
    for r in 0..ROUNDS_MAX {
        let mut row = Vec::with_capacity(cells);
        for (i, (rd, bs)) in IOPS_READ_PCTS.iter().flat_map(|&rd| IOPS_BLOCK_BYTES.iter().map(move |&bs| (rd, bs))).enumerate() {
            let mix = mix_of(rd, bs, false);
            let ph = s.measure(&mix.name, &mix, IOPS_THREADS, IOPS_QUEUE_DEPTH, round, &mut |p: &Progress| {
                let f = (r as f64 + i as f64 / cells as f64) / ROUNDS_MAX as f64;
                rep.round(p, f, true, &format!("round {} of at most {ROUNDS_MAX}, {}", r + 1, p.phase));
            })?;
            row.push(Cell::of(&mix, &ph));
        }
        tracked.push(cell(&row, 0, 4096).map_or(0.0, |c| c.iops));
        rounds.push(row);
        window = steady::latest(&tracked);
        if window.as_ref().is_some_and(|w| w.steady) {
            break;
        }
    }
    Ok((rounds, tracked, window))
}

/// Each cell averaged over the last window of rounds (maxima: the largest).
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

/// Throughput (sequential, 1 thread x 32) and latency (random, 1 x 1).
fn throughput_latency_run(s: &mut Session, spec: &ReviewSpec, rep: &Reporter) -> Result<(Vec<Cell>, Vec<Cell>), RunError> {
    rep.step("throughput, latency");
    let seq_len = Length::Duration(s.interval_ns * spec.rounds_4k as u64);
    let steps = THROUGHPUT_BLOCK_BYTES.len() * 2 + LATENCY_BLOCK_BYTES.len() * LATENCY_READ_PCTS.len();
    let seq = THROUGHPUT_BLOCK_BYTES.iter().flat_map(|&bs| [0, 100].map(|rd| (rd, bs, true, SEQ_QUEUE_DEPTH)));
    let lat = LATENCY_READ_PCTS.iter().flat_map(|&rd| LATENCY_BLOCK_BYTES.map(|bs| (rd, bs, false, 1)));
    let mut cells = Vec::with_capacity(steps);
    for (done, (rd, bs, sequential, qd)) in seq.chain(lat).enumerate() {
        let mix = mix_of(rd, bs, sequential);
        let ph = s.measure(&mix.name, &mix, 1, qd, seq_len, &mut |p: &Progress| rep.round(p, done as f64 / steps as f64, false, p.phase))?;
        cells.push(Cell::of(&mix, &ph));
    }
    let latency = cells.split_off(THROUGHPUT_BLOCK_BYTES.len() * 2);
    let summary = format!(
        "SEQ 1024KiB write {:.0} MB/s, read {:.0} MB/s; RND 4KiB read QD1 {:.3} ms",
        cells[2].mb_per_s,
        cells[3].mb_per_s,
        cell(&latency, 100, 4096).map_or(0.0, |c| c.latency_avg_ms)
    );
    rep.done("throughput, latency", &summary);
    Ok((cells, latency))
}
