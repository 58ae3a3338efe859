//! The review's CSV tables: every preconditioning round, every main test,
//! every steady-state judgement, every published figure set beside a
//! simulated one, and (with `--pts`) every PTS cell.

use crate::outputs::files::ReportError;
use crate::procedures::review::{JobResult, ReviewResults};
use crate::runs::phase::Phase;
use crate::runs::steady;
use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(Serialize)]
struct PreRow<'a> {
    device: &'a str,
    format: &'a str,
    scale: u32,
    profile: &'a str,
    workload: &'a str,
    round: usize,
    start_s: f64,
    length_s: f64,
    iops: f64,
    read_iops: f64,
    write_iops: f64,
    mb_per_s: f64,
    latency_avg_ms: f64,
    latency_max_ms: f64,
    latency_std_ms: f64,
    /// The card's own: empty for real storage (not measured there).
    wa: Option<f64>,
    free_superblocks: Option<u64>,
}

#[derive(Serialize)]
struct TestRow<'a> {
    device: &'a str,
    format: &'a str,
    scale: u32,
    profile: &'a str,
    test: &'a str,
    threads: u32,
    queue_depth: u32,
    virtual_s: f64,
    iops: f64,
    read_iops: f64,
    write_iops: f64,
    mb_per_s: f64,
    latency_avg_ms: f64,
    read_latency_avg_ms: f64,
    write_latency_avg_ms: f64,
    latency_max_ms: f64,
    latency_std_ms: f64,
    latency_p99_ms: f64,
    latency_p9999_ms: f64,
    /// The card's own: empty for real storage (not measured there).
    wa: Option<f64>,
}

#[derive(Serialize)]
struct SteadyRow<'a> {
    device: &'a str,
    format: &'a str,
    scale: u32,
    profile: &'a str,
    tracked: &'a str,
    rule: &'a str,
    /// Empty where no steady state was judged (the sequential fill).
    reached: Option<bool>,
    rounds: usize,
    drive_writes: f64,
    drift_percent_per_drive_write: Option<f64>,
    window_first_round: Option<usize>,
    window_last_round: Option<usize>,
    mean: Option<f64>,
    range: Option<f64>,
    range_allowed: Option<f64>,
    slope: Option<f64>,
    slope_excursion: Option<f64>,
    slope_excursion_allowed: Option<f64>,
}

#[derive(Serialize)]
struct PublishedRow<'a> {
    device: &'a str,
    format: &'a str,
    scale: u32,
    by: card::By,
    source: &'a str,
    figure: &'a str,
    conditions: String,
    unit: &'static str,
    published: String,
    simulated: f64,
    error_percent: f64,
    tolerance_percent: f64,
    verdict: &'static str,
    conflict: &'a str,
    gap: &'a str,
    /// For a maximum over rounds shorter than a full-size one: the share
    /// of its I/Os it was taken over.
    sample_share: Option<f64>,
}

/// Writes a table whole; a table with no rows is not written (a file is
/// whole or absent, never empty). Whether it was written.
fn csv_write<T: Serialize>(path: &Path, rows: impl IntoIterator<Item = T>) -> Result<bool, ReportError> {
    let err = |e: csv::Error| ReportError::Csv { path: path.display().to_string(), msg: e.to_string() };
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r).map_err(err)?;
    }
    let bytes = w.into_inner().map_err(|e| ReportError::Csv { path: path.display().to_string(), msg: e.to_string() })?;
    if bytes.is_empty() {
        return Ok(false);
    }
    crate::outputs::files::file_write(path, &bytes).map(|()| true)
}

fn test_row<'a>(j: &'a JobResult, t: &'a Phase) -> TestRow<'a> {
    let s = &t.summary;
    TestRow {
        device: &j.device.id,
        format: &j.device.format,
        scale: j.device.scale,
        profile: &j.profile,
        test: &t.name,
        threads: t.threads,
        queue_depth: t.queue_depth,
        virtual_s: t.virtual_seconds,
        iops: s.all.iops,
        read_iops: s.read.iops,
        write_iops: s.write.iops,
        mb_per_s: s.all.mb_per_s,
        latency_avg_ms: s.all.latency_avg_ms,
        read_latency_avg_ms: s.read.latency_avg_ms,
        write_latency_avg_ms: s.write.latency_avg_ms,
        latency_max_ms: s.all.latency_max_ms,
        latency_std_ms: s.latency_std_ms_reviewers(),
        latency_p99_ms: s.all.latency_p99_ms,
        latency_p9999_ms: s.all.latency_p9999_ms,
        wa: j.measured.is_none().then_some(t.wa),
    }
}

