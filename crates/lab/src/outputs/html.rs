//! The review's HTML report: one self-contained page (styles, charts and
//! a small script inlined; nothing fetched), a section per test profile,
//! the SNIA PTS sections, and the definitions a reader needs. Clicking a
//! legend entry hides or shows its series in that chart.

use crate::number::num;
use crate::outputs::chart::esc;
use crate::outputs::figures::{self, matrix_names, Chart, Colors};
use crate::outputs::files::{file_write, io_err, ReportError};
use crate::outputs::page::{figures_of, table};
use crate::procedures::job::{ReviewProfile, Tests, PROFILES};
use crate::procedures::review::{JobResult, ReviewResults};
use crate::runs::run::DeviceInfo;
use crate::runs::steady;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const CSS: &str = "body{font-family:Helvetica,Arial,sans-serif;margin:24px auto;max-width:1560px;color:#222;padding:0 16px}\
h1{margin-bottom:4px}h2{border-bottom:2px solid #0072B2;padding-bottom:4px;margin-top:40px}\
.note{background:#fff8e1;border-left:4px solid #E69F00;padding:8px 12px}\
.grid{display:flex;flex-wrap:wrap;gap:16px}figure{margin:0;flex:1 1 600px;max-width:720px}figcaption{font-size:13px;color:#555}\
table{border-collapse:collapse;margin:12px 0;font-size:13px}th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}\
th{background:#f0f4f8}td:first-child,th:first-child{text-align:left}.bad{color:#b00020;font-weight:bold}.ok{color:#007a3d}\
svg.chart{width:100%;height:auto;border:1px solid #ddd;box-sizing:border-box}svg .legend.off{opacity:0.35}dt{font-weight:bold;margin-top:8px}dd{margin-left:16px}";

/// Legend entries toggle the series that carry their key.
const SCRIPT: &str = "document.querySelectorAll('svg.chart').forEach(function(svg){\
var off={};function apply(){svg.querySelectorAll('[data-keys]').forEach(function(e){\
var hide=e.getAttribute('data-keys').split(' ').some(function(k){return off[k];});e.style.display=hide?'none':'';});}\
svg.querySelectorAll('.legend').forEach(function(g){g.addEventListener('click',function(){\
var k=g.getAttribute('data-key');off[k]=!off[k];g.classList.toggle('off',off[k]);apply();});});});";

/// The terms a reader of the report meets, defined once.
const DEFINITIONS: &[(&str, &str)] = &[
    ("Simulated", "Every figure comes from flashlab's model of the card (NAND, flash translation layer, controllers, host), run in virtual time; published figures are the reviewers' or the vendor's measurements of the real card."),
    ("IOPS", "I/Os completed per second, reads and writes together unless a column says otherwise."),
    ("Average, max latency", "From submission to completion of each I/O, in milliseconds: the mean, and the largest seen."),
    ("Latency standard deviation", "The read and the write standard deviations averaged, weighted by their I/O counts, as the reviewers chart it."),
    ("T/Q", "Host threads x outstanding I/Os per thread: 16T/16Q keeps 256 I/Os in flight."),
    ("Drive write", "Host writes equal to the card's usable capacity."),
    ("Preconditioning", "Writing a secure-erased card until its garbage collection reaches steady state; the first rounds (the burst) run on free flash."),
    ("Steady state (SNIA)", "Over a window of 5 rounds, the tracked IOPS ranges over at most 20% of its mean and its least-squares line moves by at most 10% of the mean."),
    ("Drift", "How much IOPS still moved over the last drive write of preconditioning, in percent of its mean per drive write: how far from converged a steady figure is."),
    ("Round", "One measuring interval: 60 virtual seconds on a full-size card, shorter in proportion on a scaled one."),
    ("Scale", "A card at scale 1/N has N times less flash (dies, channels and timings kept): it fills and settles N times sooner, at the full-size steady state."),
    ("Effective OP", "Over-provisioning: spare flash as a share of the usable capacity, after garbage collection's reserve."),
    ("Tolerance", "How far a simulated figure may be from the published one and still be held to match it (whiskers on the published bars)."),
    ("Bottleneck", "The busiest resource of a test, named when at least 80% busy."),
    ("Rebuild", "After a die fails, the card moves every valid slot of the stripes that held it into stripes of working dies, at a set rate, while host I/O goes on; until then a read that maps to the dead die is rebuilt from the other members of its stripe (a read on each, then the XOR). Its time runs from the failure to the last slot moved."),
];

