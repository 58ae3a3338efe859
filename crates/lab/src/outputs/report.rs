//! What a review leaves in its output directory: the results file
//! (`results.json`), CSV tables, the charts as SVG files and a
//! self-contained HTML report (the same charts inlined).

use crate::outputs::chart::{color, esc, num, Band, BarChart, LineChart, Series};
use crate::procedures::job::{Tests, MATRIX_QUEUE_DEPTHS, MATRIX_THREADS, PROFILES};
use crate::procedures::pts::PtsResult;
use crate::procedures::review::{JobResult, ReviewResults};
use crate::runs::metrics::Summary;
use crate::runs::phase::Phase;
use crate::runs::steady;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot write {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("cannot write {path}: {msg}")]
    Csv { path: String, msg: String },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |source| ReportError::Io { path: path.display().to_string(), source }
}

/// Makes `dir` and proves it writable, before hours of work go into it.
pub fn out_dir_prepare(dir: &Path) -> Result<(), ReportError> {
    std::fs::create_dir_all(dir.join("charts")).map_err(io_err(dir))?;
    let probe = dir.join(".flashlab-write-test");
    std::fs::write(&probe, b"").map_err(io_err(dir))?;
    std::fs::remove_file(&probe).map_err(io_err(dir))
}

/// The reviewers' latency standard deviation of a phase: read and write
/// standard deviations averaged, weighted by their I/O counts (as the
/// per-interval attribute).
pub fn std_ms(s: &Summary) -> f64 {
    let n = s.read.ios + s.write.ios;
    if n == 0 {
        return 0.0;
    }
    (s.read.latency_std_ms * s.read.ios as f64 + s.write.latency_std_ms * s.write.ios as f64) / n as f64
}

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
    wa: f64,
    free_superblocks: u64,
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
    wa: f64,
}

#[derive(Serialize)]
struct SteadyRow<'a> {
    device: &'a str,
    format: &'a str,
    scale: u32,
    profile: &'a str,
    tracked: &'a str,
    rule: &'a str,
    reached: bool,
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
    by: accel::By,
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
}

fn csv_write<T: Serialize>(path: &Path, rows: impl IntoIterator<Item = T>) -> Result<(), ReportError> {
    let err = |e: csv::Error| ReportError::Csv { path: path.display().to_string(), msg: e.to_string() };
    let mut w = csv::Writer::from_path(path).map_err(err)?;
    for r in rows {
        w.serialize(r).map_err(err)?;
    }
    w.flush().map_err(io_err(path))
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
        latency_std_ms: std_ms(s),
        latency_p99_ms: s.all.latency_p99_ms,
        latency_p9999_ms: s.all.latency_p9999_ms,
        wa: t.wa,
    }
}

/// Writes the CSV tables; returns their paths.
pub fn csv_tables(r: &ReviewResults, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    let pre = dir.join("precondition.csv");
    csv_write(
        &pre,
        r.jobs.iter().flat_map(|j| {
            j.precondition.intervals.iter().enumerate().map(move |(i, iv)| PreRow {
                device: &j.device.id,
                format: &j.device.format,
                scale: j.device.scale,
                profile: &j.profile,
                workload: &j.preconditioner.name,
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
                wa: iv.wa,
                free_superblocks: iv.free_superblocks,
            })
        }),
    )?;
    let tests = dir.join("tests.csv");
    csv_write(&tests, r.jobs.iter().flat_map(|j| j.tests.iter().map(move |t| test_row(j, t))))?;
    let st = dir.join("steady_state.csv");
    csv_write(
        &st,
        r.jobs.iter().map(|j| {
            let s = j.precondition.steady_state.as_ref();
            let w = s.and_then(|s| s.window.as_ref());
            SteadyRow {
                device: &j.device.id,
                format: &j.device.format,
                scale: j.device.scale,
                profile: &j.profile,
                tracked: s.map_or("IOPS", |s| s.tracked.as_str()),
                rule: s.map_or("", |s| s.rule.as_str()),
                reached: s.is_some_and(|s| s.reached),
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
        }),
    )?;
    let publ = dir.join("published.csv");
    csv_write(
        &publ,
        r.jobs.iter().flat_map(|j| {
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
            })
        }),
    )?;
    let mut paths = vec![pre, tests, st, publ];
    if !r.pts.is_empty() {
        let pts = dir.join("pts.csv");
        let mut rows = Vec::new();
        for p in &r.pts {
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
            for (i, round) in p.rounds.iter().enumerate() {
                rows.extend(round.iter().map(|c| row(format!("iops round {}", i + 1), c)));
            }
            rows.extend(p.iops_matrix.iter().map(|c| row("iops steady-state average".into(), c)));
            rows.extend(p.throughput.iter().map(|c| row("throughput".into(), c)));
            rows.extend(p.latency.iter().map(|c| row("latency".into(), c)));
        }
        csv_write(&pts, rows)?;
        paths.push(pts);
    }
    Ok(paths)
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

