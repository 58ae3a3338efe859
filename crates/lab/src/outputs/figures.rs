//! The review's charts: preconditioning curves, SNIA steady-state plots,
//! the 4K bars beside the published figures, and the thread/queue charts.
//! Each device and format keeps one colour in every chart of a report
//! (`Colors`); what is not a device (reference levels, fits, windows) is
//! drawn in neutral ink, and published figures in their device's colour,
//! hatched, with whiskers at their tolerance.

use crate::outputs::chart::{key_slug, BarChart, BarSeries, LegendItem, LineChart, Series, Stroke, Swatch, GREY, INK, PALETTE};
use crate::procedures::job::{matrix_name, MATRIX_QUEUE_DEPTHS, MATRIX_THREADS, SEQUENTIAL_TESTS};
use crate::procedures::review::{JobResult, ReviewResults};
use crate::runs::failure::FailureRun;
use crate::runs::phase::Phase;
use crate::runs::steady;

/// One chart, named for its file.
pub struct Chart {
    pub file: String,
    pub caption: String,
    pub svg: String,
}

/// Each device and format's colour, the same in every chart of a report,
/// handed out in the order the results first name them.
pub struct Colors {
    labels: Vec<String>,
}

impl Colors {
    pub fn of(r: &ReviewResults) -> Colors {
        let mut labels: Vec<String> = Vec::new();
        for l in r.jobs.iter().map(|j| j.label()).chain(r.pts.iter().map(|p| format!("{} {}", p.device.name, p.device.format))) {
            if !labels.contains(&l) {
                labels.push(l);
            }
        }
        Colors { labels }
    }

    pub fn get(&self, label: &str) -> &'static str {
        let i = self.labels.iter().position(|l| l == label).expect("every label of the results has a colour");
        PALETTE[i % PALETTE.len()]
    }

    fn item(&self, label: &str, swatch: Swatch) -> LegendItem {
        LegendItem { name: label.into(), color: self.get(label).into(), stroke: Stroke::Solid, swatch, key: label.into() }
    }
}

/// Where a job's figures come from, as legends say it.
fn provenance_of(j: &JobResult) -> &'static str {
    if j.measured.is_some() {
        "measured"
    } else {
        "simulated"
    }
}

/// The four attributes of a round or a phase, as charts title them.
pub const ATTRIBUTES: [(&str, &str, &str); 4] = [
    ("iops", "throughput", "IOPS (read + write)"),
    ("latency-avg", "average latency", "average latency (ms)"),
    ("latency-max", "max latency", "max latency (ms)"),
    ("latency-std", "latency standard deviation", "latency std dev (ms)"),
];

pub fn slug(s: &str) -> String {
    key_slug(s)
}

/// Preconditioning's time axis: hours on the full-size card (a scaled
/// card runs the same drive writes in its share of the time), or wall
/// hours on real storage, so that the reviewers' 12 hours read as 12
/// hours; a job's x is its seconds times its factor. Results that do not
/// say the full-size capacity keep virtual minutes.
fn time_axis(jobs: &[&JobResult]) -> (String, Vec<f64>) {
    let hours = |j: &&JobResult| match (&j.measured, j.device.full_capacity_bytes) {
        (Some(_), _) => Some(1.0 / 3600.0),
        (None, Some(full)) if j.device.capacity_bytes > 0 => Some(full as f64 / j.device.capacity_bytes as f64 / 3600.0),
        _ => None,
    };
    if let Some(f) = jobs.iter().map(hours).collect::<Option<Vec<f64>>>() {
        let label = match (jobs.iter().all(|j| j.measured.is_some()), jobs.iter().map(|j| j.device.scale).max().unwrap_or(1)) {
            (true, _) => "hours".to_string(),
            (false, 1) => "hours".to_string(),
            (false, n) => format!("hours on the full-size card (a card at 1/{n} scale runs them {n}x sooner)"),
        };
        return (label, f);
    }
    let scale = jobs.first().map_or(1, |j| j.device.scale);
    let label = if scale > 1 { format!("virtual minutes (devices at 1/{scale} scale fill {scale}x sooner)") } else { "virtual minutes".into() };
    (label, vec![1.0 / 60.0; jobs.len()])
}

fn round_value(v: &crate::runs::metrics::Interval, key: &str) -> f64 {
    match key {
        "iops" => v.iops,
        "latency-avg" => v.latency_avg_ms,
        "latency-max" => v.latency_max_ms,
        _ => v.latency_std_ms,
    }
}