/// Writes the charts and the HTML report; returns the report's path.
pub fn html_report(r: &ReviewResults, dir: &Path) -> Result<PathBuf, ReportError> {
    let colors = Colors::of(r);
    let mut out = String::new();
    let mut files: Vec<Chart> = Vec::new();
    head_section(&mut out, r, &colors);
    summary_section(&mut out, r, &colors);
    for p in PROFILES {
        let jobs: Vec<&JobResult> = r.jobs.iter().filter(|j| j.profile == p.name).collect();
        if !jobs.is_empty() {
            profile_section(&mut out, &mut files, p, &jobs, &colors);
        }
    }
    for p in &r.pts {
        crate::outputs::pts_page::pts_section(&mut out, &mut files, p, &colors);
    }
    definitions_section(&mut out, r.jobs.iter().any(|j| j.measured.is_some()));
    let _ = writeln!(out, "<script>{SCRIPT}</script></body></html>");
    let charts = dir.join("charts");
    if !files.is_empty() {
        std::fs::create_dir_all(&charts).map_err(io_err(&charts))?;
    }
    for c in &files {
        file_write(&charts.join(&c.file), format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}\n", c.svg).as_bytes())?;
    }
    let path = dir.join("report.html");
    file_write(&path, out.as_bytes())?;
    Ok(path)
}

/// Where the figures come from: flashlab's model (simulated, in virtual
/// time, with the seed), or fio on real storage (measured: where, with
/// what), or both in a comparison.
fn provenance(r: &ReviewResults) -> String {
    let simulated = r.jobs.iter().any(|j| j.measured.is_none()) || !r.pts.is_empty();
    let mut where_: Vec<String> = r
        .jobs
        .iter()
        .filter_map(|j| j.measured.as_ref())
        .map(|m| format!("{} ({}, {} with {}; {}, {})", m.target.target, m.target.kind, m.fio, m.engine, m.kernel, m.cpu))
        .collect();
    where_.dedup();
    let model = format!("flashlab {}'s model of the device, in virtual time, not from a real card. Seed {}", r.flashlab_version, r.seed);
    let text = match (simulated, where_.is_empty()) {
        (true, true) => format!("Simulated: every figure here comes from {model}"),
        (false, _) => format!("Measured: every figure here is fio's, on {}, not a model's", where_.join("; ")),
        (true, false) => format!("Measured and simulated: a job marked [measured] is fio's, on {}; the others come from {model}", where_.join("; ")),
    };
    esc(&text)
}

/// Title, the simulated-figures note and the devices under test.
fn head_section(out: &mut String, r: &ReviewResults, colors: &Colors) {
    let _ = write!(out, "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>flashlab review</title><style>{CSS}</style></head><body>");
    // Each device and format (and run, in a comparison) with the label
    // its colour is kept under.
    let infos: Vec<(String, &DeviceInfo)> =
        r.jobs.iter().map(|j| (j.label(), &j.device)).chain(r.pts.iter().map(|p| (format!("{} {}", p.device.name, p.device.format), &p.device))).collect();
    let mut devices: Vec<String> = infos.iter().map(|(l, _)| l.clone()).collect();
    devices.dedup();
    let _ = write!(out, "<h1>flashlab review: {}</h1>", esc(&devices.join(", ")));
    let _ = write!(
        out,
        "<p class=\"note\">{}; results in <a href=\"results.json\">results.json</a>, tables in <a href=\"precondition.csv\">precondition.csv</a>, \
         <a href=\"tests.csv\">tests.csv</a>, <a href=\"steady_state.csv\">steady_state.csv</a>, <a href=\"published.csv\">published.csv</a>{}. \
         Click a legend entry to hide or show its series; hover a point or bar for its value. <a href=\"#definitions\">Definitions</a> at the end.</p>",
        provenance(r),
        [
            (r.jobs.iter().any(|j| j.failure.is_some()), ", <a href=\"failures.csv\">failures.csv</a>, <a href=\"failure_rounds.csv\">failure_rounds.csv</a>"),
            (!r.pts.is_empty(), ", <a href=\"pts.csv\">pts.csv</a>")
        ]
        .iter()
        .filter(|t| t.0)
        .map(|t| t.1)
        .collect::<String>()
    );
    if let Some(why) = &r.incomplete {
        let _ = write!(out, "<p class=\"note\"><b>INCOMPLETE</b>: {}.</p>", esc(why));
    }
    out.push_str("<h2>Devices under test</h2>");
    measured_table(out, r, colors);
    let mut seen = Vec::new();
    let simulated: Vec<String> = r.jobs.iter().filter(|j| j.measured.is_none()).map(JobResult::label).collect();
    let rows: Vec<Vec<String>> = infos
        .iter()
        .filter(|(l, _)| simulated.contains(l) || !r.pts.is_empty())
        .filter(|(l, d)| {
            let k = (l.clone(), d.scale);
            let new = !seen.contains(&k);
            seen.push(k);
            new
        })
        .map(|(l, d)| device_row(l, d, colors))
        .collect();
    if !rows.is_empty() {
        table(out, &["device", "format", "scale", "usable GB", "raw GB", "dies", "effective OP", "host"], &rows);
    }
}

