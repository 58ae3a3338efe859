//! Managing a served card and one at rest: `flashlab status` (served and
//! at rest, the latter changing nothing), the control protocol's refusals,
//! `flashlab format`, `volumes` and `beacon` (served and at rest), and
//! `flashlab monitor` against fio's own per-second log, with its
//! Prometheus endpoint scraped by curl.
//!
//! fio, curl and grep come from Debian's packages (`.ci/run` installs
//! them).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

mod common;
use common::{flashlab, refused, tool, Scratch, Served};

fn status_json(store: &str) -> serde_json::Value {
    let (code, out, err) = flashlab(&["status", "--store", store, "--json"]);
    assert_eq!(code, 0, "flashlab status {store}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{out}: {e}"))
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"))
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
        let (code, _, err) = flashlab(&["control", "--store", &store, "--raw", req]);
        assert!(code == 2 && err.contains(says), "{req}: {err}");
    }
    // The old form of a raw request still works, with a warning naming the new.
    let (code, out, err) = flashlab(&["control", "--store", &store, "--json", r#"{"v":1,"cmd":"beacon","on":false}"#]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("old form of `control --raw REQUEST --json`") && json(&out)["beacon"] == false, "{err}{out}");
    // The beacon: shown in the status and its alerts; the answer for
    // people by default, as JSON with --json.
    let (code, out, err) = flashlab(&["control", "--store", &store, "beacon", "on"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().any(|l| l.split_whitespace().collect::<Vec<_>>() == ["beacon", "true"]), "{out}");
    let (code, out, err) = flashlab(&["control", "--store", &store, "--json", "beacon", "on"]);
    assert_eq!(code, 0, "{err}");
    assert!(json(&out)["beacon"] == true, "{out}");
    // `--json FILE` takes a file as every command does; the command's
    // words after it are still the command's.
    let file = std::path::Path::new(&store).with_file_name("answer.json");
    let (code, out, err) = flashlab(&["control", "--store", &store, "beacon", "on", "--json", file.to_str().unwrap()]);
    assert!(code == 0 && out.is_empty(), "{err}{out}");
    assert!(json(&std::fs::read_to_string(&file).unwrap())["beacon"] == true);
    let (_, text, _) = flashlab(&["status", "--store", &store]);
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
    let (_, text, _) = flashlab(&["status", "--store", &store]);
    assert!(text.contains("at rest; beacon ON") && text.contains("not drawing") && text.contains("! beacon on"), "the beacon stays lit at rest: {text}");
    // The restart still mounts from the checkpoint: looking kept it.
    card.start_again();
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
    let (code, _, err) = flashlab(&["status", "--store", empty.to_str().unwrap()]);
    assert!(code == 2 && err.contains("no card here"), "{err}");
}

/// A marker fio writes, to be looked for on the media.
const MARKER: &str = "FLASHLAB-MARKER-7f3a";

/// Whether any member file of the store holds `MARKER` (grep on the raw
/// media: what a forensic look at the flash would find).
fn media_holds_marker(store: &str) -> bool {
    let members: Vec<_> = std::fs::read_dir(store).unwrap().flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "flash")).collect();
    assert!(!members.is_empty(), "no member files in {store}");
    Command::new("grep").arg("-qaF").arg(MARKER).args(&members).status().unwrap().success()
}

/// Runs a fio job file with `body` against the card; its output, checked.
fn fio_run(card: &Served, name: &str, body: &str) -> String {
    let job = card.dir.join(name);
    std::fs::write(&job, format!("[global]\nioengine=nbd\nverify_state_save=0\n{body}")).unwrap();
    let out = Command::new(tool("fio", "fio")).arg(&job).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "fio {name}: {text}{}", String::from_utf8_lossy(&out.stderr));
    text
}

/// The capacity of a P420m at scale 8192 in `format`.
fn capacity(format: &str) -> u64 {
    let profile = card::profile_load("p420m").unwrap();
    card::Device::new(&profile, format, 8192).unwrap().capacity_bytes()
}