pub fn phase_value(t: &Phase, key: &str) -> f64 {
    let s = &t.summary;
    match key {
        "iops" => s.all.iops,
        "latency-avg" => s.all.latency_avg_ms,
        "latency-max" => s.all.latency_max_ms,
        _ => s.latency_std_ms_reviewers(),
    }
}

/// The four attributes through preconditioning, a line per job, each
/// job's steady-state window shaded in its colour.
pub fn precondition_charts(profile: &str, title: &str, jobs: &[&JobResult], colors: &Colors) -> Vec<Chart> {
    ATTRIBUTES
        .iter()
        .map(|&(key, what, y)| {
            let (x_label, factors) = time_axis(jobs);
            let mut c = LineChart {
                id: format!("{profile}-precondition-{key}"),
                title: format!("{title} preconditioning: {what}"),
                x_label,
                y_label: y.into(),
                legend: jobs.iter().map(|j| colors.item(&j.label(), Swatch::Line)).collect(),
                ..Default::default()
            };
            for (j, &f) in jobs.iter().zip(&factors) {
                let (label, iv) = (j.label(), &j.precondition.intervals);
                let points = iv.iter().map(|v| ((v.start_s + v.length_s) * f, round_value(v, key))).collect();
                c.series.push(Series::line(&label, points, colors.get(&label), &label));
                let window = j.precondition.steady_state.as_ref().filter(|s| s.reached).and_then(|s| s.window.as_ref());
                if let Some((a, z)) = window.and_then(|w| Some((iv.get(w.first_round)?, iv.get(w.first_round + steady::WINDOW - 1)?))) {
                    let (x0, x1) = (a.start_s * f, (z.start_s + z.length_s) * f);
                    c.bands.push(crate::outputs::chart::Band {
                        x0,
                        x1,
                        label: format!("{label}: steady-state window"),
                        color: colors.get(&label).into(),
                        keys: vec![label],
                        show_label: false,
                    });
                }
            }
            Chart {
                file: format!("{profile}-precondition-{key}.svg"),
                caption: format!("Preconditioning, {what}: burst to steady state (shaded, in each device's colour: its steady-state window)"),
                svg: c.svg(),
            }
        })
        .collect()
}

/// The reviewers' steady-state figure a job's 4K test is compared with.
fn published_of(j: &JobResult, key: &str, workload: &str) -> Option<(f64, f64)> {
    let metric = match key {
        "iops" => card::Metric::Iops,
        "latency-avg" => card::Metric::LatencyAvgMs,
        "latency-max" => card::Metric::LatencyMaxMs,
        _ => return None,
    };
    j.comparison
        .iter()
        .find(|c| c.by == card::By::Reviewer && c.state == card::State::Steady && c.metric == metric && c.workload == workload)
        .map(|c| (c.published, c.tolerance_percent))
}

/// 4K read and write at 16T/16Q: a bar per job, and beside it the
/// reviewers' figure (hatched, whiskers at its tolerance) where one exists.
pub fn four_k_charts(jobs: &[&JobResult], colors: &Colors) -> Vec<Chart> {
    ATTRIBUTES
        .iter()
        .map(|&(key, what, y)| {
            let mut c = BarChart {
                id: format!("4k-main-{key}"),
                title: format!("4K random, 16T/16Q: {what}"),
                y_label: y.into(),
                categories: vec!["100% read".into(), "100% write".into()],
                ..Default::default()
            };
            for j in jobs {
                let label = j.label();
                let color = colors.get(&label).to_string();
                let values = ["4K read", "4K write"].map(|n| j.test(n).map(|t| phase_value(t, key))).to_vec();
                let name = format!("{label} ({})", provenance_of(j));
                c.series.push(BarSeries { name: name.clone(), values, color: color.clone(), key: label.clone(), ..Default::default() });
                c.legend.push(LegendItem { name, ..colors.item(&label, Swatch::Box) });
                let published = ["4k-read", "4k-write"].map(|w| published_of(j, key, w));
                if let Some(tol) = published.iter().flatten().map(|p| p.1).next() {
                    let key = format!("{label} published");
                    let name = format!("{label} (published, +-{tol:.0}%)");
                    let values = published.iter().map(|p| p.map(|p| p.0)).collect();
                    c.series.push(BarSeries { name: name.clone(), values, color, hatched: true, tolerance_percent: Some(tol), key: key.clone() });
                    c.legend.push(LegendItem { name, key, ..colors.item(&label, Swatch::Hatched) });
                }
            }
            Chart { file: format!("4k-main-{key}.svg"), caption: format!("4K random read and write at 16 threads x 16 queue depth: {what}"), svg: c.svg() }
        })
        .collect()
}

