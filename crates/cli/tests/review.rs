//! `flashlab review` and `flashlab compare` end to end: the files a review
//! leaves, its report rendered in headless Chromium, its fio export parsed
//! by fio, determinism across thread counts, and bad input refused.
//!
//! Chromium and fio come from Debian's packages (`.ci/run` installs them);
//! without them these tests fail, naming the package, rather than pass.

use std::path::Path;
use std::process::Command;

mod common;
use common::chromium::{chromium, layout_check};
use common::{flashlab, refused, tool, Scratch};

fn tmp(name: &str) -> Scratch {
    Scratch::new(&format!("review-{name}"))
}

#[test]
fn review_of_both_formats_writes_results_and_a_report_chromium_renders() {
    let out = tmp("full");
    let fio_dir = tmp("fio");
    let (code, stdout, err) =
        flashlab(&["review", "flashmax2", "--scale", "512", "--out", out.to_str().unwrap(), "--export-fio", fio_dir.to_str().unwrap(), "-q"]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("stock") && stdout.contains("hp") && stdout.contains("report.html"), "{stdout}");
    for f in ["results.json", "precondition.csv", "tests.csv", "steady_state.csv", "published.csv", "report.html"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    results_whole(&out);
    let prof = tmp("chromium");
    let charts = report_renders(&out, &prof);
    svg_files_well_formed(&out, &prof, charts);
    // Layout, as the browser lays it out (below).
    // Two devices (stock, hp); 3 mixed profiles x 4 attributes x 2
    // formats x 4 thread counts.
    layout_check(&out, &prof, 2, 3 * 4 * 2 * 4);
    // A screenshot: the renderer lays the whole page out.
    let shot = out.join("report.png");
    let page = format!("file://{}", out.join("report.html").display());
    let o = chromium(&["--window-size=1500,2000", &format!("--screenshot={}", shot.display()), &page], &prof);
    assert!(o.status.success() && std::fs::metadata(&shot).map(|m| m.len() > 50_000).unwrap_or(false), "screenshot");
    fio_jobs_parse(&fio_dir);
    compare_labels_each_run(&out);
}

/// A review on two hosts: every job twice, once on each, each naming its
/// host in results.json and judged against the figures measured on it;
/// in the report, rendered by Chromium, every chart shows both hosts (a
/// colour each, the Windows job named so) side by side.
#[test]
fn a_review_on_two_hosts_shows_both_per_chart() {
    let out = tmp("hosts");
    let args = ["review", "p420m", "--host", "linux", "--host", "windows", "--scale", "512", "--profiles", "4k,8k7030", "--out", out.to_str().unwrap(), "-q"];
    let (code, stdout, err) = flashlab(&args);
    assert_eq!(code, 0, "{err}");
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let jobs = r["jobs"].as_array().unwrap();
    let hosts: Vec<&str> = jobs.iter().map(|j| j["device"]["host"].as_str().unwrap()).collect();
    assert_eq!(hosts, ["linux-centos6", "linux-centos6", "windows-2008r2", "windows-2008r2"]);
    for j in jobs {
        let windows = j["device"]["host"] == "windows-2008r2";
        for c in j["comparison"].as_array().unwrap() {
            assert_eq!(c["what"].as_str().unwrap().ends_with(", Windows"), windows, "a job judged by its own host's figures: {c}");
        }
    }
    assert!(stdout.contains("stock (windows): reviewer 4K random read, steady state, Windows"), "{stdout}");
    let prof = tmp("hosts-chromium");
    let page = format!("file://{}", out.join("report.html").display());
    let o = chromium(&["--dump-dom", &page], &prof);
    assert!(o.status.success(), "chromium: {}", String::from_utf8_lossy(&o.stderr));
    let dom = String::from_utf8_lossy(&o.stdout);
    let devices = dom.split("Devices under test").nth(1).unwrap();
    assert!(devices.contains("linux-centos6") && devices.contains("windows-2008r2"), "the devices table names each job's host");
    let charts: Vec<&str> = dom.split("class=\"chart\"").skip(1).collect();
    assert!(charts.len() >= 8, "{} charts", charts.len());
    // Each job's own steady-state plot apart, every line chart shows both.
    let compared = charts.iter().map(|c| &c[..c.find("</svg>").unwrap()]).filter(|c| c.contains("data-kind=\"line\"") && !c.contains("-steady\""));
    assert!(compared.clone().count() >= 8, "the preconditioning and matrix charts");
    for c in compared {
        assert!(c.contains("MLC stock (windows)") && c.contains("MLC stock<"), "a line chart without both hosts: {}", &c[..c.len().min(300)]);
    }
    // Each job's own plot, its own file: none overwrites another.
    for id in ["4k-p420m-stock-steady", "4k-p420m-stock-windows-steady", "8k7030-p420m-stock-windows-steady"] {
        assert!(out.join("charts").join(format!("{id}.svg")).is_file() || dom.contains(&format!("id=\"{id}\"")), "{id}");
    }
    // A colour each: two devices as the layout sees them; one mixed profile
    // x 4 attributes x 2 hosts x 4 thread counts.
    layout_check(&out, &prof, 2, 4 * 2 * 4);
}

/// Results: 2 formats x 5 profiles, each with its preconditioning series
/// and its main tests (2 for 4K, 4 sequential, 16 matrix points
/// otherwise); every preconditioning but the sequential fill judged.
fn results_whole(out: &Path) {
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(r["kind"], "flashlab-review");
    let jobs = r["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 10);
    for j in jobs {
        let tests = j["tests"].as_array().unwrap().len();
        let seq = j["profile"] == "seq";
        assert_eq!(
            tests,
            if j["profile"] == "4k" {
                2
            } else if seq {
                4
            } else {
                16
            },
            "{}",
            j["profile"]
        );
        assert!(j["precondition"]["intervals"].as_array().unwrap().len() >= 5);
        if seq {
            assert!((j["precondition"]["drive_writes"].as_f64().unwrap() - 2.0).abs() < 0.01, "the fill writes the card twice");
        } else {
            assert!(j["precondition"]["steady_state"]["rounds"].as_u64().unwrap() >= 5);
        }
    }
    let tests_csv = std::fs::read_to_string(out.join("tests.csv")).unwrap();
    assert_eq!(tests_csv.lines().count(), 1 + 2 * (2 + 3 * 16 + 4), "header + every main test");
    assert!(tests_csv.lines().any(|l| l.contains(",16T/16Q,16,16,")), "{tests_csv}");
    // The sequential fill judged no steady state, and says so.
    let steady_csv = std::fs::read_to_string(out.join("steady_state.csv")).unwrap();
    let seq: Vec<&str> = steady_csv.lines().filter(|l| l.contains(",seq,")).collect();
    assert!(seq.len() == 2 && seq.iter().all(|l| l.contains(",IOPS,not judged: a fixed fill,,")), "{steady_csv}");
}

/// The report: every local link resolves; in Chromium it loads without
/// console errors and every chart is in the DOM with its data drawn.
/// Returns the charts drawn.
fn report_renders(out: &Path, prof: &Path) -> usize {
    // Every local link of the report resolves.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for href in html.split("href=\"").skip(1).map(|s| &s[..s.find('"').unwrap()]) {
        match href.strip_prefix('#') {
            Some(anchor) => assert!(html.contains(&format!("id=\"{anchor}\"")), "broken anchor {href}"),
            None => assert!(out.join(href).is_file(), "broken link {href}"),
        }
    }

    // Chromium: the page loads without console errors and every chart is
    // in the DOM with its data drawn.
    let page = format!("file://{}", out.join("report.html").display());
    let o = chromium(&["--dump-dom", &page], prof);
    let dom = String::from_utf8_lossy(&o.stdout);
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "chromium failed: {log}");
    let charts = dom.matches("class=\"chart\"").count();
    // Per profile: 4 preconditioning charts, 2 steady-state plots (one per
    // format, none for the sequential fill), its main-test charts: 4K 4
    // and a QoS chart; the 3 mixed profiles 4, an IOPS-latency curve and
    // a QoS chart; sequential 2.
    assert_eq!(charts, (4 + 2 + 5) + 3 * (4 + 2 + 6) + (4 + 2), "charts in the rendered DOM");
    assert!(dom.matches("<polyline").count() >= 4 * 4 * 2 + 3 * 4 * 2, "line series drawn");
    assert!(dom.matches("class=\"bar\"").count() >= 4 * 2 * 2, "4K bars drawn");
    assert!(dom.contains("steady-state window") && dom.contains("Published and simulated"));
    // Every job says why: a utilisation table naming the bottleneck.
    assert!(dom.contains("Why: resource utilisation") && dom.contains("GC threads") && dom.contains("bottleneck"));
    // The preconditioning followed the reviewers' 12 hours and says so.
    assert!(dom.contains("12 hours"), "the preconditioning rule is shown");
    // The summary comes first, before any profile's section, with the
    // 16T/16Q figures and how the published figures fared.
    let summary = dom.find("id=\"summary\"").expect("a summary");
    assert!(summary < dom.find("id=\"profile-").expect("profile sections"), "the summary is first");
    assert!(dom.contains("4K write, steady") && dom.contains("within tolerance"), "the summary's figures and verdicts");
    // Preconditioning's time axis is the full-size card's hours, so that
    // the reviewers' 12 hours read as 12 hours on a scaled card.
    assert!(dom.contains("hours on the full-size card"), "the preconditioning axis in full-size hours");
    // The mixed profiles chart latency against throughput.
    assert!(dom.contains("average latency against throughput"), "the IOPS-latency curve");
    // Latency QoS in the tables (p99, p99.9 and p99.99) and charted.
    assert!(dom.contains("<th>p99.9 ms</th>") && dom.contains("<th>p99.99 ms</th>"), "QoS columns");
    assert_eq!(dom.matches("latency QoS").count(), 4 * 2, "a QoS chart (title and caption) per profile but the sequential");
    // The sequential test: its section, charts beside the vendor's
    // rating, and its figures in the summary.
    assert!(dom.contains("id=\"profile-seq\"") && dom.contains("vendor rating") && dom.contains("128K seq read / write"), "the sequential test");
    // Utilisation as a heat map: shaded cells, the bottleneck in bold.
    assert!(dom.contains("class=\"heat\"") && dom.contains("<b>"), "the utilisation heat map");
    for bad in ["Uncaught", "CONSOLE", "Failed to load resource", "parsererror"] {
        assert!(!log.contains(bad) && !dom.contains(bad), "'{bad}' rendering the report: {log}");
    }
    charts
}

