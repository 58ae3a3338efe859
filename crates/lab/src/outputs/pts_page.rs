//! The report's SNIA PTS section for one device and format: the
//! steady-state determination, the IOPS test's convergence and matrix
//! (block sizes in a blue ramp, small to large; read/write mixes in a ramp
//! from all reads, blue, to all writes, red), and the throughput and
//! latency tables.

use crate::number::num;
use crate::outputs::chart::{esc, ramp, Bar3dChart, LegendItem, LineChart, Series, Stroke, Swatch};
use crate::outputs::figures::{slug, snia_chart, Chart, Colors};
use crate::outputs::page::{figures_of, table};
use crate::procedures::pts::{self, PtsResult};
use crate::runs::steady;
use std::fmt::Write as _;

fn size_name(b: u32) -> String {
    if b >= 1024 {
        format!("{}KiB", b / 1024)
    } else {
        format!("{:.1}KiB", b as f64 / 1024.0)
    }
}

fn mix_name(read_pct: u32) -> String {
    format!("{read_pct}/{}", 100 - read_pct)
}

/// Block sizes from light (small) to dark (large) blue.
fn size_color(i: usize) -> String {
    let n = pts::IOPS_BLOCK_BYTES.len();
    // IOPS_BLOCK_BYTES runs large to small.
    ramp("#08306b", "#9ecae1", i, n)
}

/// Read/write mixes from all reads (blue) to all writes (red).
fn mix_color(i: usize) -> String {
    ramp("#2c7bb6", "#d7191c", i, pts::IOPS_READ_PCTS.len())
}

fn window_cells(w: Option<&steady::SteadyWindow>) -> Vec<String> {
    vec![
        w.map_or("-".into(), |w| format!("{}-{}", w.first_round + 1, w.first_round + steady::WINDOW)),
        w.map_or("-".into(), |w| num(w.mean)),
        w.map_or("-".into(), |w| format!("{} (max {})", num(w.range), num(w.range_allowed))),
        w.map_or("-".into(), |w| format!("{} (max {})", num(w.slope_excursion), num(w.slope_excursion_allowed))),
        w.map_or("-".into(), |w| format!("y = {} + {} x", num(w.intercept), num(w.slope))),
    ]
}

fn reached(s: &crate::runs::phase::SteadyReport) -> String {
    if s.reached {
        "<span class=\"ok\">reached</span>".into()
    } else {
        "<span class=\"bad\">NOT REACHED (25 rounds: the last 5 are the window)</span>".into()
    }
}

/// A test's determination: a row per tracking variable (results of
/// before the tracking variables: the one tracked, from `s`).
fn steady_rows(test: &str, s: &crate::runs::phase::SteadyReport, tracking: &[pts::Tracked]) -> Vec<Vec<String>> {
    if tracking.is_empty() {
        let mut row = vec![esc(test), esc(&s.tracked), reached(s), s.rounds.to_string()];
        row.extend(window_cells(s.window.as_ref()));
        return vec![row];
    }
    tracking
        .iter()
        .map(|t| {
            let steady = if t.window.as_ref().is_some_and(|w| w.steady) { "steady" } else { "<span class=\"bad\">not steady</span>" };
            let mut row = vec![esc(test), esc(&t.name), format!("{} ({steady})", reached(s)), s.rounds.to_string()];
            row.extend(window_cells(t.window.as_ref()));
            row
        })
        .collect()
}

/// Every test of a result: name, determination, tracking variables.
fn tests_of(p: &PtsResult) -> Vec<(&str, &crate::runs::phase::SteadyReport, &[pts::Tracked])> {
    let mut t = vec![("IOPS", &p.steady_state, &p.iops_tracking[..])];
    t.extend(p.throughput_tests.iter().chain(&p.latency_test).map(|x| (x.test.as_str(), &x.steady_state, &x.tracking[..])));
    t
}