/// The sequential tests at 16T/16Q: throughput (MB/s) and average
/// latency, a bar per job, and beside it the vendor's rating (hatched,
/// whiskers at its tolerance) where the job's comparison holds one for
/// the same load on a filled card.
pub fn sequential_charts(jobs: &[&JobResult], colors: &Colors) -> Vec<Chart> {
    let attributes = [
        ("mb-per-s", "throughput", "throughput (MB/s)", card::Metric::MbPerS),
        ("latency-avg", "average latency", "average latency (ms)", card::Metric::LatencyAvgMs),
    ];
    attributes
        .iter()
        .map(|&(key, what, y, metric)| {
            let mut c = BarChart {
                id: format!("seq-main-{key}"),
                title: format!("Sequential, 16T/16Q (one stream): {what}"),
                y_label: y.into(),
                categories: SEQUENTIAL_TESTS.iter().map(|(n, _)| n.to_string()).collect(),
                ..Default::default()
            };
            for j in jobs {
                let label = j.label();
                let color = colors.get(&label).to_string();
                let how = provenance_of(j);
                let tests: Vec<Option<&Phase>> = SEQUENTIAL_TESTS.iter().map(|(n, _)| j.test(n)).collect();
                let values = tests.iter().map(|t| t.map(|t| crate::runs::published::of_phase(metric, &t.summary.all))).collect();
                c.series.push(BarSeries { name: format!("{label} ({how})"), values, color: color.clone(), key: label.clone(), ..Default::default() });
                c.legend.push(LegendItem { name: format!("{label} ({how})"), ..colors.item(&label, Swatch::Box) });
                let published: Vec<Option<&crate::runs::published::Check>> = tests
                    .iter()
                    .map(|t| {
                        t.and_then(|t| {
                            j.comparison.iter().find(|c| c.metric == metric && c.state == card::State::Filled && crate::runs::published::check_of(c, t))
                        })
                    })
                    .collect();
                if let Some(tol) = published.iter().flatten().map(|c| c.tolerance_percent).next() {
                    let key = format!("{label} published");
                    let name = format!("{label} (vendor rating, +-{tol:.0}%)");
                    let values = published.iter().map(|c| c.map(|c| c.published)).collect();
                    c.series.push(BarSeries { name: name.clone(), values, color, hatched: true, tolerance_percent: Some(tol), key: key.clone() });
                    c.legend.push(LegendItem { name, key, ..colors.item(&label, Swatch::Hatched) });
                }
            }
            Chart {
                file: format!("seq-main-{key}.svg"),
                caption: format!(
                    "128 KiB and 64 KiB sequential read and write at 16 threads x 16 queue depth, one stream, on a sequentially filled card: {what}"
                ),
                svg: c.svg(),
            }
        })
        .collect()
}

/// The latency percentiles of the QoS charts: name, legend entry, stroke.
const QOS: [(&str, &str, Stroke); 3] =
    [("p99", "99th percentile", Stroke::Dotted), ("p99.9", "99.9th percentile", Stroke::Dashed), ("p99.99", "99.99th percentile", Stroke::Solid)];

fn percentile(d: &crate::runs::metrics::DirStats, p: &str) -> f64 {
    match p {
        "p99" => d.latency_p99_ms,
        "p99.9" => d.latency_p999_ms,
        _ => d.latency_p9999_ms,
    }
}

/// Latency QoS of the 4K tests: p99, p99.9 and p99.99 of reads and of
/// writes at 16T/16Q, a bar per job.
pub fn four_k_qos_chart(jobs: &[&JobResult], colors: &Colors) -> Chart {
    let cells: Vec<(&str, &str, bool)> =
        [("4K read", true), ("4K write", false)].iter().flat_map(|&(t, read)| QOS.iter().map(move |q| (t, q.0, read))).collect();
    let mut c = BarChart {
        id: "4k-qos".into(),
        title: "4K random, 16T/16Q: latency QoS".into(),
        y_label: "latency (ms)".into(),
        categories: cells.iter().map(|&(_, q, read)| format!("{} {q}", if read { "read" } else { "write" })).collect(),
        ..Default::default()
    };
    for j in jobs {
        let label = j.label();
        let how = provenance_of(j);
        let values = cells.iter().map(|&(t, q, read)| j.test(t).map(|p| percentile(if read { &p.summary.read } else { &p.summary.write }, q))).collect();
        c.series.push(BarSeries { name: format!("{label} ({how})"), values, color: colors.get(&label).into(), key: label.clone(), ..Default::default() });
        c.legend.push(LegendItem { name: format!("{label} ({how})"), ..colors.item(&label, Swatch::Box) });
    }
    Chart {
        file: "4k-qos.svg".into(),
        caption: "4K random read and write at 16 threads x 16 queue depth: latency QoS (99th, 99.9th and 99.99th percentiles)".into(),
        svg: c.svg(),
    }
}