/// One chart, named for its file.
struct Chart {
    file: String,
    caption: String,
    svg: String,
}

/// The four attributes of a round or a phase, as charts title them.
const ATTRIBUTES: [(&str, &str, &str); 4] = [
    ("iops", "throughput", "IOPS (read + write)"),
    ("latency-avg", "average latency", "average latency (ms)"),
    ("latency-max", "max latency", "max latency (ms)"),
    ("latency-std", "latency standard deviation", "latency std dev (ms)"),
];

fn slug(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect()
}

fn time_label(jobs: &[&JobResult]) -> String {
    let scale = jobs.first().map_or(1, |j| j.device.scale);
    if scale > 1 {
        format!("virtual minutes (devices at 1/{scale} scale fill {scale}x sooner)")
    } else {
        "virtual minutes".into()
    }
}

fn precondition_charts(profile: &str, title: &str, jobs: &[&JobResult]) -> Vec<Chart> {
    ATTRIBUTES
        .iter()
        .map(|&(key, what, y)| {
            let mut series = Vec::new();
            let mut bands = Vec::new();
            for (i, j) in jobs.iter().enumerate() {
                let iv = &j.precondition.intervals;
                let points = iv
                    .iter()
                    .map(|v| {
                        let val = match key {
                            "iops" => v.iops,
                            "latency-avg" => v.latency_avg_ms,
                            "latency-max" => v.latency_max_ms,
                            _ => v.latency_std_ms,
                        };
                        ((v.start_s + v.length_s) / 60.0, val)
                    })
                    .collect();
                series.push(Series { name: j.label(), points, dashed: false, color: color(i) });
                if let Some(w) = j.precondition.steady_state.as_ref().filter(|s| s.reached).and_then(|s| s.window.as_ref()) {
                    if let (Some(a), Some(z)) = (iv.get(w.first_round), iv.get(w.first_round + steady::WINDOW - 1)) {
                        bands.push(Band { x0: a.start_s / 60.0, x1: (z.start_s + z.length_s) / 60.0, label: "steady-state window".into(), color: color(i) });
                    }
                }
            }
            let c = LineChart {
                id: format!("{profile}-precondition-{key}"),
                title: format!("{title} preconditioning: {what}"),
                x_label: time_label(jobs),
                y_label: y.into(),
                series,
                bands,
                markers: false,
                ..Default::default()
            };
            Chart {
                file: format!("{profile}-precondition-{key}.svg"),
                caption: format!("Preconditioning, {what}: burst to steady state (shaded: the steady-state window)"),
                svg: c.svg(),
            }
        })
        .collect()
}

fn phase_value(t: &Phase, key: &str) -> f64 {
    let s = &t.summary;
    match key {
        "iops" => s.all.iops,
        "latency-avg" => s.all.latency_avg_ms,
        "latency-max" => s.all.latency_max_ms,
        _ => std_ms(s),
    }
}