/// Writes the CSV tables; returns their paths.
pub fn csv_tables(r: &ReviewResults, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    let mut paths = Vec::new();
    let mut table = |name: &str, write: &dyn Fn(&Path) -> Result<bool, ReportError>| {
        let path = dir.join(name);
        if write(&path)? {
            paths.push(path);
        }
        Ok::<(), ReportError>(())
    };
    table("precondition.csv", &|p| csv_write(p, r.jobs.iter().flat_map(precondition_rows)))?;
    table("tests.csv", &|p| csv_write(p, r.jobs.iter().flat_map(|j| j.tests.iter().map(move |t| test_row(j, t)))))?;
    table("steady_state.csv", &|p| csv_write(p, r.jobs.iter().map(steady_row)))?;
    table("published.csv", &|p| csv_write(p, r.jobs.iter().flat_map(published_rows)))?;
    if r.jobs.iter().any(|j| j.failure.is_some()) {
        table("failure_rounds.csv", &|p| csv_write(p, r.jobs.iter().flat_map(failure_rounds)))?;
        table("failures.csv", &|p| csv_write(p, r.jobs.iter().flat_map(failure_rows)))?;
    }
    if !r.pts.is_empty() {
        table("pts.csv", &|p| csv_write(p, r.pts.iter().flat_map(pts_rows)))?;
    }
    let deltas = crate::procedures::review::deltas(r);
    if !deltas.is_empty() {
        table("deltas.csv", &|p| csv_write(p, deltas.iter()))?;
    }
    Ok(paths)
}

fn precondition_rows(j: &JobResult) -> impl Iterator<Item = PreRow<'_>> {
    round_rows(j, &j.precondition, &j.preconditioner.name)
}

/// The rounds of the phase through die failures (none without one).
fn failure_rounds(j: &JobResult) -> impl Iterator<Item = PreRow<'_>> {
    j.failure.iter().flat_map(move |f| round_rows(j, &f.phase, &j.workload.name))
}

#[derive(Serialize)]
struct FailureRow<'a> {
    device: &'a str,
    format: &'a str,
    scale: u32,
    profile: &'a str,
    failed: &'a str,
    failed_at_s: f64,
    rebuild_s: Option<f64>,
    rebuild_bytes: u64,
    rebuild_bytes_per_sec: u64,
    iops_before: Option<f64>,
    iops_during: Option<f64>,
    iops_during_min: Option<f64>,
    iops_after: Option<f64>,
    latency_max_during_ms: Option<f64>,
    slots_lost: usize,
}

fn failure_rows(j: &JobResult) -> impl Iterator<Item = FailureRow<'_>> {
    j.failure.iter().flat_map(move |f| {
        f.reports.iter().map(move |r| FailureRow {
            device: &j.device.id,
            format: &j.device.format,
            scale: j.device.scale,
            profile: &j.profile,
            failed: &r.event.what,
            failed_at_s: r.failed_at_s,
            rebuild_s: r.rebuild_s,
            rebuild_bytes: r.rebuild_bytes,
            rebuild_bytes_per_sec: f.rebuild_bytes_per_sec,
            iops_before: r.iops_before,
            iops_during: r.iops_during,
            iops_during_min: r.iops_during_min,
            iops_after: r.iops_after,
            latency_max_during_ms: r.latency_max_during_ms,
            slots_lost: r.event.lost_offsets.len(),
        })
    })
}

/// A phase's rounds, one row each.
fn round_rows<'a>(j: &'a JobResult, phase: &'a Phase, workload: &'a str) -> impl Iterator<Item = PreRow<'a>> {
    phase.intervals.iter().enumerate().map(move |(i, iv)| PreRow {
        device: &j.device.id,
        format: &j.device.format,
        scale: j.device.scale,
        profile: &j.profile,
        workload,
        round: i + 1,
        start_s: iv.start_s,
        length_s: iv.length_s,
        iops: iv.iops,
        read_iops: iv.read_iops,
        write_iops: iv.write_iops,
        mb_per_s: iv.mb_per_s,
        latency_avg_ms: iv.latency_avg_ms,
        latency_max_ms: iv.latency_max_ms,
        latency_std_ms: iv.latency_std_ms,
        wa: j.measured.is_none().then_some(iv.wa),
        free_superblocks: j.measured.is_none().then_some(iv.free_superblocks),
    })
}

