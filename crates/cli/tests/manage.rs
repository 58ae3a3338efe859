//! Managing a served card and one at rest: `flashlab status` (served and
//! at rest, the latter changing nothing), the control protocol's refusals,
//! the beacon, and `flashlab monitor` against fio's own per-second log,
//! with its Prometheus endpoint scraped by curl.
//!
//! fio and curl come from Debian's packages (`.ci/run` installs them).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

mod common;
use common::{flashlab, tool, Scratch, Served};

fn status_json(store: &str) -> serde_json::Value {
    let (code, out, err) = flashlab(&["status", store, "--json"]);
    assert_eq!(code, 0, "flashlab status {store}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{out}: {e}"))
}

fn store_of(card: &Served) -> String {
    card.dir.join("store").to_str().unwrap().to_string()
}

/// Status, served and at rest: the same card, the same counts; at rest
/// nothing changes (the checkpoint stays, no power cycle is counted); an
/// unclean stop is counted at the next start; the beacon shows; bad
/// requests are refused by name and change nothing.
#[test]
fn status_shows_a_card_served_and_at_rest() {
    let fio = tool("fio", "fio");
    let mut card = Served::start("status", &["--timing", "none"]);
    let store = store_of(&card);
    let job = card.dir.join("w.fio");
    std::fs::write(&job, format!("[w]\nioengine=nbd\nuri={}\nrw=randwrite\nbs=4k\niodepth=8\nsize=16m\n", card.uri())).unwrap();
    assert!(Command::new(&fio).arg(&job).output().unwrap().status.success());
    let served = status_json(&store);
    assert_eq!(
        (served["served"].as_bool(), served["id"].as_str(), served["volumes"].as_array().map(Vec::len)),
        (Some(true), Some("p420m"), Some(1)),
        "{served}"
    );
    let written = served["host_bytes_written"].as_u64().unwrap();
    assert!(written >= 16 << 20, "{served}");
    assert!(served["lifetime_write_amplification"].as_f64().unwrap() >= 1.0, "{served}");
    assert_eq!(served["power_max_watts"].as_f64(), Some(30.0), "the P420m's data sheet: {served}");
    let w = served["power_watts"].as_f64().unwrap();
    assert!((8.0..=30.0).contains(&w), "{served}");
    // Bad requests: refused by name, nothing changed.
    for (req, says) in
        [("{not json", "not JSON"), (r#"{"v":1,"cmd":"reboot"}"#, "unknown command 'reboot'"), (r#"{"v":9,"cmd":"status"}"#, "protocol version 9")]
    {
        let (code, _, err) = flashlab(&["control", "--store", &store, "--json", req]);
        assert!(code == 2 && err.contains(says), "{req}: {err}");
    }
    // The beacon: shown in the status and its alerts.
    let (code, out, err) = flashlab(&["control", "--store", &store, "beacon", "on"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"beacon\":true"), "{out}");
    let (_, text, _) = flashlab(&["status", &store]);
    assert!(text.contains("beacon ON") && text.contains("! beacon on") && text.contains("served, 0 clients"), "{text}");
    let after = status_json(&store);
    assert_eq!(after["host_bytes_written"].as_u64(), Some(written), "a refused request changed nothing");
    // At rest: the same card, nothing changed by looking.
    let (code, log) = card.stop_clean();
    assert_eq!(code, 0, "{log}");
    let rest = status_json(&store);
    assert_eq!((rest["served"].as_bool(), rest["host_bytes_written"].as_u64()), (Some(false), Some(written)), "{rest}");
    assert_eq!(rest["smart"]["power_cycles"].as_u64(), Some(1), "looking at a card at rest is no power cycle: {rest}");
    assert!(rest["power_watts"].is_null(), "a card at rest draws nothing: {rest}");
    let (_, text, _) = flashlab(&["status", &store]);
    assert!(text.contains("at rest") && text.contains("not drawing") && text.contains("alerts none"), "{text}");
    // The restart still mounts from the checkpoint: looking kept it.
    card.child = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["serve", "p420m", "--scale", "8192", "--timing", "none", "--store", &store, "--unix"])
        .arg(&card.socket)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    card.wait_ready();
    let log = card.cut_and_restart();
    assert!(log.contains("from its clean shutdown's checkpoint"), "{log}");
    let s = status_json(&store);
    assert_eq!((s["smart"]["power_cycles"].as_u64(), s["smart"]["unclean_shutdowns"].as_u64()), (Some(3), Some(1)), "a cut is counted at the next start: {s}");
    // A die failure: its alert.
    let (code, _, err) = flashlab(&["control", "--store", &store, "fail-die", "3.1"]);
    assert_eq!(code, 0, "{err}");
    let s = status_json(&store);
    let alerts: Vec<&str> = s["alerts"].as_array().unwrap().iter().filter_map(|a| a.as_str()).collect();
    assert!(alerts.iter().any(|a| a.starts_with("die 3.1 failed")), "{alerts:?}");
    card.stop();
    // No card, and a card of no known kind.
    let empty = Scratch::new("status-empty");
    std::fs::create_dir_all(&*empty).unwrap();
    let (code, _, err) = flashlab(&["status", empty.to_str().unwrap()]);
    assert!(code == 2 && err.contains("no card here"), "{err}");
}

/// fio's per-second log (each job's IOPS, Unix-epoch stamped) as the I/Os
/// it did between two instants, each window's rate spread evenly over it.
fn fio_ios_between(log: &str, from_ms: u64, to_ms: u64) -> f64 {
    let mut total = 0.0;
    for line in log.lines() {
        let f: Vec<f64> = line.split(',').map(|x| x.trim().parse::<f64>().unwrap()).collect();
        let (end, iops) = (f[0], f[1]);
        let start = end - 1000.0;
        let overlap = (end.min(to_ms as f64) - start.max(from_ms as f64)).max(0.0);
        total += iops * overlap / 1000.0;
    }
    total
}

/// `flashlab monitor --json` under fio load reports the IOPS fio measured
/// over the same seconds within 5%; its Prometheus endpoint is scraped by
/// curl and every sample parses.
#[test]
fn monitor_reports_what_fio_measures_and_serves_prometheus_text() {
    let fio = tool("fio", "fio");
    let curl = tool("curl", "curl");
    let card = Served::start("monitor", &[]);
    let store = store_of(&card);
    let mut monitor = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["monitor", &store, "--json", "--count", "12", "--metrics", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(monitor.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let url = line.split_whitespace().find(|w| w.starts_with("http://")).unwrap_or_else(|| panic!("no endpoint: {line}")).to_string();
    let log = card.dir.join("fio");
    let job = card.dir.join("m.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nioengine=nbd\nuri={}\nrw=randrw\nrwmixread=70\nbs=4k\niodepth=16\nnumjobs=2\ntime_based=1\nruntime=8\nwrite_iops_log={}\nlog_avg_msec=1000\nlog_unix_epoch=1\n[m]\n",
            card.uri(),
            log.display()
        ),
    )
    .unwrap();
    let fio_run = Command::new(&fio).arg(&job).stdout(Stdio::null()).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_secs(4));
    let scrape = Command::new(&curl).args(["-sf", &url]).output().unwrap();
    assert!(scrape.status.success(), "curl {url}");
    let text = String::from_utf8(scrape.stdout).unwrap();
    let mut names = Vec::new();
    for l in text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let (name, value) = l.split_once(' ').unwrap_or_else(|| panic!("not a sample: {l}"));
        assert!(value.parse::<f64>().is_ok() && name.starts_with("flashlab_"), "not a sample: {l}");
        names.push(name.to_string());
    }
    for want in ["flashlab_read_iops", "flashlab_write_iops", "flashlab_latency_p99_seconds", "flashlab_power_watts", "flashlab_reads_total"] {
        assert!(names.iter().any(|n| n == want), "{want} missing from:\n{text}");
    }
    let out = fio_run.wait_with_output().unwrap();
    assert!(out.status.success());
    let seconds: Vec<serde_json::Value> = BufReader::new(monitor.stdout.take().unwrap()).lines().map(|l| serde_json::from_str(&l.unwrap()).unwrap()).collect();
    let _ = monitor.wait();
    let mut fio_log = String::new();
    for entry in std::fs::read_dir(&*card.dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with("fio_iops") {
            fio_log += &std::fs::read_to_string(entry.path()).unwrap();
        }
    }
    assert!(!fio_log.is_empty(), "fio wrote no IOPS log");
    // The seconds fio ran through, less a second at either end.
    let stamps: Vec<f64> = fio_log.lines().map(|l| l.split(',').next().unwrap().trim().parse().unwrap()).collect();
    let (first, last) = (stamps.iter().cloned().fold(f64::MAX, f64::min), stamps.iter().cloned().fold(0.0, f64::max));
    let busy: Vec<&serde_json::Value> =
        seconds.iter().filter(|s| s["unix_ms"].as_f64().unwrap() >= first && s["unix_ms"].as_f64().unwrap() + 1000.0 <= last - 1000.0).collect();
    assert!(busy.len() >= 3, "monitor's seconds inside fio's run: {seconds:?}");
    let (from, to) = (busy[0]["unix_ms"].as_u64().unwrap(), busy[busy.len() - 1]["unix_ms"].as_u64().unwrap() + 1000);
    let monitor_ios: u64 = busy.iter().map(|s| s["read_iops"].as_u64().unwrap() + s["write_iops"].as_u64().unwrap()).sum();
    let fio_ios = fio_ios_between(&fio_log, from, to);
    let err = (monitor_ios as f64 - fio_ios).abs() / fio_ios;
    eprintln!("monitor {monitor_ios} I/Os, fio {fio_ios:.0} over {} s: {:.2}% apart", busy.len(), err * 100.0);
    assert!(err < 0.05, "monitor {monitor_ios} I/Os, fio {fio_ios:.0}: {:.1}% apart", err * 100.0);
    let s = busy[busy.len() / 2];
    let (avg, p99, max) = (s["latency_avg_us"].as_f64().unwrap(), s["latency_p99_us"].as_f64().unwrap(), s["latency_max_us"].as_f64().unwrap());
    assert!(avg <= max && p99 <= max && avg > 0.0, "{s}");
    card.stop();
}