fn four_k_charts(jobs: &[&JobResult]) -> Vec<Chart> {
    ATTRIBUTES
        .iter()
        .map(|&(key, what, y)| {
            let mut series = Vec::new();
            for j in jobs {
                let v = |name: &str| j.test(name).map(|t| phase_value(t, key));
                series.push((format!("{} (simulated)", j.label()), vec![v("4K read"), v("4K write")]));
                // The reviewers' figure beside it, where the profile has one.
                let metric = match key {
                    "iops" => Some(accel::Metric::Iops),
                    "latency-avg" => Some(accel::Metric::LatencyAvgMs),
                    "latency-max" => Some(accel::Metric::LatencyMaxMs),
                    _ => None,
                };
                let published = |w: &str| {
                    j.comparison
                        .iter()
                        .find(|c| c.by == accel::By::Reviewer && c.state == accel::State::Steady && Some(c.metric) == metric && c.workload == w)
                        .map(|c| c.published)
                };
                let p = vec![published("4k-read"), published("4k-write")];
                if p.iter().any(|v| v.is_some()) {
                    series.push((format!("{} (published)", j.label()), p));
                }
            }
            let c = BarChart {
                id: format!("4k-main-{key}"),
                title: format!("4K random, 16T/16Q: {what}"),
                y_label: y.into(),
                categories: vec!["100% read".into(), "100% write".into()],
                series,
            };
            Chart { file: format!("4k-main-{key}.svg"), caption: format!("4K random read and write at 16 threads x 16 queue depth: {what}"), svg: c.svg() }
        })
        .collect()
}

fn matrix_names() -> Vec<String> {
    MATRIX_THREADS.iter().flat_map(|t| MATRIX_QUEUE_DEPTHS.iter().map(move |q| format!("{t}T/{q}Q"))).collect()
}

fn matrix_charts(profile: &str, title: &str, jobs: &[&JobResult]) -> Vec<Chart> {
    let names = matrix_names();
    ATTRIBUTES
        .iter()
        .map(|&(key, what, y)| {
            let series = jobs
                .iter()
                .enumerate()
                .map(|(i, j)| Series {
                    name: j.label(),
                    points: names.iter().enumerate().filter_map(|(x, n)| j.test(n).map(|t| (x as f64, phase_value(t, key)))).collect(),
                    dashed: false,
                    color: color(i),
                })
                .collect();
            let c = LineChart {
                id: format!("{profile}-matrix-{key}"),
                title: format!("{title}: {what} by threads x queue depth"),
                x_label: "threads / queue depth per thread".into(),
                y_label: y.into(),
                x_names: names.clone(),
                series,
                markers: true,
                ..Default::default()
            };
            Chart { file: format!("{profile}-matrix-{key}.svg"), caption: format!("{title}, {what} from 2T/2Q to 16T/16Q"), svg: c.svg() }
        })
        .collect()
}

/// The SNIA convergence plot of one job: the tracked value per round, the
/// window, its mean, the +-10% band and the fitted line.
fn steady_chart(j: &JobResult) -> Chart {
    let y: Vec<f64> = j.precondition.intervals.iter().map(|v| v.iops).collect();
    let window = j.precondition.steady_state.as_ref().and_then(|s| s.window.as_ref());
    let id = format!("{}-{}-{}-steady", j.profile, j.device.id, slug(&j.device.format));
    let title = format!("{}: steady state, {} ({})", j.label(), j.profile_title, j.preconditioner.name);
    Chart { file: format!("{id}.svg"), caption: format!("{}: SNIA steady-state determination", j.label()), svg: snia_chart(&id, &title, "IOPS", &y, window) }
}