/// Latency QoS along the matrix's diagonal (2T/2Q to 16T/16Q, 4 to 256
/// I/Os in flight): a line per job and percentile, colour the job, stroke
/// (and the label at its end) the percentile.
fn matrix_qos_chart(profile: &str, title: &str, jobs: &[&JobResult], colors: &Colors) -> Chart {
    let points: Vec<String> = MATRIX_THREADS.iter().zip(MATRIX_QUEUE_DEPTHS).map(|(&t, q)| matrix_name(t, q)).collect();
    let mut c = LineChart {
        id: format!("{profile}-qos"),
        title: format!("{title}: latency QoS as load grows"),
        x_label: "threads x queue depth".into(),
        y_label: "latency (ms)".into(),
        x_names: points.clone(),
        legend: jobs.iter().map(|j| colors.item(&j.label(), Swatch::Line)).collect(),
        markers: true,
        ..Default::default()
    };
    for (name, legend, stroke) in QOS {
        c.legend.push(LegendItem { name: legend.into(), color: INK.into(), stroke, swatch: Swatch::Line, key: name.into() });
        for j in jobs {
            let label = j.label();
            let values = points.iter().enumerate().filter_map(|(x, n)| j.test(n).map(|p| (x as f64, percentile(&p.summary.all, name)))).collect();
            c.series.push(Series {
                name: format!("{label}, {legend}"),
                points: values,
                color: colors.get(&label).into(),
                stroke,
                keys: vec![label, name.into()],
                end_label: Some(name.into()),
                width: 2.0,
            });
        }
    }
    Chart {
        file: format!("{profile}-qos.svg"),
        caption: format!("{title}, latency QoS: 99th, 99.9th and 99.99th percentile latency from 2T/2Q to 16T/16Q (4 to 256 I/Os in flight)"),
        svg: c.svg(),
    }
}

pub fn matrix_names() -> Vec<String> {
    MATRIX_THREADS.iter().flat_map(|&t| MATRIX_QUEUE_DEPTHS.iter().map(move |&q| matrix_name(t, q))).collect()
}

/// Strokes of the thread counts, fewest threads lightest.
const THREAD_STROKES: [Stroke; 4] = [Stroke::Dotted, Stroke::DashDot, Stroke::Dashed, Stroke::Solid];

/// A line per job and thread count over the queue depths: colour is the
/// job, stroke (and the label at its end) the thread count.
pub fn matrix_charts(profile: &str, title: &str, jobs: &[&JobResult], colors: &Colors) -> Vec<Chart> {
    ATTRIBUTES
        .iter()
        .map(|&(key, what, y)| {
            let mut c = LineChart {
                id: format!("{profile}-matrix-{key}"),
                title: format!("{title}: {what} by threads x queue depth"),
                x_label: "queue depth per thread".into(),
                y_label: y.into(),
                x_names: MATRIX_QUEUE_DEPTHS.iter().map(|q| q.to_string()).collect(),
                legend: jobs.iter().map(|j| colors.item(&j.label(), Swatch::Line)).collect(),
                markers: true,
                ..Default::default()
            };
            for (ti, &t) in MATRIX_THREADS.iter().enumerate() {
                let tkey = format!("{t} threads");
                c.legend.push(LegendItem { name: tkey.clone(), color: INK.into(), stroke: THREAD_STROKES[ti], swatch: Swatch::Line, key: tkey.clone() });
                for j in jobs {
                    let label = j.label();
                    let points = MATRIX_QUEUE_DEPTHS
                        .iter()
                        .enumerate()
                        .filter_map(|(x, &q)| j.test(&matrix_name(t, q)).map(|p| (x as f64, phase_value(p, key))))
                        .collect();
                    c.series.push(Series {
                        name: format!("{label}, {t} threads"),
                        points,
                        color: colors.get(&label).into(),
                        stroke: THREAD_STROKES[ti],
                        keys: vec![label, tkey.clone()],
                        end_label: Some(format!("{t}T")),
                        width: 2.0,
                    });
                }
            }
            Chart {
                file: format!("{profile}-matrix-{key}.svg"),
                caption: format!("{title}, {what}: a line per thread count (labelled at its end), queue depth 2 to 16"),
                svg: c.svg(),
            }
        })
        .chain([iops_latency_chart(profile, title, jobs, colors), matrix_qos_chart(profile, title, jobs, colors)])
        .collect()
}