/// The rule of a preconditioning with no steady state to judge.
const NOT_JUDGED: &str = "not judged: a fixed fill";

fn steady_row(j: &JobResult) -> SteadyRow<'_> {
    let s = j.precondition.steady_state.as_ref();
    let w = s.and_then(|s| s.window.as_ref());
    SteadyRow {
        device: &j.device.id,
        format: &j.device.format,
        scale: j.device.scale,
        profile: &j.profile,
        tracked: s.map_or("IOPS", |s| s.tracked.as_str()),
        rule: s.map_or(NOT_JUDGED, |s| s.rule.as_str()),
        reached: s.map(|s| s.reached),
        rounds: s.map_or(j.precondition.intervals.len(), |s| s.rounds),
        drive_writes: j.precondition.drive_writes,
        drift_percent_per_drive_write: s.and_then(|s| s.drift_percent_per_drive_write),
        window_first_round: w.map(|w| w.first_round + 1),
        window_last_round: w.map(|w| w.first_round + steady::WINDOW),
        mean: w.map(|w| w.mean),
        range: w.map(|w| w.range),
        range_allowed: w.map(|w| w.range_allowed),
        slope: w.map(|w| w.slope),
        slope_excursion: w.map(|w| w.slope_excursion),
        slope_excursion_allowed: w.map(|w| w.slope_excursion_allowed),
    }
}

fn published_rows(j: &JobResult) -> impl Iterator<Item = PublishedRow<'_>> {
    j.comparison.iter().map(move |c| PublishedRow {
        device: &j.device.id,
        format: &j.device.format,
        scale: j.device.scale,
        by: c.by,
        source: &c.source,
        figure: &c.what,
        conditions: c.conditions(),
        unit: c.metric.unit(),
        published: c.published_text(),
        simulated: c.simulated,
        error_percent: c.error_percent,
        tolerance_percent: c.tolerance_percent,
        verdict: c.verdict(),
        conflict: c.conflict.as_deref().unwrap_or(""),
        gap: c.gap.as_deref().unwrap_or(""),
        sample_share: c.sample_share,
    })
}

/// Every cell of a PTS result: each IOPS round, the steady-state average,
/// throughput and latency.
fn pts_rows(p: &crate::procedures::pts::PtsResult) -> Vec<PtsRow> {
    let row = |test: String, c: &crate::procedures::pts::Cell| PtsRow {
        device: p.device.id.clone(),
        format: p.device.format.clone(),
        scale: p.device.scale,
        test,
        read_pct: c.read_pct,
        block_bytes: c.block_bytes,
        sequential: c.sequential,
        threads: c.threads,
        queue_depth: c.queue_depth,
        iops: c.iops,
        mb_per_s: c.mb_per_s,
        latency_avg_ms: c.latency_avg_ms,
        latency_max_ms: c.latency_max_ms,
        latency_p9999_ms: c.latency_p9999_ms,
    };
    let mut rows = Vec::new();
    for (i, round) in p.rounds.iter().enumerate() {
        rows.extend(round.iter().map(|c| row(format!("iops round {}", i + 1), c)));
    }
    rows.extend(p.iops_matrix.iter().map(|c| row("iops steady-state average".into(), c)));
    for t in p.throughput_tests.iter().chain(&p.latency_test) {
        for (i, round) in t.rounds.iter().enumerate() {
            rows.extend(round.iter().map(|c| row(format!("{} round {}", t.test, i + 1), c)));
        }
    }
    rows.extend(p.throughput.iter().map(|c| row("throughput steady-state average".into(), c)));
    rows.extend(p.latency.iter().map(|c| row("latency steady-state average".into(), c)));
    rows
}

#[derive(Serialize)]
struct PtsRow {
    device: String,
    format: String,
    scale: u32,
    test: String,
    read_pct: u32,
    block_bytes: u32,
    sequential: bool,
    threads: u32,
    queue_depth: u32,
    iops: f64,
    mb_per_s: f64,
    latency_avg_ms: f64,
    latency_max_ms: f64,
    latency_p9999_ms: f64,
}