/// The SVG files alone are well-formed XML (Chromium shows a parser
/// error page for one that is not): one file per chart.
fn svg_files_well_formed(out: &Path, prof: &Path, charts: usize) {
    let mut xhtml = String::from("<html xmlns=\"http://www.w3.org/1999/xhtml\"><body>");
    let mut files = 0;
    for e in std::fs::read_dir(out.join("charts")).unwrap() {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
        xhtml += text.split_once("?>").map_or(text.as_str(), |(_, b)| b);
        files += 1;
    }
    assert_eq!(files, charts, "one SVG file per chart");
    xhtml += "</body></html>";
    let check = out.join("check.xhtml");
    std::fs::write(&check, xhtml).unwrap();
    let o = chromium(&["--dump-dom", &format!("file://{}", check.display())], prof);
    let dom = String::from_utf8_lossy(&o.stdout);
    assert!(!dom.contains("parsererror") && dom.matches("<svg").count() == files, "SVG files are not well-formed XML");
}

/// The exported fio jobs parse with fio.
fn fio_jobs_parse(fio_dir: &Path) {
    let fio = tool("fio", "fio");
    let mut parsed = 0;
    for p in ["4k", "8k7030", "fileserver", "webserver", "seq"] {
        for f in ["1-precondition.fio", "2-main.fio"] {
            let path = fio_dir.join(p).join(f);
            let o = Command::new(&fio).arg("--parse-only").arg(&path).output().unwrap();
            assert!(o.status.success(), "{}: {}", path.display(), String::from_utf8_lossy(&o.stderr));
            parsed += 1;
        }
    }
    assert_eq!(parsed, 10);
    let matrix = std::fs::read_to_string(fio_dir.join("8k7030/2-main.fio")).unwrap();
    assert_eq!(matrix.matches("stonewall").count(), 16);
    // A sequential test is one stream: one fio job with every I/O in flight.
    let seq = std::fs::read_to_string(fio_dir.join("seq/2-main.fio")).unwrap();
    assert!(seq.contains("rw=rw\nrwmixread=100\nbs=128k\niodepth=256\nnumjobs=1\n"), "{seq}");
}