/// Throughput against average latency across the matrix, a line per
/// device through its points in order of load (threads x queue depth, 4
/// to 256 I/Os in flight): where added load stops buying IOPS and only
/// adds latency.
fn iops_latency_chart(profile: &str, title: &str, jobs: &[&JobResult], colors: &Colors) -> Chart {
    let mut c = LineChart {
        id: format!("{profile}-iops-latency"),
        title: format!("{title}: average latency against throughput"),
        x_label: "IOPS".into(),
        y_label: "average latency (ms)".into(),
        legend: jobs.iter().map(|j| colors.item(&j.label(), Swatch::Line)).collect(),
        markers: true,
        ..Default::default()
    };
    for j in jobs {
        let label = j.label();
        let mut load: Vec<(u32, u32)> = MATRIX_THREADS.iter().flat_map(|&t| MATRIX_QUEUE_DEPTHS.iter().map(move |&q| (t, q))).collect();
        load.sort_by_key(|&(t, q)| (t * q, t));
        let points = load.iter().filter_map(|&(t, q)| j.test(&matrix_name(t, q))).map(|p| (p.summary.all.iops, p.summary.all.latency_avg_ms)).collect();
        c.series.push(Series::line(&label, points, colors.get(&label), &label));
    }
    Chart {
        file: format!("{profile}-iops-latency.svg"),
        caption: format!("{title}: average latency against IOPS, a point per thread/queue combination in order of I/Os in flight (4 to 256)"),
        svg: c.svg(),
    }
}

/// A rebuild's time as the failure charts write it.
fn rebuild_took(r: &crate::runs::failure::FailureReport) -> String {
    r.rebuild_s.map_or("not ended in the phase".to_string(), |t| format!("{t:.2} s"))
}

/// Throughput and latency per round through die failures and their
/// rebuilds, a line per job, each job's rebuild (failure to the end of
/// its rebuild) shaded in its colour; x in virtual seconds from the phase's
/// start.
pub fn failure_charts(profile: &str, title: &str, jobs: &[&JobResult], colors: &Colors) -> Vec<Chart> {
    let jobs: Vec<(&JobResult, &FailureRun)> = jobs.iter().filter_map(|j| j.failure.as_ref().map(|f| (*j, f))).collect();
    let scale = jobs.first().map_or(1, |j| j.0.device.scale);
    let x_label = if scale > 1 { format!("virtual seconds (devices at 1/{scale} scale rebuild {scale}x sooner)") } else { "virtual seconds".into() };
    ATTRIBUTES[..3]
        .iter()
        .map(|&(key, what, y)| {
            let mut c = LineChart {
                id: format!("{profile}-failure-{key}"),
                title: format!("{title} through a die failure: {what}"),
                x_label: x_label.clone(),
                y_label: y.into(),
                legend: jobs.iter().map(|(j, _)| colors.item(&j.label(), Swatch::Line)).collect(),
                ..Default::default()
            };
            for (j, f) in &jobs {
                let label = j.label();
                let points = f.phase.intervals.iter().map(|v| (v.start_s + v.length_s, round_value(v, key))).collect();
                c.series.push(Series::line(&label, points, colors.get(&label), &label));
                for r in &f.reports {
                    let end = r.rebuild_done_at_s.unwrap_or(f.phase.virtual_seconds);
                    let took = rebuild_took(r);
                    c.bands.push(crate::outputs::chart::Band {
                        x0: r.failed_at_s,
                        x1: end,
                        label: format!("{label}: {} failed, rebuild {took}", r.event.what),
                        color: colors.get(&label).into(),
                        keys: vec![label.clone()],
                        show_label: jobs.len() == 1 && f.reports.len() == 1,
                    });
                }
            }
            let rebuilds: Vec<String> = jobs
                .iter()
                .flat_map(|(j, f)| f.reports.iter().map(move |r| format!("{}: {} rebuilt in {}", j.label(), r.event.what, rebuild_took(r))))
                .collect();
            Chart {
                file: format!("{profile}-failure-{key}.svg"),
                caption: format!("{title} at 16T/16Q through a die failure, {what} per round (shaded: failure to the rebuild's end). {}", rebuilds.join("; ")),
                svg: c.svg(),
            }
        })
        .collect()
}