/// Waits until the served card counts `n` clients.
fn clients_become(store: &str, n: u64) {
    for _ in 0..100 {
        if status_json(store)["clients"].as_u64() == Some(n) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("the card never counted {n} clients: {}", status_json(store));
}

/// Format, split, merge and beacon on a served card. Each destructive one
/// is refused without --force and while a client is connected, naming
/// why and changing nothing. Forced, a format brings the card back at its
/// new capacity (NBD shows it), reading zeros, its wear kept; the old
/// bytes stay on the media (as on a real card, until erased) until a
/// secure erase purges them. After a split two exports serve data
/// independently (fio verify on both at once); merged, one again.
#[test]
fn format_split_merge_and_beacon_on_a_served_card() {
    use emu::nbd;
    use testkit::Client;
    let mut card = Served::start("format", &["--timing", "none"]);
    let store = store_of(&card);
    fio_run(&card, "marker.fio", &format!("[m]\nuri={}\nrw=write\nbs=64k\nsize=4m\nbuffer_pattern=\"{MARKER}\"\n", card.uri()));
    assert!(media_holds_marker(&store), "the marker was written");
    let before = status_json(&store);
    let unchanged = |why: &str| {
        let now = status_json(&store);
        assert_eq!((now["format"].clone(), now["host_bytes_written"].clone()), (before["format"].clone(), before["host_bytes_written"].clone()), "{why}");
    };
    refused(
        &["format", "--store", &store, "--format", "1200GB"],
        "a format destroys every byte on the card: refused without force (--force to flashlab format",
    );
    refused(
        &["volumes", "--store", &store, "--split", "2"],
        "splitting the card destroys every byte on it (each volume's data would move): refused without force",
    );
    refused(&["format", "--store", &store, "--format", "no-such"], "no-such");
    unchanged("a refused command changes nothing");
    let held = Client::connect(&card.socket, "p420m").unwrap();
    clients_become(&store, 1);
    refused(&["format", "--store", &store, "--format", "1200GB", "--force"], "1 client is connected: disconnect it first");
    refused(&["volumes", "--store", &store, "--split", "2", "--force"], "1 client is connected: disconnect it first");
    unchanged("a refusal while connected changes nothing");
    drop(held);
    clients_become(&store, 0);
    // A format by capacity.
    let (code, out, err) = flashlab(&["format", "--store", &store, "--format", "1200GB", "--force"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("format 1200GB") && out.contains("every byte lost"), "{out}");
    let s = status_json(&store);
    assert_eq!((s["format"].as_str(), s["capacity_bytes"].as_u64()), (Some("1200GB"), Some(capacity("1200GB"))), "{s}");
    assert!(s["health"]["pe_cycles_mean"].as_f64() >= before["health"]["pe_cycles_mean"].as_f64(), "wear is kept: {s}");
    assert_eq!(s["host_bytes_written"], before["host_bytes_written"], "lifetime counts are kept");
    let mut c = Client::connect(&card.socket, "p420m").unwrap();
    assert_eq!(c.size, capacity("1200GB"), "NBD shows the new capacity");
    let r = c.call(nbd::CMD_READ, 0, 0, 1 << 20, &[]).unwrap();
    assert!(r.error == 0 && r.data.iter().all(|&b| b == 0), "a formatted card reads zeros");
    drop(c);
    clients_become(&store, 0);
    assert!(media_holds_marker(&store), "a plain format leaves the old bytes on the media until they are erased");
    // A secure erase.
    let (code, out, err) = flashlab(&["format", "--store", &store, "--format", "stock", "--secure-erase", "--force"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("purged"), "{out}");
    assert!(!media_holds_marker(&store), "a secure erase leaves no byte written before on the media");
    assert_eq!(status_json(&store)["capacity_bytes"].as_u64(), Some(capacity("stock")));
    split_and_merge(&card, &store);
    // The beacon, served: in the status; kept when the card stops.
    let (code, _, err) = flashlab(&["beacon", "--store", &store, "on"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(status_json(&store)["beacon"].as_bool(), Some(true));
    let (code, log) = card.stop_clean();
    assert_eq!(code, 0, "{log}");
    assert_eq!(status_json(&store)["beacon"].as_bool(), Some(true), "the beacon stays lit at rest");
}

/// Split: two exports, verified at once by fio; a split card is not split
/// again; merged, one export again.
fn split_and_merge(card: &Served, store: &str) {
    use testkit::Client;
    let (code, out, err) = flashlab(&["volumes", "--store", store, "--split", "2", "--force"]);
    assert_eq!(code, 0, "{err}");
    let half = capacity("stock") / 2 / 4096 * 4096;
    assert!(out.contains("'p420m-1'") && out.contains("'p420m-2'"), "{out}");
    let vols = status_json(store)["volumes"].clone();
    assert_eq!(vols, serde_json::json!([{"export": "p420m-1", "bytes": half}, {"export": "p420m-2", "bytes": capacity("stock") - half}]));
    // A split card split again was once wiped for nothing.
    refused(&["volumes", "--store", store, "--split", "2", "--force"], "the card is already 2 volumes: nothing done");
    let uri = |v: u32| format!("nbd+unix:///p420m-{v}?socket={}", card.socket.display());
    let out = fio_run(
        card,
        "both.fio",
        &format!("rw=randwrite\nbs=4k\niodepth=16\nverify=crc32c\nverify_fatal=1\ndo_verify=1\n[one]\nuri={}\n[two]\nuri={}\n", uri(1), uri(2)),
    );
    assert_eq!(out.matches("err= 0").count(), 2, "both volumes verified: {out}");
    assert!(Client::connect(&card.socket, "p420m").is_err(), "the whole card is no export while split");
    // Merge: one export again.
    let (code, _, err) = flashlab(&["volumes", "--store", store, "--merge", "--force"]);
    assert_eq!(code, 0, "{err}");
    let c = Client::connect(&card.socket, "p420m").unwrap();
    assert_eq!(c.size, capacity("stock"));
    drop(c);
}

/// Format, split and beacon on a card at rest: refused without --force
/// before the card is even opened (no power cycle counted); forced, the
/// store is changed and stopped cleanly, and the next serve presents it as
/// left: its new format and split, without being told, and refuses
/// another --format by name.
#[test]
fn format_split_and_beacon_on_a_card_at_rest() {
    let mut card = Served::start("format-rest", &["--timing", "none"]);
    let store = store_of(&card);
    let (code, log) = card.stop_clean();
    assert_eq!(code, 0, "{log}");
    let cycles = status_json(&store)["smart"]["power_cycles"].as_u64();
    refused(&["format", "--store", &store, "--format", "1200GB"], "refused without force");
    refused(&["volumes", "--store", &store, "--merge"], "merging the volumes destroys every byte on the card");
    refused(&["control", "--store", &store, "stats"], "'stats' needs a served card");
    assert_eq!(status_json(&store)["smart"]["power_cycles"].as_u64(), cycles, "a refusal opens nothing");
    let (code, out, err) = flashlab(&["format", "--store", &store, "--format", "1200GB", "--force"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("format 1200GB"), "{out}");
    let (code, _, err) = flashlab(&["volumes", "--store", &store, "--split", "2", "--force"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = flashlab(&["beacon", "--store", &store, "on"]);
    assert_eq!(code, 0, "{err}");
    let s = status_json(&store);
    assert_eq!((s["format"].as_str(), s["volumes"].as_array().map(Vec::len), s["beacon"].as_bool()), (Some("1200GB"), Some(2), Some(true)), "{s}");
    let (_, text, _) = flashlab(&["status", "--store", &store]);
    assert!(text.contains("at rest; beacon ON"), "{text}");
    // Served again as it was left.
    let sock = card.dir.join("again.sock");
    refused(
        &["serve", "p420m", "--scale", "8192", "--format", "stock", "--store", &store, "--unix", sock.to_str().unwrap()],
        "is formatted 1200GB; serve it as it is (without --format), or format it anew (every byte lost): flashlab format",
    );
    card.start_again();
    let s = status_json(&store);
    let half = capacity("1200GB") / 2 / 4096 * 4096;
    assert_eq!(s["volumes"], serde_json::json!([{"export": "p420m-1", "bytes": half}, {"export": "p420m-2", "bytes": capacity("1200GB") - half}]), "{s}");
    assert_eq!(s["beacon"].as_bool(), Some(true), "{s}");
    let (code, _, err) = flashlab(&["beacon", "--store", &store, "off"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(status_json(&store)["beacon"].as_bool(), Some(false));
    card.stop();
}

/// A tmux server of the test's own (its own socket), killed when dropped.
struct Tmux {
    tmux: String,
    socket: String,
}

impl Tmux {
    fn new(tag: &str) -> Tmux {
        Tmux { tmux: tool("tmux", "tmux"), socket: format!("flashlab-{tag}-{}", std::process::id()) }
    }

    fn run(&self, args: &[&str]) -> (bool, String) {
        let out = Command::new(&self.tmux).arg("-L").arg(&self.socket).args(args).env("TERM", "xterm-256color").output().unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).to_string())
    }

    /// The pane's text, one string a row.
    fn screen(&self) -> Vec<String> {
        let (ok, text) = self.run(&["capture-pane", "-p", "-t", "m"]);
        assert!(ok, "tmux capture-pane failed");
        text.lines().map(str::to_string).collect()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// The number after `label` on the screen (thousands separated).
fn figure_after(screen: &[String], label: &str) -> Option<u64> {
    let line = screen.iter().find(|l| l.contains(label))?;
    let rest = &line[line.find(label)? + label.len()..];
    rest.split_whitespace().next()?.replace(',', "").parse().ok()
}

/// `flashlab monitor` on a terminal (tmux, 80 columns by 24 rows): the
/// screen is drawn for 80 columns, shows the live figures under fio load
/// and updates each second; q quits it.
#[test]
fn monitor_draws_a_live_screen_on_an_80_column_terminal() {
    let fio = tool("fio", "fio");
    let card = Served::start("screen", &["--timing", "none"]);
    let store = store_of(&card);
    let t = Tmux::new("screen");
    let cmd = format!("{} monitor {store}", env!("CARGO_BIN_EXE_flashlab"));
    let (ok, _) = t.run(&["new-session", "-d", "-s", "m", "-x", "80", "-y", "24", &cmd]);
    assert!(ok, "tmux new-session");
    let job = card.dir.join("load.fio");
    std::fs::write(&job, format!("[l]\nioengine=nbd\nuri={}\nrw=randrw\nbs=4k\niodepth=8\ntime_based=1\nruntime=7\n", card.uri())).unwrap();
    let mut load = Command::new(&fio).arg(&job).stdout(Stdio::null()).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_secs(4));
    let first = t.screen();
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let second = t.screen();
    assert!(load.wait().unwrap().success());
    let text = second.join("\n");
    for want in
        ["flashlab monitor", "Micron P420m", "I/O, last whole second", "avg", "p99", "max", "WA", "power", "write buffer", "IOPS, last", "life used", "q quits"]
    {
        assert!(text.contains(want), "'{want}' not on the screen:\n{text}");
    }
    assert!(second[0].starts_with('┌') && second[0].ends_with('┐') && second[0].chars().count() == 80, "drawn for 80 columns:\n{text}");
    let (s1, s2) = (figure_after(&first, "second "), figure_after(&second, "second "));
    assert!(s1.is_some() && s2 > s1, "the screen updates each second: {s1:?} then {s2:?}\n{text}");
    assert_eq!(figure_after(&first, "clients "), Some(1), "fio's connection shows:\n{}", first.join("\n"));
    let read = figure_after(&second, "read ").unwrap_or(0);
    assert!(read > 0, "fio's reads show: {read}\n{text}");
    t.run(&["send-keys", "-t", "m", "q"]);
    let quit = (0..60).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        !t.run(&["has-session", "-t", "m"]).0
    });
    assert!(quit, "q quits the monitor:\n{}", t.screen().join("\n"));
    card.stop();
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

/// `flashlab monitor --json` under fio load counts every I/O fio completed
/// (within 2% over the run) and reports the IOPS fio measured over the same
/// seconds within 10% (the two sample their seconds at their own moments:
/// on a loaded machine either may be late by a tenth of a second); its
/// Prometheus endpoint is scraped by curl and every sample parses.
#[test]
fn monitor_reports_what_fio_measures_and_serves_prometheus_text() {
    let fio = tool("fio", "fio");
    let curl = tool("curl", "curl");
    let card = Served::start("monitor", &[]);
    let store = store_of(&card);
    let mut monitor = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["monitor", "--store", &store, "--json", "--count", "16", "--metrics", "127.0.0.1:0"])
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
    let report = card.dir.join("fio.json");
    let fio_run = Command::new(&fio).arg("--output-format=json").arg(format!("--output={}", report.display())).arg(&job).stdout(Stdio::null()).spawn().unwrap();
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
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let fio_total: u64 =
        report["jobs"].as_array().unwrap().iter().map(|j| j["read"]["total_ios"].as_u64().unwrap() + j["write"]["total_ios"].as_u64().unwrap()).sum();
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
    assert!(err < 0.10, "monitor {monitor_ios} I/Os, fio {fio_ios:.0}: {:.1}% apart", err * 100.0);
    let monitor_total: u64 = seconds.iter().map(|s| s["read_iops"].as_u64().unwrap() + s["write_iops"].as_u64().unwrap()).sum();
    let total_err = (monitor_total as f64 - fio_total as f64).abs() / fio_total as f64;
    eprintln!("monitor {monitor_total} I/Os in all, fio {fio_total}: {:.2}% apart", total_err * 100.0);
    assert!(total_err < 0.02, "monitor {monitor_total} I/Os in all, fio {fio_total}: {:.1}% apart ({seconds:?})", total_err * 100.0);
    let s = busy[busy.len() / 2];
    let (avg, p99, max) = (s["latency_avg_us"].as_f64().unwrap(), s["latency_p99_us"].as_f64().unwrap(), s["latency_max_us"].as_f64().unwrap());
    assert!(avg <= max && p99 <= max && avg > 0.0, "{s}");
    card.stop();
}

/// Polls the served card's status until `done` holds (at most 30 s).
fn status_until(store: &str, what: &str, done: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
    for _ in 0..300 {
        let v = status_json(store);
        if done(&v) {
            return v;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("{what} never happened: {}", status_json(store));
}

/// The lifetime counters were once written only at a start and a clean
/// stop, so after a kill -9 status said nothing had been written, and
/// NAND writes left out rebuilds and parity. Now every acknowledged write
/// is counted across a cut (the P420m protects its buffer), and NAND
/// writes count every program: after a rebuild they exceed host writes by
/// at least what the rebuild moved.
#[test]
fn lifetime_counters_survive_a_cut_and_count_every_nand_program() {
    let mut card = Served::start("counters", &[]);
    let store = store_of(&card);
    fio_run(&card, "w.fio", &format!("[w]\nuri={}\nrw=write\nbs=4k\nsize=8m\niodepth=4\n", card.uri()));
    card.cut_and_restart();
    let v = status_json(&store);
    assert_eq!(v["host_bytes_written"].as_u64(), Some(8 << 20), "{v}");
    assert_eq!(v["smart"]["host_slots_written"].as_u64(), Some(2048), "{v}");
    assert_eq!(v["smart"]["unclean_shutdowns"].as_u64(), Some(1));
    let nand_before = v["smart"]["nand_slots_written"].as_u64().unwrap();
    assert!(nand_before > 2048, "parity is programmed too: {nand_before}");
    let (code, _, err) = flashlab(&["control", "--store", &store, "fail-die", "1.0"]);
    assert_eq!(code, 0, "{err}");
    let v = status_until(&store, "the rebuild's end", |v| v["rebuilding"] == false && v["failures"][0]["rebuild_done_ns"].is_u64());
    let moved = v["failures"][0]["slots_moved"].as_u64().unwrap();
    assert!(moved > 0, "the rebuild moved slots: {v}");
    let nand = v["smart"]["nand_slots_written"].as_u64().unwrap();
    assert!(nand >= nand_before + moved, "NAND writes {nand} count the rebuild's {moved} moves (were {nand_before})");
    assert!(nand > v["smart"]["host_slots_written"].as_u64().unwrap());
}

/// Two dies failed at once once left the first one's rebuild "running"
/// in status for ever while stats said none ran; after a restart the dead
/// dies and the lost slots were gone from the text status. Both rebuilds
/// now end in status and in `control stats` (what monitor shows); after a
/// cut and a restart the text status names the dead dies and the lost
/// slots, and the alert for the lost data comes first.
#[test]
fn two_dies_failed_at_once_end_everywhere_and_are_remembered() {
    let mut card = Served::start("two-dies", &[]);
    let store = store_of(&card);
    fio_run(&card, "w.fio", &format!("[w]\nuri={}\nrw=randwrite\nbs=4k\nsize=16m\niodepth=8\n", card.uri()));
    let (code, _, err) = flashlab(&["control", "--store", &store, "fail-die", "2.0", "3.0"]);
    assert_eq!(code, 0, "{err}");
    let v = status_until(&store, "both rebuilds' end", |v| v["rebuilds"].as_array().is_some_and(|r| r.is_empty()));
    assert_eq!(v["rebuilding"], false);
    for f in v["failures"].as_array().unwrap() {
        assert!(f["rebuild_done_ns"].is_u64(), "every failure's rebuild ended: {f}");
    }
    assert!(!v["alerts"].as_array().unwrap().iter().any(|a| a.as_str().unwrap().contains("running")), "{v}");
    let (_, stats, _) = flashlab(&["control", "--store", &store, "--json", "stats"]);
    let stats: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(stats["rebuilding"], false, "{stats}");
    let (code, line, err) = flashlab(&["monitor", "--store", &store, "--json", "--count", "1"]);
    assert_eq!(code, 0, "{err}");
    let second: serde_json::Value = serde_json::from_str(line.trim()).unwrap_or_else(|e| panic!("{line}: {e}"));
    assert_eq!(second["rebuilding"], false, "monitor shows the rebuilds ended: {second}");
    let lost = v["slots_lost"].as_u64().unwrap();
    assert!(lost > 0, "two dies of one stripe group lose the slots whose stripes held both: {v}");
    card.cut_and_restart();
    let (code, text, err) = flashlab(&["status", "--store", &store]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("dead dies       die 2.0, die 3.0"), "{text}");
    let alerts = &text[text.find("alerts").unwrap()..];
    let first = alerts.lines().nth(1).unwrap();
    assert!(first.contains(&format!("{lost} slots of 4 KiB hold lost data")), "the worst alert first: {text}");
    assert!(alerts.contains("die 2.0") && alerts.contains("die 3.0"), "{text}");
}

/// Every command names a card's store with `--store`; the old positional
/// form of the management commands is still taken, with a warning naming
/// the new one, and gives the same answer.
#[test]
fn the_store_is_named_one_way_and_the_old_form_warns() {
    let card = Served::start("store-forms", &["--timing", "none"]);
    let store = card.dir.join("store").to_str().unwrap().to_string();
    let (code, new, err) = flashlab(&["status", "--store", &store]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("warning"), "{err}");
    let (code, old, err) = flashlab(&["status", &store]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(&format!("is the old form of `flashlab status --store {store}`")), "{err}");
    let strip = |t: &str| t.lines().filter(|l| !l.contains("clients") && !l.contains("card_ns")).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(strip(&old)[..2], strip(&new)[..2], "the same card either way");
    let (code, _, err) = flashlab(&["beacon", &store, "on"]);
    assert!(code == 0 && err.contains("`flashlab beacon --store"), "{err}");
    let (code, out, err) = flashlab(&["beacon", "--store", &store, "off"]);
    assert!(code == 0 && out.contains("beacon off") && !err.contains("warning"), "{out}{err}");
    refused(&["status"], "say which card: --store DIR");
    // `--json [FILE]`: alone, standard output; the old `status --json
    // STORE` (its store read as --json's file) still taken, with the
    // store's warning; a file written whole.
    let (code, out, err) = flashlab(&["status", "--json", &store]);
    assert!(code == 0 && err.contains("old form of `flashlab status --store"), "{err}");
    assert_eq!(json(&out)["device"], json(&flashlab(&["status", "--store", &store, "--json"]).1)["device"]);
    let file = card.dir.join("status.json");
    let (code, out, err) = flashlab(&["status", "--store", &store, "--json", file.to_str().unwrap()]);
    assert!(code == 0 && out.is_empty() && err.contains("written to"), "{out}{err}");
    assert!(json(&std::fs::read_to_string(&file).unwrap())["capacity_bytes"].as_u64().is_some());
    card.stop();
}