/// The PTS report of one device and format.
pub fn pts_section(out: &mut String, files: &mut Vec<Chart>, p: &PtsResult, colors: &Colors) {
    let label = format!("{} {}", p.device.name, p.device.format);
    let key = format!("pts-{}-{}", p.device.id, slug(&p.device.format));
    let _ = write!(out, "<h2 id=\"{key}\">SNIA PTS: {}</h2>", esc(&label));
    let own = if p.throughput_tests.is_empty() {
        "then throughput and latency once, on the same card, without a purge of their own (results of before the PTS 2.0.2 run)".to_string()
    } else {
        format!(
            "each test after a purge and a preconditioning of its own: IOPS (7 read/write mixes x 8 block sizes at {}T/{}Q), throughput (SEQ 128KiB and SEQ 1024KiB, each a test, at 1T/{}Q) and latency (RND 0.5, 4 and 8KiB at 1T/1Q), each in rounds until every tracking variable is steady over the same 5 rounds (at most {})",
            pts::IOPS_THREADS,
            pts::IOPS_QUEUE_DEPTH,
            pts::SEQ_QUEUE_DEPTH,
            pts::ROUNDS_MAX
        )
    };
    let _ = write!(
        out,
        "<p>{}: purge; workload-independent preconditioning: {:.2} drive writes of SEQ 128KiB writes at 1 thread x {} ({} MB/s); {own}.</p>",
        esc(p.version.name()),
        p.wipc.drive_writes,
        pts::SEQ_QUEUE_DEPTH,
        num(p.wipc.summary.write.mb_per_s),
    );
    if let Some(c) = &p.conditions {
        out.push_str("<h3>Test conditions</h3>");
        let rows = [
            (
                "device",
                format!("{} ({}), format {}, {} GB user capacity", p.device.name, p.device.id, p.device.format, num(p.device.capacity_bytes as f64 / 1e9)),
            ),
            ("write cache", c.write_cache.clone()),
            ("data pattern", c.data_pattern.clone()),
            ("active range", format!("100% of the user capacity (LBA 0 to {} bytes), preconditioning and test", c.active_range_bytes)),
            ("outstanding I/O", format!("IOPS {}T/{}Q; throughput 1T/{}Q; latency 1T/1Q", pts::IOPS_THREADS, pts::IOPS_QUEUE_DEPTH, pts::SEQ_QUEUE_DEPTH)),
            ("round", format!("{} s a cell (virtual time), seed {}", num(c.round_s), c.seed)),
            ("test platform", c.platform.clone()),
            ("software", c.software.clone()),
        ];
        let rows: Vec<Vec<String>> = rows.iter().map(|(k, v)| vec![esc(k), esc(v)]).collect();
        table(out, &["condition", "value"], &rows);
    }
    out.push_str("<h3>Steady-state determination</h3>");
    let head = ["test", "tracking variable", "steady state", "rounds", "window (rounds)", "mean", "range", "slope excursion", "least-squares fit"];
    let rows: Vec<Vec<String>> = tests_of(p).into_iter().flat_map(|(test, s, t)| steady_rows(test, s, t)).collect();
    table(out, &head, &rows);
    let mut charts = vec![convergence_chart(&key, &label, p)];
    charts.extend(tracking_charts(&key, &label, p, colors.get(&label)));
    charts.push(matrix_chart(&key, &label, p));
    charts.push(matrix_3d(&key, &label, p));
    charts.extend(latency_3d(&key, &label, p));
    figures_of(out, files, charts);
    iops_table(out, p);
    throughput_table(out, p);
    latency_table(out, p);
}

/// Each test's tracking variables per round, with their windows.
fn tracking_charts(key: &str, label: &str, p: &PtsResult, color: &str) -> Vec<Chart> {
    let mut out = Vec::new();
    let iops_first = [pts::Tracked { name: "4KiB 0/100 IOPS".into(), unit: "IOPS".into(), series: p.tracked.clone(), window: p.steady_state.window.clone() }];
    let iops = if p.iops_tracking.is_empty() { &iops_first[..] } else { &p.iops_tracking[..] };
    let tests = std::iter::once(("IOPS", iops)).chain(p.throughput_tests.iter().chain(&p.latency_test).map(|t| (t.test.as_str(), &t.tracking[..])));
    for (test, tracking) in tests {
        for t in tracking {
            let id = format!("{key}-steady-{}-{}", slug(test), slug(&t.name));
            let y_label = if t.unit.is_empty() { "value" } else { t.unit.as_str() };
            let svg = snia_chart(&id, &format!("{label}: {test} test, {}", t.name), y_label, &t.series, t.window.as_ref(), color);
            out.push(Chart { file: format!("{id}.svg"), caption: format!("{test} test: {} per round and its steady-state window", t.name), svg });
        }
    }
    out
}