/// Real storage under test: what it is and how it was measured.
fn measured_table(out: &mut String, r: &ReviewResults, colors: &Colors) {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for j in &r.jobs {
        let Some(m) = &j.measured else { continue };
        let label = j.label();
        if rows.iter().any(|row| row[0].ends_with(&esc(&label))) {
            continue;
        }
        let t = &m.target;
        rows.push(vec![
            format!("<span style=\"color:{}\">&#9632;</span> {}", colors.get(&label), esc(&label)),
            esc(&t.kind),
            t.size_bytes.map_or("-".into(), |b| format!("{:.1}", b as f64 / 1e9)),
            esc(&[t.model.as_deref(), t.firmware.as_deref()].iter().flatten().copied().collect::<Vec<_>>().join(", ")),
            esc(&format!("{}, {}", m.fio, m.engine)),
            esc(&format!("{}; {}", m.kernel, m.cpu)),
        ]);
    }
    if !rows.is_empty() {
        table(out, &["target (measured)", "kind", "GB", "model, firmware", "fio", "host"], &rows);
    }
}

/// A device's row, its name beside the colour it has in every chart.
fn device_row(label: &str, d: &DeviceInfo, colors: &Colors) -> Vec<String> {
    let swatch = format!("<span style=\"color:{}\">&#9632;</span> ", colors.get(label));
    let run = label.strip_prefix(&format!("{} {}", d.name, d.format)).unwrap_or("");
    vec![
        swatch + &esc(&d.name) + &esc(run),
        esc(&d.format),
        if d.scale == 1 { "full size".into() } else { format!("1/{}", d.scale) },
        format!("{:.1}", d.capacity_bytes as f64 / 1e9),
        format!("{:.1}", d.raw_bytes as f64 / 1e9),
        d.dies.to_string(),
        format!("{:.1}%", d.effective_op * 100.0),
        esc(d.host.as_deref().unwrap_or("-")),
    ]
}

/// The figures a reader looks for first, a row per device (and format,
/// and run): the 4K burst (the first preconditioning round), steady 4K
/// write and read, and each mixed profile at 16T/16Q, with average
/// latency; then how the published figures fared.
/// One device's published figures in a word: how many of those held are
/// within tolerance, and how many are known gaps or in conflict.
fn verdict_of(checks: &[&crate::runs::published::Check]) -> String {
    if checks.is_empty() {
        return "none published".into();
    }
    let held: Vec<_> = checks.iter().filter(|c| c.conflict.is_none() && c.gap.is_none()).collect();
    let (gaps, conflicts) = (checks.iter().filter(|c| c.gap.is_some()).count(), checks.iter().filter(|c| c.conflict.is_some()).count());
    let mut verdict = match held.len() {
        0 => "none held".to_string(),
        n => format!("{} of {n} within tolerance", held.iter().filter(|c| c.within).count()),
    };
    if gaps > 0 {
        verdict += &format!("; {gaps} known gap{}", if gaps == 1 { "" } else { "s" });
    }
    if conflicts > 0 {
        verdict += &format!("; {conflicts} in conflict");
    }
    verdict
}