/// The SNIA plot of a tracked series: up to 20 rounds before the window,
/// the window shaded, its mean, the +-10% band and the least-squares line.
fn snia_chart(id: &str, title: &str, y_label: &str, y: &[f64], window: Option<&steady::SteadyWindow>) -> String {
    let from = window.map_or(0, |w| w.first_round.saturating_sub(20));
    let points = y.iter().enumerate().skip(from).map(|(i, v)| ((i + 1) as f64, *v)).collect();
    let mut series = vec![Series { name: format!("{y_label} per round"), points, dashed: false, color: color(0) }];
    let mut bands = Vec::new();
    if let Some(w) = window {
        let (a, z) = ((w.first_round + 1) as f64, (w.first_round + steady::WINDOW) as f64);
        let flat = |name: &str, v: f64, c: usize| Series { name: name.into(), points: vec![(a, v), (z, v)], dashed: true, color: color(c) };
        series.push(flat("window mean", w.mean, 1));
        series.push(flat("mean +10%", w.mean * 1.1, 2));
        series.push(flat("mean -10%", w.mean * 0.9, 2));
        series.push(Series {
            name: "least-squares fit".into(),
            points: vec![(a, w.intercept), (z, w.intercept + w.slope * (steady::WINDOW - 1) as f64)],
            dashed: true,
            color: color(3),
        });
        let verdict = if w.steady { "measurement window (steady)" } else { "last window judged (not steady)" };
        bands.push(Band { x0: a - 0.5, x1: z + 0.5, label: verdict.into(), color: color(2) });
    }
    LineChart {
        id: id.to_string(),
        title: title.to_string(),
        x_label: if from > 0 { format!("round (rounds {}-{} of {})", from + 1, y.len(), y.len()) } else { "round".into() },
        x_from: (from + 1) as f64,
        y_label: y_label.into(),
        series,
        bands,
        markers: y.len() - from <= 60,
        ..Default::default()
    }
    .svg()
}

fn size_name(b: u32) -> String {
    if b >= 1024 {
        format!("{}KiB", b / 1024)
    } else {
        format!("{:.1}KiB", b as f64 / 1024.0)
    }
}

fn steady_row(label: String, s: &crate::runs::phase::SteadyReport) -> Vec<String> {
    let w = s.window.as_ref();
    vec![
        esc(&label),
        esc(&s.tracked),
        if s.reached { "<span class=\"ok\">reached</span>".into() } else { "<span class=\"bad\">NOT REACHED (cap hit)</span>".into() },
        s.rounds.to_string(),
        w.map_or("-".into(), |w| format!("{}-{}", w.first_round + 1, w.first_round + steady::WINDOW)),
        w.map_or("-".into(), |w| num(w.mean)),
        w.map_or("-".into(), |w| format!("{} (max {})", num(w.range), num(w.range_allowed))),
        w.map_or("-".into(), |w| format!("{} (max {})", num(w.slope_excursion), num(w.slope_excursion_allowed))),
    ]
}