fn legend_item(name: String, color: String) -> LegendItem {
    LegendItem { key: name.clone(), name, color, stroke: Stroke::Solid, swatch: Swatch::Line }
}

/// Convergence: 100% write IOPS of every block size per round.
fn convergence_chart(key: &str, label: &str, p: &PtsResult) -> Chart {
    let mut c = LineChart {
        id: format!("{key}-convergence"),
        title: format!("{label}: IOPS convergence, 100% write, by block size"),
        x_label: "round".into(),
        x_from: 1.0,
        y_label: "IOPS".into(),
        markers: true,
        ..Default::default()
    };
    for (i, &bs) in pts::IOPS_BLOCK_BYTES.iter().enumerate() {
        let points = p.rounds.iter().enumerate().filter_map(|(r, row)| pts::cell(row, 0, bs).map(|c| ((r + 1) as f64, c.iops))).collect();
        c.series.push(Series::line(&size_name(bs), points, &size_color(i), &size_name(bs)));
        c.legend.push(legend_item(size_name(bs), size_color(i)));
    }
    Chart { file: format!("{key}-convergence.svg"), caption: "IOPS test: convergence of the 100% write IOPS, every block size".into(), svg: c.svg() }
}

/// The IOPS matrix as the PTS plots it: IOPS by block size, a line a mix.
fn matrix_chart(key: &str, label: &str, p: &PtsResult) -> Chart {
    let mut c = LineChart {
        id: format!("{key}-iops"),
        title: format!("{label}: IOPS by block size and read/write mix (steady-state average)"),
        x_label: "block size".into(),
        y_label: "IOPS".into(),
        x_names: pts::IOPS_BLOCK_BYTES.iter().map(|&b| size_name(b)).collect(),
        markers: true,
        ..Default::default()
    };
    for (i, &rd) in pts::IOPS_READ_PCTS.iter().enumerate() {
        let points = pts::IOPS_BLOCK_BYTES.iter().enumerate().filter_map(|(x, &bs)| pts::cell(&p.iops_matrix, rd, bs).map(|c| (x as f64, c.iops))).collect();
        c.series.push(Series::line(&mix_name(rd), points, &mix_color(i), &mix_name(rd)));
        c.legend.push(legend_item(mix_name(rd), mix_color(i)));
    }
    Chart { file: format!("{key}-iops.svg"), caption: "IOPS test: the steady-state matrix, a line per read/write mix".into(), svg: c.svg() }
}

/// A 3D plot of `cells` by block size (`sizes`, small to large, left to
/// right) and read/write mix (`read_pcts`, 100% write in front).
fn plot_3d(id: String, title: String, y_label: &str, read_pcts: &[u32], sizes: &[u32], cells: &[pts::Cell], value: impl Fn(&pts::Cell) -> f64) -> String {
    let mut sizes = sizes.to_vec();
    sizes.sort_unstable();
    let mut mixes = read_pcts.to_vec();
    mixes.sort_unstable();
    Bar3dChart {
        id,
        title,
        y_label: y_label.into(),
        x_label: "block size".into(),
        x_names: sizes.iter().map(|&b| size_name(b)).collect(),
        z_names: mixes.iter().map(|&rd| mix_name(rd)).collect(),
        colors: mixes.iter().map(|&rd| mix_color(pts::IOPS_READ_PCTS.iter().position(|&r| r == rd).unwrap_or(0))).collect(),
        values: mixes.iter().map(|&rd| sizes.iter().map(|&bs| pts::cell(cells, rd, bs).map(&value)).collect()).collect(),
    }
    .svg()
}