fn summary_section(out: &mut String, r: &ReviewResults, colors: &Colors) {
    let mut labels: Vec<String> = r.jobs.iter().map(JobResult::label).collect();
    labels.dedup();
    if labels.is_empty() {
        return;
    }
    let job = |label: &str, profile: &str| r.jobs.iter().find(|j| j.label() == label && j.profile == profile);
    // A pure read or write test's own direction, else both together.
    let cell = |p: Option<&crate::runs::phase::Phase>| match p {
        None => "-".to_string(),
        Some(p) => {
            let s = &p.summary;
            let d = if s.write.ios == 0 {
                &s.read
            } else if s.read.ios == 0 {
                &s.write
            } else {
                &s.all
            };
            format!("{} IOPS, {:.3} ms", num(d.iops), d.latency_avg_ms)
        }
    };
    let rows: Vec<Vec<String>> = labels
        .iter()
        .map(|l| {
            let four_k = job(l, "4k");
            let burst = four_k.and_then(|j| j.precondition.intervals.first()).map_or("-".into(), |i| format!("{} IOPS", num(i.iops)));
            let mixed = |p: &str| cell(job(l, p).and_then(|j| j.test(&crate::procedures::job::matrix_name(16, 16))));
            let sequential = |l: &str| {
                let mbs = |n: &str| job(l, "seq").and_then(|j| j.test(n)).map(|t| num(t.summary.all.mb_per_s));
                match (mbs("128K read"), mbs("128K write")) {
                    (None, None) => "-".to_string(),
                    (r, w) => format!("{} / {} MB/s", r.unwrap_or("-".into()), w.unwrap_or("-".into())),
                }
            };
            let checks: Vec<&crate::runs::published::Check> = r.jobs.iter().filter(|j| &j.label() == l).flat_map(|j| &j.comparison).collect();
            let verdict = verdict_of(&checks);
            vec![
                format!("<span style=\"color:{}\">&#9632;</span> {}", colors.get(l), esc(l)),
                burst,
                cell(four_k.and_then(|j| j.test("4K write"))),
                cell(four_k.and_then(|j| j.test("4K read"))),
                mixed("8k7030"),
                mixed("fileserver"),
                mixed("webserver"),
                sequential(l),
                esc(&verdict),
            ]
        })
        .collect();
    out.push_str("<h2 id=\"summary\">Summary</h2>");
    out.push_str("<p>Throughput and average latency at 16 threads x 16 queue depth; the burst is the first round after the erase; sequential 128K read and write on a sequentially filled card. Each profile's section below has its charts and tables.</p>");
    table(
        out,
        &["device", "4K burst write", "4K write, steady", "4K read", "8K 70/30", "File Server", "Web Server", "128K seq read / write", "published figures"],
        &rows,
    );
}

/// How the jobs were erased before preconditioning: a simulated card by
/// its secure erase; real storage as far as it allowed, said per target.
fn erase_said(jobs: &[&JobResult]) -> String {
    let mut said: Vec<String> = jobs
        .iter()
        .map(|j| match j.measured.as_ref().and_then(|m| m.erased.as_ref()) {
            Some(e) => format!("{}: {e}", j.label()),
            None => "Secure erase".into(),
        })
        .collect();
    said.dedup();
    let mut text = said.join("; ");
    if let Some(c) = text.get(..1) {
        text = c.to_uppercase() + &text[1..];
    }
    text
}