/// The SNIA convergence plot of one job: the tracked value per round, the
/// window, its mean, the +-10% band and the fitted line.
pub fn steady_chart(j: &JobResult, colors: &Colors) -> Chart {
    let y: Vec<f64> = j.precondition.intervals.iter().map(|v| v.iops).collect();
    let window = j.precondition.steady_state.as_ref().and_then(|s| s.window.as_ref());
    let run = j.run.as_deref().map_or(String::new(), |r| format!("-{}", slug(r)));
    let on = card::host_not_default(j.device.host.as_deref()).map_or(String::new(), |h| format!("-{}", slug(card::host_short(h))));
    let id = format!("{}-{}-{}{on}{run}-steady", j.profile, slug(&j.device.id), slug(&j.device.format));
    let title = format!("{}: steady state, {} ({})", j.label(), j.profile_title, j.preconditioner.name);
    let svg = snia_chart(&id, &title, "IOPS", &y, window, colors.get(&j.label()));
    Chart { file: format!("{id}.svg"), caption: format!("{}: SNIA steady-state determination", j.label()), svg }
}

/// The SNIA plot of a tracked series: up to 20 rounds before the window,
/// the window shaded, its mean, the +-10% band and the least-squares line.
pub fn snia_chart(id: &str, title: &str, y_label: &str, y: &[f64], window: Option<&steady::SteadyWindow>, color: &str) -> String {
    let from = window.map_or(0, |w| w.first_round.saturating_sub(20));
    let tracked = format!("{y_label} per round");
    let points = y.iter().enumerate().skip(from).map(|(i, v)| ((i + 1) as f64, *v)).collect();
    let mut c = LineChart {
        id: id.to_string(),
        title: title.to_string(),
        x_label: if from > 0 { format!("round (rounds {}-{} of {})", from + 1, y.len(), y.len()) } else { "round".into() },
        x_from: (from + 1) as f64,
        y_label: y_label.into(),
        series: vec![Series::line(&tracked, points, color, &tracked)],
        legend: vec![LegendItem { name: tracked.clone(), color: color.into(), stroke: Stroke::Solid, swatch: Swatch::Line, key: tracked.clone() }],
        markers: y.len() - from <= 60,
        ..Default::default()
    };
    if let Some(w) = window {
        snia_levels(&mut c, w);
    }
    c.svg()
}

/// The window's mean, its +-10% band and fitted line, and the window shaded.
fn snia_levels(c: &mut LineChart, w: &steady::SteadyWindow) {
    let (a, z) = ((w.first_round + 1) as f64, (w.first_round + steady::WINDOW) as f64);
    let level = |name: &str, v: f64, color: &str, stroke: Stroke, key: &str| Series {
        name: name.into(),
        points: vec![(a, v), (z, v)],
        color: color.into(),
        stroke,
        keys: vec![key.into()],
        end_label: None,
        width: 1.5,
    };
    c.series.push(level("window mean", w.mean, INK, Stroke::Solid, "window mean"));
    c.series.push(level("mean +10%", w.mean * 1.1, GREY, Stroke::Dashed, "mean +-10%"));
    c.series.push(level("mean -10%", w.mean * 0.9, GREY, Stroke::Dashed, "mean +-10%"));
    let fit_end = w.intercept + w.slope * (steady::WINDOW - 1) as f64;
    c.series.push(Series { points: vec![(a, w.intercept), (z, fit_end)], ..level("least-squares fit", 0.0, INK, Stroke::DashDot, "least-squares fit") });
    for (name, color, stroke) in [("window mean", INK, Stroke::Solid), ("mean +-10%", GREY, Stroke::Dashed), ("least-squares fit", INK, Stroke::DashDot)] {
        c.legend.push(LegendItem { name: name.into(), color: color.into(), stroke, swatch: Swatch::Line, key: name.into() });
    }
    let verdict = if w.steady { "measurement window (steady)" } else { "last window judged (not steady)" };
    c.bands.push(crate::outputs::chart::Band { x0: a - 0.5, x1: z + 0.5, label: verdict.into(), color: GREY.into(), keys: Vec::new(), show_label: true });
}