/// compare: the same report from the results file, and from two.
fn compare_labels_each_run(out: &Path) {
    let cmp = tmp("compare");
    let res = out.join("results.json");
    let (code, out_text, err) =
        flashlab(&["compare", res.to_str().unwrap(), res.to_str().unwrap(), "--label", "old", "--label", "new", "--out", cmp.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let again: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(cmp.join("results.json")).unwrap()).unwrap();
    assert_eq!(again["jobs"].as_array().unwrap().len(), 20);
    // Two runs of one card and format were once indistinguishable: each
    // is labelled (names, legends, colours) and the later one's deltas
    // against the first are given.
    assert_eq!(again["jobs"][0]["run"], "old");
    assert_eq!(again["jobs"][10]["run"], "new");
    let report = std::fs::read_to_string(cmp.join("report.html")).unwrap();
    assert!(report.contains("stock [old]") && report.contains("stock [new]"), "both runs named in the report");
    let deltas = std::fs::read_to_string(cmp.join("deltas.csv")).unwrap();
    assert!(deltas.starts_with("device,format,profile,test,figure,base_run,run,base,value,delta_percent"), "{deltas}");
    assert!(deltas.lines().skip(1).all(|l| l.ends_with(",0.0") || l.ends_with(",0")), "the same file against itself moves by nothing: {deltas}");
    assert!(out_text.contains("old -> new"), "{out_text}");
    refused(&["compare", res.to_str().unwrap(), "--label", "a", "--label", "b"], "--label given 2 times for 1 results files");
}

#[test]
fn a_seed_gives_the_same_results_file_on_one_thread_or_two() {
    let run = |jobs: &str, name: &str| {
        let out = tmp(name);
        let (code, _, err) = flashlab(&[
            "review",
            "flashmax2",
            "p420m",
            "--format",
            "stock",
            "--profiles",
            "4k,8k7030",
            "--scale",
            "512",
            "--snia-precondition",
            "--precondition-min",
            "1",
            "--jobs",
            jobs,
            "--out",
            out.to_str().unwrap(),
            "-q",
        ]);
        assert_eq!(code, 0, "{err}");
        std::fs::read(out.join("results.json")).unwrap()
    };
    let a = run("1", "det1");
    let b = run("2", "det2");
    assert!(a == b, "results differ between --jobs 1 and --jobs 2");
    let r: serde_json::Value = serde_json::from_slice(&a).unwrap();
    let order: Vec<String> =
        r["jobs"].as_array().unwrap().iter().map(|j| format!("{} {}", j["device"]["id"].as_str().unwrap(), j["profile"].as_str().unwrap())).collect();
    assert_eq!(order, ["flashmax2 4k", "flashmax2 8k7030", "p420m 4k", "p420m 8k7030"]);
}

#[test]
fn pts_runs_the_snia_sequence_and_reports_its_tables() {
    let out = tmp("pts");
    let fio_dir = tmp("pts-fio");
    let (code, stdout, err) =
        flashlab(&["review", "mx6300", "--pts", "--scale", "64", "--out", out.to_str().unwrap(), "--export-fio", fio_dir.to_str().unwrap(), "-q"]);
    assert_eq!(code, 0, "{err}");
    // The PTS steps as fio jobs, which fio parses.
    let fio = tool("fio", "fio");
    for f in ["1-wipc.fio", "2-iops-round.fio", "3-throughput.fio", "4-latency.fio"] {
        let path = fio_dir.join("pts").join(f);
        let o = Command::new(&fio).arg("--parse-only").arg(&path).output().unwrap();
        assert!(o.status.success(), "{}: {}", path.display(), String::from_utf8_lossy(&o.stderr));
    }
    assert_eq!(std::fs::read_to_string(fio_dir.join("pts/2-iops-round.fio")).unwrap().matches("stonewall").count(), 56);
    assert!(stdout.contains("SNIA PTS"), "{stdout}");
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let p = &r["pts"][0];
    // Twice the capacity written sequentially before the IOPS rounds.
    assert!((p["wipc"]["drive_writes"].as_f64().unwrap() - 2.0).abs() < 0.01, "{}", p["wipc"]["drive_writes"]);
    let rounds = p["rounds"].as_array().unwrap();
    assert!((5..=25).contains(&rounds.len()), "{}", rounds.len());
    assert!(rounds.iter().all(|r| r.as_array().unwrap().len() == 56));
    assert_eq!(p["tracked"].as_array().unwrap().len(), rounds.len());
    assert_eq!(p["iops_matrix"].as_array().unwrap().len(), 56);
    assert_eq!(p["throughput"].as_array().unwrap().len(), 4);
    assert_eq!(p["latency"].as_array().unwrap().len(), 9);
    // Small blocks give more IOPS than large ones; reads more than writes.
    let iops = |rd: u64, bs: u64| {
        p["iops_matrix"].as_array().unwrap().iter().find(|c| c["read_pct"] == rd && c["block_bytes"] == bs).unwrap()["iops"].as_f64().unwrap()
    };
    assert!(iops(100, 4096) > iops(100, 1 << 20) && iops(100, 4096) > iops(0, 4096));
    // PTS 2.0.2: three tracking variables in the IOPS test, all steady over
    // the window the matrix averages; each cell settled there.
    assert_eq!(p["version"], "2.0.2");
    let tracking = p["iops_tracking"].as_array().unwrap();
    let names: Vec<&str> = tracking.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["4KiB 0/100 IOPS", "64KiB 65/35 IOPS", "1024KiB 100/0 IOPS"]);
    assert!(p["steady_state"]["reached"] == true && tracking.iter().all(|t| t["window"]["steady"] == true), "{}", p["steady_state"]);
    let window = &rounds[rounds.len() - 5..];
    let settled = |rd: u64, bs: u64| -> Vec<f64> {
        window.iter().map(|r| r.as_array().unwrap().iter().find(|c| c["read_pct"] == rd && c["block_bytes"] == bs).unwrap()["iops"].as_f64().unwrap()).collect()
    };
    let mixed = settled(65, 64 << 10);
    let mean = mixed.iter().sum::<f64>() / 5.0;
    assert!((iops(65, 64 << 10) - mean).abs() < 1e-6 * mean, "the matrix is the window's average");
    // The throughput tests (128 KiB, 1024 KiB) and the latency test: each
    // after its own purge and preconditioning, to its own steady state.
    let tests: Vec<&serde_json::Value> = p["throughput_tests"].as_array().unwrap().iter().chain([&p["latency_test"]]).collect();
    let test_names: Vec<&str> = tests.iter().map(|t| t["test"].as_str().unwrap()).collect();
    assert_eq!(test_names, ["throughput SEQ 128KiB", "throughput SEQ 1024KiB", "latency"]);
    for t in &tests {
        assert!((t["wipc"]["drive_writes"].as_f64().unwrap() - 2.0).abs() < 0.01, "{}: its own preconditioning", t["test"]);
        assert!(t["steady_state"]["reached"] == true && (5..=25).contains(&t["rounds"].as_array().unwrap().len()), "{}", t["steady_state"]);
    }
    let total_rounds: usize = tests.iter().map(|t| t["rounds"].as_array().unwrap().len() * t["rounds"][0].as_array().unwrap().len()).sum();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("SNIA PTS") && html.contains("PTS 2.0.2") && html.contains("Throughput (sequential, MB/s)") && html.contains("Latency (1 thread"));
    // The items PTS 2.0.2's report requires: the header's test conditions
    // (from the run), each test's steady-state determination with its
    // fit, a plot per tracking variable, the IOPS 2D and 3D plots, the
    // latency 3D plots and the five nines.
    for item in [
        "Test conditions",
        "write cache",
        "power loss",
        "data pattern",
        "active range",
        "test platform",
        "software",
        "64KiB 65/35 IOPS",
        "throughput SEQ 1024KiB",
        "4KiB 0/100 average latency",
        "99.99th percentile",
        "least-squares fit",
        // A QD 1 read round at scale 64 holds under 10,000 I/Os: its
        // five nines is its maximum, said so.
        "I/Os a round)",
    ] {
        assert!(html.contains(item), "the report shows {item}");
    }
    for chart in [
        "iops-3d",
        "latency-avg-3d",
        "latency-max-3d",
        "iops",
        "convergence",
        "steady-iops-64kib-65-35-iops",
        "steady-throughput-seq-1024kib-1024kib-0-100-mb-s",
        "steady-latency-4kib-0-100-average-latency",
    ] {
        assert!(out.join("charts").join(format!("pts-mx6300-stock-{chart}.svg")).is_file(), "the {chart} chart");
    }
    // Rendered: every chart drawn, 56 bars in the IOPS 3D plot and 9 in
    // each latency one, no console error.
    let prof = tmp("pts-chromium");
    let o = common::chromium::chromium(&["--dump-dom", &format!("file://{}", out.join("report.html").display())], &prof);
    let (dom, log) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "chromium failed: {log}");
    assert_eq!(dom.matches("class=\"bar3d\"").count(), 56 + 2 * 9, "3D bars drawn");
    for bad in ["Uncaught", "CONSOLE", "Failed to load resource", "parsererror"] {
        assert!(!log.contains(bad) && !dom.contains(bad), "'{bad}' rendering the PTS report: {log}");
    }
    let csv = std::fs::read_to_string(out.join("pts.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 56 * rounds.len() + 56 + total_rounds + 4 + 9);
}

/// `--fail-die`: each job ends with a phase through the failure, its
/// rebuild reported (printed, in the results, in failures.csv and
/// failure_rounds.csv) and charted in the report, which Chromium renders
/// cleanly; the published comparison is the one without the failure.
#[test]
fn review_through_a_die_failure_charts_it_and_reports_the_rebuild() {
    let out = tmp("fail-die");
    let args = [
        "review",
        "p420m",
        "flashmax2",
        "--format",
        "stock",
        "--profiles",
        "4k",
        "--scale",
        "128",
        "--fail-die",
        "3.1@1",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ];
    let (code, stdout, err) = flashlab(&args);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("die 3.1 failed at 1.00 s; rebuild") && stdout.contains("[simulated]"), "{stdout}");
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(r["settings"]["fail"][0]["at_s"], 1.0);
    for j in r["jobs"].as_array().unwrap() {
        let f = &j["failure"];
        let rep = &f["reports"][0];
        let (at, done) = (rep["failed_at_s"].as_f64().unwrap(), rep["rebuild_done_at_s"].as_f64().expect("the rebuild ended"));
        assert!((at - 1.0).abs() < 0.01 && done > at, "{rep}");
        assert!(rep["rebuild_bytes"].as_u64().unwrap() > 0 && rep["event"]["lost_offsets"].as_array().unwrap().is_empty());
        assert!(f["phase"]["virtual_seconds"].as_f64().unwrap() > done, "the phase runs past the rebuild");
        assert!(rep["iops_during"].as_f64().unwrap() < rep["iops_before"].as_f64().unwrap(), "{rep}");
        // The main tests' comparison stands: no check comes from the
        // failure phase.
        assert!(j["comparison"].as_array().unwrap().iter().all(|c| c["conditions"].as_str().is_none_or(|s| !s.contains("failure"))));
    }
    let failures = std::fs::read_to_string(out.join("failures.csv")).unwrap();
    assert_eq!(failures.lines().count(), 3, "a header and a row per job: {failures}");
    assert!(failures.lines().next().unwrap().contains("rebuild_s"));
    assert!(std::fs::read_to_string(out.join("failure_rounds.csv")).unwrap().lines().count() > 20);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Die failure and rebuild") && html.contains("rebuilt in"), "the report's failure section");
    for key in ["iops", "latency-avg", "latency-max"] {
        assert!(out.join("charts").join(format!("4k-failure-{key}.svg")).is_file(), "{key} chart");
    }
    let prof = tmp("fail-die-chromium");
    layout_check(&out, &prof, 2, 0);
    // Without a failure, none of it.
    let plain = tmp("no-fail");
    let (code, _, err) = flashlab(&["review", "p420m", "--profiles", "4k", "--scale", "256", "--out", plain.to_str().unwrap(), "-q"]);
    assert_eq!(code, 0, "{err}");
    assert!(!plain.join("failures.csv").exists() && !std::fs::read_to_string(plain.join("report.html")).unwrap().contains("Die failure"));
}