/// One test profile: preconditioning, steady state, main tests, why, and
/// the published figures.
fn profile_section(out: &mut String, files: &mut Vec<Chart>, p: &ReviewProfile, jobs: &[&JobResult], colors: &Colors) {
    let _ = write!(out, "<h2 id=\"profile-{}\">{} profile</h2>", p.name, esc(p.title));
    let mut rules: Vec<String> = jobs.iter().filter_map(|j| j.precondition.steady_state.as_ref().map(|s| format!("{}: {}", j.label(), s.rule))).collect();
    rules.dedup();
    if p.tests == Tests::Sequential {
        let _ = write!(
            out,
            "<p>{}, then <code>{}</code> at 16 threads x 16 queue depth (one stream) over the whole capacity, {} times.</p>",
            esc(&erase_said(jobs)),
            esc(&jobs[0].preconditioner.name),
            crate::procedures::job::SEQUENTIAL_FILL_DRIVE_WRITES
        );
    } else {
        let _ = write!(
            out,
            "<p>{}, then preconditioning with <code>{}</code> at 16 threads x 16 queue depth ({}); either way the last {} rounds are judged by the SNIA criteria.</p>",
            esc(&erase_said(jobs)),
            esc(&jobs[0].preconditioner.name),
            esc(&rules.join("; ")),
            steady::WINDOW
        );
    }
    out.push_str("<h3>Preconditioning</h3>");
    figures_of(out, files, figures::precondition_charts(p.name, p.title, jobs, colors));
    if p.tests == Tests::Sequential {
        let _ = write!(
            out,
            "<p>No steady state is judged: the fill is a fixed {} drive writes (the SNIA PTS's workload-independent preconditioning), after which the card is filled, the state in which vendors rate sequential transfers.</p>",
            crate::procedures::job::SEQUENTIAL_FILL_DRIVE_WRITES
        );
    } else {
        out.push_str("<h3>Steady-state determination</h3>");
        steady_table(out, jobs);
        figures_of(out, files, jobs.iter().map(|j| figures::steady_chart(j, colors)).collect());
    }
    out.push_str("<h3>Main tests</h3>");
    match p.tests {
        Tests::FourK => {
            let mut charts = figures::four_k_charts(jobs, colors);
            charts.push(figures::four_k_qos_chart(jobs, colors));
            figures_of(out, files, charts);
            four_k_table(out, jobs);
        }
        Tests::Matrix => {
            figures_of(out, files, figures::matrix_charts(p.name, p.title, jobs, colors));
            matrix_table(out, jobs);
        }
        Tests::Sequential => {
            figures_of(out, files, figures::sequential_charts(jobs, colors));
            sequential_table(out, jobs);
        }
    }
    utilisation_section(out, jobs);
    published_section(out, jobs);
    failure_section(out, files, p, jobs, colors);
}

/// `--fail-die`: the charts through the failure and the rebuild, and each
/// failure's figures.
fn failure_section(out: &mut String, files: &mut Vec<Chart>, p: &ReviewProfile, jobs: &[&JobResult], colors: &Colors) {
    let failed: Vec<&JobResult> = jobs.iter().copied().filter(|j| j.failure.is_some()).collect();
    if failed.is_empty() {
        return;
    }
    out.push_str("<h3>Die failure and rebuild</h3>");
    let _ = write!(
        out,
        "<p>After the main tests, <code>{}</code> at 16 threads x 16 queue depth while a die fails; reads that map to it are rebuilt from their stripe, and a background rebuild moves what its stripes held at a fixed rate. The phase runs until the rebuild has ended. Not compared with published figures: the reviewers did not fail dies.</p>",
        esc(&failed[0].workload.name)
    );
    figures_of(out, files, figures::failure_charts(p.name, p.title, &failed, colors));
    let opt = |v: Option<f64>| v.map_or("-".to_string(), num);
    let rows: Vec<Vec<String>> = failed
        .iter()
        .flat_map(|j| {
            let f = j.failure.as_ref().expect("filtered");
            f.reports.iter().map(move |r| {
                vec![
                    esc(&j.label()),
                    esc(&r.event.what),
                    format!("{:.2}", r.failed_at_s),
                    r.rebuild_s.map_or("<span class=\"bad\">not ended</span>".into(), |t| format!("{t:.2}")),
                    format!("{:.1}", r.rebuild_bytes as f64 / 1e6),
                    format!("{:.0}", f.rebuild_bytes_per_sec as f64 / 1e6),
                    opt(r.iops_before),
                    opt(r.iops_during),
                    opt(r.iops_during_min),
                    opt(r.iops_after),
                    opt(r.latency_max_during_ms),
                    if r.event.lost_offsets.is_empty() { "0".into() } else { format!("<span class=\"bad\">{}</span>", r.event.lost_offsets.len()) },
                ]
            })
        })
        .collect();
    let head = [
        "device",
        "failed",
        "at (s)",
        "rebuild (s)",
        "moved (MB)",
        "rate (MB/s)",
        "IOPS before",
        "IOPS during",
        "worst round",
        "IOPS after",
        "max ms during",
        "slots lost",
    ];
    table(out, &head, &rows);
}

