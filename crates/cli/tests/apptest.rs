//! `flashlab apptest sysbench`: SysBench OLTP on a MariaDB server of the
//! test's own, on ext4 on a served card. Small here (2 and 8 threads, a
//! few seconds each, small tables): the figures are present and
//! positive, the card's own figures come from its trace, and nothing is
//! left mounted or running, after a whole test, after Ctrl-C during the
//! load and during a run (the card's store then mounts again), and after
//! a failure in the stack (a card too small for MariaDB's files).
//!
//! Needs root (a loop device) and Debian's mariadb-server, sysbench,
//! libnbd-bin, fuse3 (`.ci/run` installs them).

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{tool, Scratch};

/// One test at a time: each runs a database on a 2-core machine.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn tools() {
    for (t, p) in [
        ("mariadbd", "mariadb-server"),
        ("sysbench", "sysbench"),
        ("nbdfuse", "libnbd-bin"),
        ("fusermount3", "fuse3"),
        ("mkfs.ext4", "e2fsprogs"),
        ("losetup", "mount"),
    ] {
        tool(t, p);
    }
}

/// `apptest sysbench` on the P420m at scale 4096 (320 MB), its files in
/// `out`, with `args` after.
fn start(out: &Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["apptest", "sysbench", "p420m", "--scale", "4096", "--out"])
        .arg(out)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Nothing of the test `pid` (run in `out`) is left: no mount, no loop
/// device, no process (MariaDB, nbdfuse, the served card, sysbench), no
/// run directory.
fn nothing_left(pid: u32, out: &Path) {
    let run_dir = std::env::temp_dir().join(format!("flashlab-apptest-{pid}"));
    let marks = [run_dir.to_str().unwrap().to_string(), out.to_str().unwrap().to_string()];
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    assert!(!marks.iter().any(|m| mounts.contains(m.as_str())), "left mounted: {mounts}");
    let loops = String::from_utf8(Command::new("losetup").arg("-a").output().unwrap().stdout).unwrap();
    assert!(!loops.contains(marks[0].as_str()), "a loop device left: {loops}");
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        assert!(!marks.iter().any(|m| cmdline.contains(m.as_str())), "left running: {cmdline}");
    }
    assert!(!run_dir.exists(), "{} left", run_dir.display());
}

/// The card's store mounts again: served, it says it mounted, and stops
/// cleanly.
fn store_mounts(out: &Path) {
    let socket = out.join("again.sock");
    let mut s = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["serve", "p420m", "--scale", "4096", "--store"])
        .arg(out.join("store"))
        .arg("--unix")
        .arg(&socket)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !socket.exists() && start.elapsed() < Duration::from_secs(60) {
        assert!(s.try_wait().unwrap().is_none(), "the store did not mount again");
        std::thread::sleep(Duration::from_millis(50));
    }
    Command::new("kill").args(["-TERM", &s.id().to_string()]).status().unwrap();
    let status = s.wait().unwrap();
    let mut log = String::new();
    s.stderr.take().unwrap().read_to_string(&mut log).unwrap();
    assert!(status.success() && log.contains("mounted"), "{status}: {log}");
}

fn output(mut c: Child) -> (i32, String, String) {
    let (mut out, mut err) = (String::new(), String::new());
    c.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    c.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (c.wait().unwrap().code().unwrap_or(-1), out, err)
}