/// The PTS report of one device and format.
fn pts_section(out: &mut String, files: &mut Vec<Chart>, p: &PtsResult) {
    let label = format!("{} {}", p.device.name, p.device.format);
    let key = format!("pts-{}-{}", p.device.id, slug(&p.device.format));
    let _ = write!(out, "<h2 id=\"{key}\">SNIA PTS: {}</h2>", esc(&label));
    let _ = write!(
        out,
        "<p>Purge; workload-independent preconditioning: {:.2} drive writes of SEQ 128KiB writes at 1 thread x {} ({} MB/s); IOPS test in rounds of 7 read/write mixes x 8 block sizes at {}T/{}Q until the tracked 4KiB 100% write IOPS is steady (at most {} rounds); then throughput (SEQ, 1T/{}Q) and latency (RND, 1T/1Q).</p>",
        p.wipc.drive_writes,
        crate::procedures::pts::SEQ_QUEUE_DEPTH,
        num(p.wipc.summary.write.mb_per_s),
        crate::procedures::pts::IOPS_THREADS,
        crate::procedures::pts::IOPS_QUEUE_DEPTH,
        crate::procedures::pts::ROUNDS_MAX,
        crate::procedures::pts::SEQ_QUEUE_DEPTH
    );
    out.push_str("<h3>Steady-state determination</h3>");
    table(
        out,
        &["device", "tracked", "steady state", "rounds", "window (rounds)", "mean", "range", "slope excursion"],
        &[steady_row(label.clone(), &p.steady_state)],
    );
    // Convergence: 100% write IOPS of every block size per round.
    let series = crate::procedures::pts::IOPS_BLOCK_BYTES
        .iter()
        .enumerate()
        .map(|(i, &bs)| Series {
            name: size_name(bs),
            points: p.rounds.iter().enumerate().filter_map(|(r, row)| crate::procedures::pts::cell(row, 0, bs).map(|c| ((r + 1) as f64, c.iops))).collect(),
            dashed: false,
            color: color(i),
        })
        .collect();
    let conv = LineChart {
        id: format!("{key}-convergence"),
        title: format!("{label}: IOPS convergence, 100% write, by block size"),
        x_label: "round".into(),
        x_from: 1.0,
        y_label: "IOPS".into(),
        series,
        markers: true,
        ..Default::default()
    };
    let id = format!("{key}-steady");
    let charts = vec![
        Chart { file: format!("{key}-convergence.svg"), caption: "IOPS test: convergence of the 100% write IOPS, every block size".into(), svg: conv.svg() },
        Chart {
            file: format!("{id}.svg"),
            caption: "IOPS test: the tracked variable and its steady-state window".into(),
            svg: snia_chart(&id, &format!("{label}: steady state, RND 4KiB 100% write"), "IOPS", &p.tracked, p.steady_state.window.as_ref()),
        },
    ];
    // The IOPS matrix as the PTS plots it: IOPS by block size, a line a mix.
    let names: Vec<String> = crate::procedures::pts::IOPS_BLOCK_BYTES.iter().map(|&b| size_name(b)).collect();
    let series = crate::procedures::pts::IOPS_READ_PCTS
        .iter()
        .enumerate()
        .map(|(i, &rd)| Series {
            name: format!("{rd}/{}", 100 - rd),
            points: crate::procedures::pts::IOPS_BLOCK_BYTES
                .iter()
                .enumerate()
                .filter_map(|(x, &bs)| crate::procedures::pts::cell(&p.iops_matrix, rd, bs).map(|c| (x as f64, c.iops)))
                .collect(),
            dashed: false,
            color: color(i),
        })
        .collect();
    let mat = LineChart {
        id: format!("{key}-iops"),
        title: format!("{label}: IOPS by block size and read/write mix (steady-state average)"),
        x_label: "block size".into(),
        y_label: "IOPS".into(),
        x_names: names.clone(),
        series,
        markers: true,
        ..Default::default()
    };
    let mut charts = charts;
    charts.push(Chart { file: format!("{key}-iops.svg"), caption: "IOPS test: the steady-state matrix, a line per read/write mix".into(), svg: mat.svg() });
    figures(out, &charts);
    files.extend(charts);
    out.push_str("<h3>IOPS (steady-state window average)</h3>");
    let mut head = vec!["read/write mix".to_string()];
    head.extend(names.iter().cloned());
    let rows: Vec<Vec<String>> = crate::procedures::pts::IOPS_READ_PCTS
        .iter()
        .map(|&rd| {
            let mut r = vec![format!("{rd}/{}", 100 - rd)];
            for &bs in &crate::procedures::pts::IOPS_BLOCK_BYTES {
                r.push(crate::procedures::pts::cell(&p.iops_matrix, rd, bs).map_or("-".into(), |c| num(c.iops)));
            }
            r
        })
        .collect();
    let head_ref: Vec<&str> = head.iter().map(|s| s.as_str()).collect();
    table(out, &head_ref, &rows);
    out.push_str("<h3>Throughput (sequential, MB/s)</h3>");
    let rows: Vec<Vec<String>> = crate::procedures::pts::THROUGHPUT_BLOCK_BYTES
        .iter()
        .map(|&bs| {
            let f = |rd: u32| crate::procedures::pts::cell(&p.throughput, rd, bs).map_or("-".into(), |c| num(c.mb_per_s));
            vec![format!("SEQ {}", size_name(bs)), f(0), f(100)]
        })
        .collect();
    table(out, &["transfer", "100% write", "100% read"], &rows);
    out.push_str("<h3>Latency (1 thread, queue depth 1; average / max, ms)</h3>");
    let mut head = vec!["read/write mix".to_string()];
    head.extend(crate::procedures::pts::LATENCY_BLOCK_BYTES.iter().map(|&b| size_name(b)));
    let rows: Vec<Vec<String>> = crate::procedures::pts::LATENCY_READ_PCTS
        .iter()
        .map(|&rd| {
            let mut r = vec![format!("{rd}/{}", 100 - rd)];
            for &bs in &crate::procedures::pts::LATENCY_BLOCK_BYTES {
                r.push(
                    crate::procedures::pts::cell(&p.latency, rd, bs).map_or("-".into(), |c| format!("{} / {}", num(c.latency_avg_ms), num(c.latency_max_ms))),
                );
            }
            r
        })
        .collect();
    let head_ref: Vec<&str> = head.iter().map(|s| s.as_str()).collect();
    table(out, &head_ref, &rows);
}