fn steady_table(out: &mut String, jobs: &[&JobResult]) {
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
    let head = [
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
    ];
    table(out, &head, &rows);
}

fn four_k_table(out: &mut String, jobs: &[&JobResult]) {
    let mut rows = Vec::new();
    for j in jobs {
        for (name, read) in [("4K read", true), ("4K write", false)] {
            let Some(t) = j.test(name) else { continue };
            let d = if read { &t.summary.read } else { &t.summary.write };
            let figures = [d.iops, d.mb_per_s, d.latency_avg_ms, d.latency_max_ms, d.latency_std_ms, d.latency_p99_ms, d.latency_p999_ms, d.latency_p9999_ms];
            rows.push([esc(&j.label()), name.into()].into_iter().chain(figures.map(num)).collect());
        }
    }
    table(out, &["device", "test", "IOPS", "MB/s", "avg ms", "max ms", "std dev ms", "p99 ms", "p99.9 ms", "p99.99 ms"], &rows);
}

fn sequential_table(out: &mut String, jobs: &[&JobResult]) {
    let mut rows = Vec::new();
    for j in jobs {
        for (name, _) in crate::procedures::job::SEQUENTIAL_TESTS {
            let Some(t) = j.test(name) else { continue };
            let d = &t.summary.all;
            let figures = [d.mb_per_s, d.iops, d.latency_avg_ms, d.latency_max_ms, d.latency_std_ms, d.latency_p99_ms, d.latency_p999_ms, d.latency_p9999_ms];
            rows.push([esc(&j.label()), name.into()].into_iter().chain(figures.map(num)).collect());
        }
    }
    table(out, &["device", "test", "MB/s", "IOPS", "avg ms", "max ms", "std dev ms", "p99 ms", "p99.9 ms", "p99.99 ms"], &rows);
}

fn matrix_table(out: &mut String, jobs: &[&JobResult]) {
    let mut rows = Vec::new();
    for j in jobs {
        for n in matrix_names() {
            let Some(t) = j.test(&n) else { continue };
            let s = &t.summary;
            let figures = [
                s.all.iops,
                s.all.mb_per_s,
                s.all.latency_avg_ms,
                s.all.latency_max_ms,
                s.latency_std_ms_reviewers(),
                s.all.latency_p99_ms,
                s.all.latency_p999_ms,
                s.all.latency_p9999_ms,
            ];
            rows.push([esc(&j.label()), esc(&n)].into_iter().chain(figures.map(num)).collect());
        }
    }
    table(out, &["device", "T/Q", "IOPS", "MB/s", "avg ms", "max ms", "std dev ms", "p99 ms", "p99.9 ms", "p99.99 ms"], &rows);
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
                    verdict_cell(c),
                ]
            })
        })
        .collect();
    if cmp.is_empty() {
        return;
    }
    out.push_str("<h3>Published and simulated</h3>");
    let mut sources: Vec<String> = jobs.iter().flat_map(|j| j.comparison.iter().map(|c| c.source.clone())).collect();
    sources.sort();
    sources.dedup();
    table(out, &["device", "figure", "conditions", "published", "simulated", "error", "tolerance", "verdict"], &cmp);
    let _ = write!(out, "<p>Sources: {}</p>", esc(&sources.join("; ")));
}

/// A verdict, marked: within tolerance in green, a miss in red, a
/// conflict (a vendor figure the reviewers' contradict) with its reason.
fn verdict_cell(c: &crate::runs::published::Check) -> String {
    let verdict = verdict_text(c);
    match c.sample_note() {
        Some(note) => format!("{verdict} ({})", esc(&note)),
        None => verdict,
    }
}