#[test]
fn sysbench_on_a_served_card_gives_its_figures_and_leaves_nothing_behind() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    tools();
    let out = Scratch::new("apptest");
    let json = out.with_extension("json");
    let child = start(&out, &["--threads", "2,8", "--duration", "3", "--tables", "2", "--table-size", "2000", "--json", json.to_str().unwrap()]);
    let pid = child.id();
    let (code, stdout, stderr) = output(child);
    assert_eq!(code, 0, "{stdout}{stderr}");
    nothing_left(pid, &out);
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).unwrap();
    assert_eq!(r["kind"], "flashlab apptest sysbench");
    assert!(r["incomplete"].is_null() && r["teardown_problems"].is_null(), "{r}");
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.iter().map(|p| p["threads"].as_u64().unwrap()).collect::<Vec<_>>(), [2, 8]);
    for p in points {
        let (s, c) = (&p["sysbench"], &p["card"]);
        let f = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k} missing: {p}"));
        assert!(f(s, "tps") > 0.0 && f(s, "latency_avg_ms") > 0.0, "{p}");
        assert!(f(s, "latency_min_ms") <= f(s, "latency_avg_ms") && f(s, "latency_p95_ms") <= f(s, "latency_p99_ms"), "{p}");
        assert!(f(s, "latency_p99_ms") <= f(s, "latency_max_ms") * 1.02, "a percentile above the maximum: {p}");
        // The card's own figures, from its trace: every commit is a write
        // and a flush on the card.
        assert!(c["writes"].as_u64().unwrap() > 0 && c["flushes"].as_u64().unwrap() > 0, "{p}");
        assert!(f(c, "iops") > 0.0 && f(c, "latency_avg_us") > 0.0 && f(c, "latency_p99_us") <= f(c, "latency_max_us"), "{p}");
        assert!(f(c, "write_amplification") >= 1.0, "{p}");
    }
    assert!(r["load"]["card"]["writes"].as_u64().unwrap() > 0, "{r}");
    for f in ["results.json", "sysbench-tps.svg", "sysbench-latency.svg", "sysbench.trace", "serve.log", "mariadbd.log", "sysbench-8t.log"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    assert!(std::fs::read_to_string(out.join("sysbench-tps.svg")).unwrap().contains("8 threads"));
    assert!(stdout.contains("simulated") && stdout.contains("TPS"), "{stdout}");
    // The capture replays on another card.
    let (code, replayed, err) = common::flashlab(&["replay", out.join("sysbench.trace").to_str().unwrap(), "mx6300", "--scale", "4096", "--before", "fresh"]);
    assert_eq!(code, 0, "{err}");
    assert!(replayed.contains("mx6300") && replayed.contains("of a flashlab trace"), "{replayed}");
    store_mounts(&out);
    // A second test into the same directory is refused: the card is kept.
    let (code, _, err) = output(start(&out, &["--threads", "2"]));
    assert!(code == 2 && err.contains("holds a card already"), "{err}");
}

#[test]
fn ctrl_c_during_the_load_and_during_a_run_tears_everything_down() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    tools();
    for (phase, tables) in [("loading the tables", "8"), ("the run at 8 threads", "2")] {
        let out = Scratch::new(&format!("apptest-stop-{}", phase.len()));
        let mut child = start(&out, &["--threads", "2,8", "--duration", "30", "--tables", tables, "--table-size", "40000"]);
        let pid = child.id();
        // Read standard error until the phase starts, then Ctrl-C.
        let mut err = child.stderr.take().unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 256];
        while !String::from_utf8_lossy(&seen).contains(phase) {
            let n = err.read(&mut buf).unwrap();
            assert!(n > 0, "ended before '{phase}': {}", String::from_utf8_lossy(&seen));
            seen.extend_from_slice(&buf[..n]);
        }
        Command::new("kill").args(["-INT", &pid.to_string()]).status().unwrap();
        let mut rest = String::new();
        err.read_to_string(&mut rest).unwrap();
        let mut stdout = String::new();
        child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
        let code = child.wait().unwrap().code();
        assert_eq!(code, Some(130), "{phase}: {rest}");
        nothing_left(pid, &out);
        let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
        let why = r["incomplete"].as_str().unwrap();
        let during = if phase.starts_with("loading") { "during the load" } else { "during the run at 8 threads" };
        assert!(why.contains(during), "{phase}: {why}");
        assert!(!rest.contains("teardown:"), "{rest}");
        store_mounts(&out);
    }
}

#[test]
fn a_failure_in_the_stack_is_named_and_torn_down() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    tools();
    // At scale 32768 the P420m's 43 MB hold ext4 but not MariaDB's
    // 48 MB redo log.
    let out = Scratch::new("apptest-full");
    let child = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["apptest", "sysbench", "p420m", "--scale", "32768", "--threads", "2", "--out"])
        .arg(&*out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (code, _, err) = output(child);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("making MariaDB's data directory") && err.contains("error 28"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    nothing_left(pid, &out);
}