const CSS: &str = "body{font-family:Helvetica,Arial,sans-serif;margin:24px auto;max-width:1560px;color:#222;padding:0 16px}\
h1{margin-bottom:4px}h2{border-bottom:2px solid #0072B2;padding-bottom:4px;margin-top:40px}\
.note{background:#fff8e1;border-left:4px solid #E69F00;padding:8px 12px}\
.grid{display:flex;flex-wrap:wrap;gap:16px}figure{margin:0}figcaption{font-size:13px;color:#555;max-width:720px}\
table{border-collapse:collapse;margin:12px 0;font-size:13px}th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}\
th{background:#f0f4f8}td:first-child,th:first-child{text-align:left}.bad{color:#b00020;font-weight:bold}.ok{color:#007a3d}\
svg.chart{max-width:100%;height:auto;border:1px solid #ddd}";

fn table(out: &mut String, head: &[&str], rows: &[Vec<String>]) {
    out.push_str("<table><tr>");
    for h in head {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr>");
    for r in rows {
        out.push_str("<tr>");
        for c in r {
            // Cells are escaped by their makers (some carry markup).
            let _ = write!(out, "<td>{c}</td>");
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
}

fn figures(out: &mut String, charts: &[Chart]) {
    out.push_str(r#"<div class="grid">"#);
    for c in charts {
        let _ = write!(out, "<figure>{}<figcaption>{} (<a href=\"charts/{}\">SVG</a>)</figcaption></figure>", c.svg, esc(&c.caption), esc(&c.file));
    }
    out.push_str("</div>");
}

/// Writes the charts and the HTML report; returns the report's path.
pub fn html_report(r: &ReviewResults, dir: &Path) -> Result<PathBuf, ReportError> {
    let mut out = String::new();
    let _ = write!(out, "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>flashlab review</title><style>{CSS}</style></head><body>");
    let infos: Vec<&crate::runs::run::DeviceInfo> = r.jobs.iter().map(|j| &j.device).chain(r.pts.iter().map(|p| &p.device)).collect();
    let devices: Vec<String> = {
        let mut d: Vec<String> = infos.iter().map(|d| format!("{} {}", d.name, d.format)).collect();
        d.dedup();
        d
    };
    let _ = write!(out, "<h1>flashlab review: {}</h1>", esc(&devices.join(", ")));
    let _ = write!(
        out,
        "<p class=\"note\">Simulated: every figure here comes from flashlab {}'s model of the device, in virtual time, not from a real card. \
         Seed {}; results in <a href=\"results.json\">results.json</a>, tables in <a href=\"precondition.csv\">precondition.csv</a>, \
         <a href=\"tests.csv\">tests.csv</a>, <a href=\"steady_state.csv\">steady_state.csv</a>, <a href=\"published.csv\">published.csv</a>{}.</p>",
        esc(&r.flashlab_version),
        r.seed,
        if r.pts.is_empty() { "" } else { " and <a href=\"pts.csv\">pts.csv</a>" }
    );
    // Devices under test.
    out.push_str("<h2>Devices under test</h2>");
    let mut seen = Vec::new();
    let rows: Vec<Vec<String>> = infos
        .iter()
        .filter(|d| {
            let k = (d.id.clone(), d.format.clone(), d.scale);
            let new = !seen.contains(&k);
            seen.push(k);
            new
        })
        .map(|d| {
            vec![
                esc(&d.name),
                esc(&d.format),
                if d.scale == 1 { "full size".into() } else { format!("1/{}", d.scale) },
                format!("{:.1}", d.capacity_bytes as f64 / 1e9),
                format!("{:.1}", d.raw_bytes as f64 / 1e9),
                d.dies.to_string(),
                format!("{:.1}%", d.effective_op * 100.0),
            ]
        })
        .collect();
    table(&mut out, &["device", "format", "scale", "usable GB", "raw GB", "dies", "effective OP"], &rows);
    let mut files: Vec<Chart> = Vec::new();
    for p in PROFILES {
        let jobs: Vec<&JobResult> = r.jobs.iter().filter(|j| j.profile == p.name).collect();
        if jobs.is_empty() {
            continue;
        }
        let _ = write!(out, "<h2 id=\"profile-{}\">{} profile</h2>", p.name, esc(p.title));
        let _ = write!(
            out,
            "<p>Secure erase, then preconditioning with <code>{}</code> at 16 threads x 16 queue depth until steady state (SNIA PTS: a window of {} rounds, range at most 20% of the mean, fitted-line excursion at most 10%).</p>",
            esc(&jobs[0].preconditioner.name),
            steady::WINDOW
        );
        out.push_str("<h3>Preconditioning</h3>");
        let charts = precondition_charts(p.name, p.title, &jobs);
        figures(&mut out, &charts);
        files.extend(charts);
        out.push_str("<h3>Steady-state determination</h3>");
        let rows: Vec<Vec<String>> = jobs
            .iter()
            .map(|j| {
                let s = j.precondition.steady_state.as_ref();
                let w = s.and_then(|s| s.window.as_ref());
                let reached = s.is_some_and(|s| s.reached);
                vec![
                    esc(&j.label()),
                    esc(s.map_or("-", |s| s.rule.as_str())),
                    if reached { "<span class=\"ok\">reached</span>".into() } else { "<span class=\"bad\">NOT REACHED</span>".into() },
                    s.map_or(0, |s| s.rounds).to_string(),
                    format!("{:.2}", j.precondition.drive_writes),
                    s.and_then(|s| s.drift_percent_per_drive_write).map_or("-".into(), |d| format!("{d:+.1}%")),
                    w.map_or("-".into(), |w| format!("{}-{}", w.first_round + 1, w.first_round + steady::WINDOW)),
                    w.map_or("-".into(), |w| num(w.mean)),
                    w.map_or("-".into(), |w| format!("{} (max {})", num(w.range), num(w.range_allowed))),
                    w.map_or("-".into(), |w| format!("{} (max {})", num(w.slope_excursion), num(w.slope_excursion_allowed))),
                ]
            })
            .collect();
        table(
            &mut out,
            &[
                "device",
                "preconditioning",
                "steady state (SNIA, last 5 rounds)",
                "rounds",
                "drive writes",
                "drift per drive write",
                "window (rounds)",
                "mean IOPS",
                "range",
                "slope excursion",
            ],
            &rows,
        );
        let charts: Vec<Chart> = jobs.iter().map(|j| steady_chart(j)).collect();
        figures(&mut out, &charts);
        files.extend(charts);
        out.push_str("<h3>Main tests</h3>");
        match p.tests {
            Tests::FourK => {
                let charts = four_k_charts(&jobs);
                figures(&mut out, &charts);
                files.extend(charts);
                let mut rows = Vec::new();
                for j in &jobs {
                    for (name, read) in [("4K read", true), ("4K write", false)] {
                        if let Some(t) = j.test(name) {
                            let d = if read { &t.summary.read } else { &t.summary.write };
                            rows.push(vec![
                                esc(&j.label()),
                                name.into(),
                                num(d.iops),
                                num(d.mb_per_s),
                                num(d.latency_avg_ms),
                                num(d.latency_max_ms),
                                num(d.latency_std_ms),
                                num(d.latency_p99_ms),
                                num(d.latency_p9999_ms),
                            ]);
                        }
                    }
                }
                table(&mut out, &["device", "test", "IOPS", "MB/s", "avg ms", "max ms", "std dev ms", "p99 ms", "p99.99 ms"], &rows);
            }
            Tests::Matrix => {
                let charts = matrix_charts(p.name, p.title, &jobs);
                figures(&mut out, &charts);
                files.extend(charts);
                let names = matrix_names();
                let mut rows = Vec::new();
                for j in &jobs {
                    for n in &names {
                        if let Some(t) = j.test(n) {
                            let s = &t.summary;
                            rows.push(vec![
                                esc(&j.label()),
                                esc(n),
                                num(s.all.iops),
                                num(s.all.mb_per_s),
                                num(s.all.latency_avg_ms),
                                num(s.all.latency_max_ms),
                                num(std_ms(s)),
                            ]);
                        }
                    }
                }
                table(&mut out, &["device", "T/Q", "IOPS", "MB/s", "avg ms", "max ms", "std dev ms"], &rows);
            }
        }
        utilisation_section(&mut out, &jobs);
        published_section(&mut out, &jobs);
    }
    for p in &r.pts {
        pts_section(&mut out, &mut files, p);
    }
    out.push_str("</body></html>\n");
    for c in &files {
        let path = dir.join("charts").join(&c.file);
        std::fs::write(&path, format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}\n", c.svg)).map_err(io_err(&path))?;
    }
    let path = dir.join("report.html");
    std::fs::write(&path, out).map_err(io_err(&path))?;
    Ok(path)
}

/// The published figures each job's phases were comparable to, judged.
fn published_section(out: &mut String, jobs: &[&JobResult]) {
    let cmp: Vec<Vec<String>> = jobs
        .iter()
        .flat_map(|j| {
            j.comparison.iter().map(move |c| {
                vec![
                    esc(&j.label()),
                    esc(&format!("{} ({})", c.what, c.metric.unit())),
                    esc(&c.conditions()),
                    esc(&c.published_text()),
                    num(c.simulated),
                    format!("{:+.1}%", c.error_percent),
                    format!("{:.0}%", c.tolerance_percent),
                    esc(&match &c.conflict {
                        Some(why) if !c.within => format!("conflict: {why}"),
                        _ => c.verdict().to_string(),
                    }),
                ]
            })
        })
        .collect();
    if !cmp.is_empty() {
        out.push_str("<h3>Published and simulated</h3>");
        let mut sources: Vec<String> = jobs.iter().flat_map(|j| j.comparison.iter().map(|c| c.source.clone())).collect();
        sources.sort();
        sources.dedup();
        table(out, &["device", "figure", "conditions", "published", "simulated", "error", "tolerance", "verdict"], &cmp);
        let _ = write!(out, "<p>Sources: {}</p>", esc(&sources.join("; ")));
    }
}

/// Why each test ran at its rate: every resource's busy share and the
/// bottleneck named where one is at least `BOTTLENECK_PERCENT_MIN` busy.
fn utilisation_section(out: &mut String, jobs: &[&JobResult]) {
    let Some(first) = jobs.iter().flat_map(|j| j.tests.iter()).find(|t| !t.utilisation.is_empty()) else { return };
    let names: Vec<&str> = first.utilisation.iter().map(|u| u.resource.as_str()).collect();
    let mut rows = Vec::new();
    for j in jobs {
        for t in j.tests.iter() {
            let mut row = vec![esc(&j.label()), esc(&t.name)];
            row.extend(names.iter().map(|n| t.utilisation.iter().find(|u| u.resource == *n).map_or("-".into(), |u| format!("{:.0}%", u.percent))));
            row.push(esc(if t.bottleneck.is_empty() { "none (the load sets the rate)" } else { &t.bottleneck }));
            rows.push(row);
        }
    }
    let mut head = vec!["device", "test"];
    head.extend(names.iter().copied());
    head.push("bottleneck");
    out.push_str("<h3>Why: resource utilisation</h3>");
    let _ = write!(
        out,
        "<p>Each resource's busy share over the test, in percent of its servers' time (never above 100%). The bottleneck is the busiest resource when it is at least {:.0}% busy.</p>",
        crate::runs::phase::BOTTLENECK_PERCENT_MIN
    );
    table(out, &head, &rows);
}

/// Everything a review leaves: results file, CSV tables, charts, report.
pub fn write_all(r: &ReviewResults, dir: &Path, results_file: bool) -> Result<Vec<PathBuf>, ReportError> {
    out_dir_prepare(dir)?;
    let mut paths = Vec::new();
    if results_file {
        let p = dir.join("results.json");
        let text = serde_json::to_string_pretty(r).expect("results serialise");
        std::fs::write(&p, text + "\n").map_err(io_err(&p))?;
        paths.push(p);
    }
    paths.extend(csv_tables(r, dir)?);
    paths.push(html_report(r, dir)?);
    Ok(paths)
}