/// The verdict alone, coloured.
fn verdict_text(c: &crate::runs::published::Check) -> String {
    match &c.conflict {
        Some(why) if !c.within => format!("conflict: {}", esc(why)),
        None if !c.within && c.gap.is_some() => format!("<span class=\"bad\">MISS (known gap: {})</span>", esc(c.gap.as_deref().unwrap_or(""))),
        _ if c.within => format!("<span class=\"ok\">{}</span>", esc(c.verdict())),
        _ => format!("<span class=\"bad\">{}</span>", esc(c.verdict())),
    }
}

/// Why each test ran at its rate, as a heat map a job: a row per
/// resource, a column per test, each cell its busy share (the darker the
/// busier), the bottleneck's cell in bold where one is at least
/// `BOTTLENECK_PERCENT_MIN` busy, and a last row naming it.
fn utilisation_section(out: &mut String, jobs: &[&JobResult]) {
    let jobs: Vec<&&JobResult> = jobs.iter().filter(|j| j.tests.iter().any(|t| !t.utilisation.is_empty())).collect();
    if jobs.is_empty() {
        return;
    }
    out.push_str("<h3>Why: resource utilisation</h3>");
    let _ = write!(
        out,
        "<p>Each resource's busy share over each test, in percent of its servers' time (never above 100%), darker the busier. The bottleneck (in bold, and named in the last row) is the busiest resource when it is at least {:.0}% busy.</p>",
        crate::runs::phase::BOTTLENECK_PERCENT_MIN
    );
    for j in jobs {
        let mut head = vec![j.label()];
        head.extend(j.tests.iter().map(|t| t.name.clone()));
        let mut names: Vec<&str> = Vec::new();
        for u in j.tests.iter().flat_map(|t| &t.utilisation) {
            if !names.contains(&u.resource.as_str()) {
                names.push(&u.resource);
            }
        }
        let mut rows: Vec<Vec<String>> = names
            .iter()
            .map(|n| {
                let mut row = vec![esc(n)];
                row.extend(j.tests.iter().map(|t| match t.utilisation.iter().find(|u| u.resource == *n) {
                    None => "-".into(),
                    Some(u) => heat_cell(u.percent, t.bottleneck.starts_with(&format!("{n} ("))),
                }));
                row
            })
            .collect();
        let mut last = vec!["bottleneck".to_string()];
        // The resource alone; "none" where the load or a wait set the rate.
        last.extend(j.tests.iter().map(|t| match t.bottleneck.split_once(" (") {
            Some((r, _)) if !t.bottleneck.starts_with("none") => esc(r),
            _ => "none".into(),
        }));
        rows.push(last);
        let head: Vec<&str> = head.iter().map(String::as_str).collect();
        table(out, &head, &rows);
    }
}

/// A busy share, shaded by how busy, bold for the bottleneck.
fn heat_cell(percent: f64, bottleneck: bool) -> String {
    let alpha = (percent / 100.0).clamp(0.0, 1.0) * 0.55;
    let text = if bottleneck { format!("<b>{percent:.0}%</b>") } else { format!("{percent:.0}%") };
    format!("<span class=\"heat\" style=\"background:rgba(0,114,178,{alpha:.2})\">{text}</span>")
}

/// The terms; with real storage among the jobs, what "measured" means
/// and a round's length on it.
fn definitions_section(out: &mut String, measured: bool) {
    out.push_str("<h2 id=\"definitions\">Definitions</h2><dl>");
    let measured_terms: &[(&str, &str)] = &[
        ("Measured", "Every figure of a job marked [measured] is fio's, run by flashlab on real storage (a file, a block device or an NBD export): per round, the difference of two of fio's cumulative reports; a round's maximum latency is exact when the run's maximum rose in it, else the highest bucket of fio's latency histogram the round added to (within 1/64 of its value)."),
        ("Round (measured)", "On real storage, the wall-clock seconds between two of fio's reports (--interval)."),
    ];
    let extra = if measured { measured_terms } else { &[] };
    for (term, def) in DEFINITIONS.iter().chain(extra) {
        let _ = write!(out, "<dt>{}</dt><dd>{}</dd>", esc(term), esc(def));
    }
    out.push_str("</dl>");
}