/// The IOPS matrix in 3D, as the PTS report draws it.
fn matrix_3d(key: &str, label: &str, p: &PtsResult) -> Chart {
    let id = format!("{key}-iops-3d");
    let title = format!("{label}: IOPS, 3D (steady-state average)");
    let svg = plot_3d(id.clone(), title, "IOPS", &pts::IOPS_READ_PCTS, &pts::IOPS_BLOCK_BYTES, &p.iops_matrix, |c| c.iops);
    Chart { file: format!("{id}.svg"), caption: "IOPS test: the steady-state matrix in 3D (100% write in front)".into(), svg }
}

/// The latency test's average and maximum latencies in 3D.
fn latency_3d(key: &str, label: &str, p: &PtsResult) -> Vec<Chart> {
    type Value = fn(&pts::Cell) -> f64;
    let plots: [(&str, &str, Value); 2] = [("average", "avg", |c| c.latency_avg_ms), ("maximum", "max", |c| c.latency_max_ms)];
    plots
        .into_iter()
        .map(|(what, short, value)| {
            let id = format!("{key}-latency-{short}-3d");
            let title = format!("{label}: {what} latency at 1T/1Q, 3D");
            let svg = plot_3d(id.clone(), title, "ms", &pts::LATENCY_READ_PCTS, &pts::LATENCY_BLOCK_BYTES, &p.latency, value);
            Chart { file: format!("{id}.svg"), caption: format!("Latency test: {what} latency in 3D (100% write in front)"), svg }
        })
        .collect()
}

/// A table of read/write mixes (rows) by block sizes (columns) of `cells`.
fn mix_by_size_table(out: &mut String, title: &str, read_pcts: &[u32], sizes: &[u32], cells: &[pts::Cell], show: impl Fn(&pts::Cell) -> String) {
    let _ = write!(out, "<h3>{}</h3>", esc(title));
    let mut head = vec!["read/write mix".to_string()];
    head.extend(sizes.iter().map(|&b| size_name(b)));
    let rows: Vec<Vec<String>> = read_pcts
        .iter()
        .map(|&rd| std::iter::once(mix_name(rd)).chain(sizes.iter().map(|&bs| pts::cell(cells, rd, bs).map_or("-".into(), &show))).collect())
        .collect();
    let head_ref: Vec<&str> = head.iter().map(|s| s.as_str()).collect();
    table(out, &head_ref, &rows);
}

fn iops_table(out: &mut String, p: &PtsResult) {
    mix_by_size_table(out, "IOPS (steady-state window average)", &pts::IOPS_READ_PCTS, &pts::IOPS_BLOCK_BYTES, &p.iops_matrix, |c| num(c.iops));
}

fn throughput_table(out: &mut String, p: &PtsResult) {
    out.push_str("<h3>Throughput (sequential, MB/s)</h3>");
    let rows: Vec<Vec<String>> = pts::THROUGHPUT_BLOCK_BYTES
        .iter()
        .map(|&bs| {
            let f = |rd: u32| pts::cell(&p.throughput, rd, bs).map_or("-".into(), |c| num(c.mb_per_s));
            vec![format!("SEQ {}", size_name(bs)), f(0), f(100)]
        })
        .collect();
    table(out, &["transfer", "100% write", "100% read"], &rows);
}

fn latency_table(out: &mut String, p: &PtsResult) {
    let title = "Latency (1 thread, queue depth 1; average / 99.99th percentile / max, ms)";
    // A round of fewer than 10,000 I/Os has no five nines of its own: its
    // 99.99th percentile is its maximum, and the table says so.
    let round_s = p.conditions.as_ref().map(|c| c.round_s);
    let few = |c: &pts::Cell| round_s.map(|r| c.iops * r).filter(|&n| n < 10_000.0);
    mix_by_size_table(out, title, &pts::LATENCY_READ_PCTS, &pts::LATENCY_BLOCK_BYTES, &p.latency, |c| {
        let nines = match few(c) {
            Some(n) => format!("{} (the maximum: {} I/Os a round)", num(c.latency_p9999_ms), num(n.round())),
            None => num(c.latency_p9999_ms),
        };
        format!("{} / {nines} / {}", num(c.latency_avg_ms), num(c.latency_max_ms))
    });
}