#[test]
fn bad_review_input_is_refused_naming_the_problem() {
    refused(&["review", "--scale", "64"], "no device");
    refused(&["review", "flashmax2", "--profiles", "4k,oltp"], "unknown profile 'oltp'");
    refused(&["review", "nosuch"], "unknown device 'nosuch'");
    refused(&["review", "p420m", "--format", "hp"], "p420m has no format 'hp'");
    refused(&["review", "flashmax2", "--scale", "100000"], "--scale 100000");
    refused(&["review", "flashmax2", "--scale", "128", "--precondition-min", "20", "--precondition-max", "10"], "preconditioning 20..10");
    // (At a small scale, so that a refusal that fails to come costs little.)
    refused(&["review", "flashmax2", "--scale", "128", "--fail-die", "40.0@1"], "--fail-die on flashmax2: channel 40");
    refused(&["review", "flashmax2", "--scale", "128", "--fail-die", "3.1"], "TARGET@SECONDS");
    refused(&["review", "flashmax2", "--scale", "128", "--fail-die", "3.1@1", "--rebuild-rate", "0"], "--rebuild-rate 0 MB/s");
    refused(&["review", "flashmax2", "--scale", "128", "--rebuild-rate", "50"], "--fail-die");
    refused(&["review", "flashmax2", "--scale", "128", "--fail-die", "3.1@1", "--pts"], "the SNIA PTS has no failure phase");
    // An output directory that cannot be made (its parent is a file) is
    // refused before any simulation runs.
    let f = tmp("file");
    std::fs::write(&f, b"x").unwrap();
    refused(&["review", "flashmax2", "--out", f.join("sub").to_str().unwrap()], "--out");
    // Results files: not JSON, truncated, not a review, another version.
    let d = tmp("bad-results");
    std::fs::create_dir_all(&d).unwrap();
    let write = |name: &str, text: &str| {
        let p = d.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    refused(&["compare", &write("garbage.json", "not json at all")], "not valid JSON");
    refused(&["compare", &write("trunc.json", "{\"kind\": \"flashlab-review\", \"schema_")], "not valid JSON");
    refused(&["compare", &write("other.json", "{\"kind\": \"something-else\"}")], "not a flashlab review results file");
    refused(&["compare", &write("v99.json", "{\"kind\": \"flashlab-review\", \"schema_version\": 99, \"flashlab_version\": \"9.0.0\"}")], "schema version 99");
    refused(&["compare", &write("v1.json", "{\"kind\": \"flashlab-review\", \"schema_version\": 1}")], "does not match schema version 1");
    refused(&["compare", d.join("missing.json").to_str().unwrap()], "cannot read results file");
}
