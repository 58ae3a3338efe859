//! The lab on real storage: `flashlab run --target` on a file and on a
//! loop device, through Debian's fio, with short rounds; and the safety
//! rule: a target holding a file system is written only when `--destroy`
//! names it, a mounted one never, and nothing beside the target changes.
//!
//! Needs fio, e2fsprogs and util-linux, and root for the loop device
//! (`.ci/run` installs and runs them so).

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{flashlab, refused, tool};

/// A target file beside the build (not in /tmp, which may be a tmpfs
/// without O_DIRECT), `mb` MiB of one byte, with a neighbour file whose
/// bytes must not change.
struct Files {
    dir: PathBuf,
    target: PathBuf,
    neighbour: PathBuf,
}

impl Files {
    fn new(name: &str, mb: usize) -> Files {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("measured-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (target, neighbour) = (dir.join("target.img"), dir.join("neighbour"));
        std::fs::write(&target, vec![0x5au8; mb << 20]).unwrap();
        std::fs::write(&neighbour, b"left alone").unwrap();
        Files { dir, target, neighbour }
    }

    fn target(&self) -> &str {
        self.target.to_str().unwrap()
    }

    fn neighbour_untouched(&self) {
        assert_eq!(std::fs::read(&self.neighbour).unwrap(), b"left alone");
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A loop device over a file, detached when dropped.
struct Loop(String);

impl Loop {
    fn attach(file: &Path) -> Loop {
        tool("losetup", "mount");
        Loop(sh(Command::new("losetup").args(["--find", "--show"]).arg(file)))
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

fn sh(cmd: &mut Command) -> String {
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// A run with one-second rounds: preconditioning for a fixed 5 s
/// (judged at its end), then 3 s measured; the results file has the
/// simulated run's schema, marked measured, with the target and host.
#[test]
fn a_file_is_preconditioned_and_measured_through_fio_into_a_results_file() {
    tool("fio", "fio");
    let f = Files::new("file", 64);
    let json = f.dir.join("r.json");
    let args = [
        "run",
        "--target",
        f.target(),
        "--workload",
        "8k-7030",
        "--threads",
        "2",
        "--qd",
        "4",
        "--interval",
        "1",
        "--duration",
        "3",
        "--precondition",
        "--precondition-hours",
        "0.0014",
        "--json",
    ];
    let (code, out, err) = flashlab(&[&args[..], &[json.to_str().unwrap(), "-q"]].concat());
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("[measured]") && out.contains("through fio-"), "{out}");
    assert!(!out.contains("simulated"), "{out}");
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["measured"]["target"]["kind"], "file");
    assert_eq!(r["measured"]["target"]["size_bytes"], 64u64 << 20);
    assert!(r["measured"]["fio"].as_str().unwrap().starts_with("fio-"));
    let phases = r["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    assert_eq!(phases[0]["name"], "precondition");
    assert_eq!(phases[0]["workload"]["name"], "8k-7030", "8K 70/30 preconditions with itself");
    assert!(phases[0]["steady_state"]["rule"].as_str().unwrap().contains("fixed 5 s"));
    assert!(phases[0]["drive_writes"].as_f64().unwrap() > 0.0);
    assert!(r["measured"]["erased"].as_str().unwrap().contains("hole punched"), "{}", r["measured"]);
    let m = &phases[1];
    assert_eq!((m["threads"].as_u64(), m["queue_depth"].as_u64()), (Some(2), Some(4)));
    assert!((2..=4).contains(&m["intervals"].as_array().unwrap().len()), "{m}");
    let (read, write) = (&m["summary"]["read"], &m["summary"]["write"]);
    assert!(read["iops"].as_f64().unwrap() > 0.0 && write["iops"].as_f64().unwrap() > 0.0);
    assert!(read["latency_p99_ms"].as_f64().unwrap() <= read["latency_max_ms"].as_f64().unwrap());
    f.neighbour_untouched();
}

/// A file holding ext4 is refused for a test that writes, saying what it
/// holds; read-only runs go on; `--destroy` must name the target itself.
#[test]
fn a_target_holding_a_file_system_is_written_only_when_destroy_names_it() {
    tool("fio", "fio");
    let f = Files::new("fs", 32);
    sh(Command::new(tool("mkfs.ext4", "e2fsprogs")).args(["-q", "-F", f.target()]));
    let before = std::fs::read(&f.target).unwrap();
    let base = ["run", "--target", f.target(), "--threads", "1", "--qd", "1", "--interval", "1", "--duration", "1", "-q"];
    refused(&[&base[..], &["--workload", "4k-write"]].concat(), "holds a file system or volume of type ext4");
    refused(&[&base[..], &["--workload", "4k-write", "--destroy", "/dev/null"]].concat(), "not it");
    assert_eq!(std::fs::read(&f.target).unwrap(), before, "a refused run wrote nothing");
    let (code, out, err) = flashlab(&[&base[..], &["--workload", "4k-read"]].concat());
    assert_eq!(code, 0, "a read-only run reads: {out}{err}");
    assert_eq!(std::fs::read(&f.target).unwrap(), before, "a read-only run wrote nothing");
    let (code, out, err) = flashlab(&[&base[..], &["--workload", "4k-write", "--destroy", f.target()]].concat());
    assert_eq!(code, 0, "{out}{err}");
    f.neighbour_untouched();
}

/// Options only a simulated card has are refused by name; a missing
/// target is named; without fio, its package is.
#[test]
fn simulated_only_options_and_a_missing_target_are_refused() {
    let o = Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["run", "--target", "/dev/null", "--workload", "4k-read"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("install Debian's fio package"), "{err}");
    refused(&["run", "--target", "/nonexistent/flashlab.img", "--workload", "4k-read", "-q"], "/nonexistent/flashlab.img");
    refused(&["run", "--target", "/dev/null", "--workload", "4k-read", "--scale", "16"], "--scale is for a simulated card");
    refused(&["run", "--target", "/dev/null", "--workload", "4k-read", "--interval", "0.5"], "whole number of seconds");
}

/// A loop device: measured as a block device; holding ext4 it is refused
/// without `--destroy`; mounted, or claimed by another opener, it is
/// refused even with it.
#[test]
fn a_loop_device_is_measured_and_refused_while_mounted() {
    tool("fio", "fio");
    let f = Files::new("loop", 32);
    let looped = Loop::attach(&f.target);
    let dev = looped.0.clone();
    let base = ["run", "--target", &dev, "--workload", "4k-write", "--threads", "1", "--qd", "2", "--interval", "1", "--duration", "2", "-q"];
    let (code, out, err) = flashlab(&[&base[..], &["--precondition", "--precondition-hours", "0.0006"]].concat());
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("block device") && out.contains("erased by `blkdiscard /dev/loop"), "{out}");
    // Claimed exclusively by another opener (as a swap area or a RAID
    // member would be): in use, refused even with --destroy.
    {
        use std::os::unix::fs::OpenOptionsExt;
        let _claim = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_EXCL).open(&dev).unwrap();
        refused(&[&base[..], &["--destroy", &dev]].concat(), "is in use (opened exclusively");
    }
    sh(Command::new("mkfs.ext4").args(["-q", "-F", &dev]));
    refused(&base, "holds a file system or volume of type ext4");
    let mnt = f.dir.join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    sh(Command::new("mount").arg(&dev).arg(&mnt));
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(mnt.clone());
    refused(&[&base[..], &["--destroy", &dev]].concat(), "is mounted");
    f.neighbour_untouched();
}

/// An NBD export (a served card) through fio's nbd engine: the rounds
/// are the card's requests, as the server counts them.
#[test]
fn an_nbd_export_is_measured_through_fios_nbd_engine() {
    tool("fio", "fio");
    let served = common::Served::start("measured-nbd", &["--timing", "none"]);
    let uri = served.uri();
    let json = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("measured-nbd-{}.json", std::process::id()));
    let (code, out, err) = flashlab(&[
        "run",
        "--target",
        &uri,
        "--workload",
        "4k-write",
        "--threads",
        "2",
        "--qd",
        "8",
        "--interval",
        "1",
        "--duration",
        "2",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("(NBD export, 0.2 GB)") && out.contains("(nbd)"), "{out}");
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let size = r["measured"]["target"]["size_bytes"].as_u64().expect("the export's size, from nbdinfo");
    let phase = &r["phases"][0];
    let writes = phase["summary"]["write"]["ios"].as_u64().unwrap();
    assert!(writes > 1000, "{phase}");
    let dw = phase["drive_writes"].as_f64().unwrap();
    assert!((dw - writes as f64 * 4096.0 / size as f64).abs() < 1e-6 * dw.max(1.0), "{dw}");
    // The served card's own secure erase, over its control socket, before
    // each profile's preconditioning, said in the results. A store that
    // serves no card is refused by name.
    let store = served.dir.join("store");
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("measured-nbd-review-{}", std::process::id()));
    let review = ["review", "--target", &uri, "--profiles", "4k", "--interval", "1", "--rounds-4k", "1", "--precondition-hours", "0.0006", "-q", "--out"];
    let (code, out, err) = flashlab(&[&review[..], &[out_dir.to_str().unwrap(), "--served-store", store.to_str().unwrap()]].concat());
    assert_eq!(code, 0, "{out}{err}");
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out_dir.join("results.json")).unwrap()).unwrap();
    let erased = r["jobs"][0]["measured"]["erased"].as_str().unwrap();
    assert!(erased.starts_with("secure erase of the served card (format "), "{erased}");
    let (code, _, err) = flashlab(&[&review[..], &[out_dir.to_str().unwrap(), "--served-store", served.dir.to_str().unwrap()]].concat());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no card is served from this store"), "{err}");
    // Its figures fit a profile, as figures of the profile's default
    // format (real storage names none of a profile's formats).
    let results = out_dir.join("results.json");
    let fit = ["fit", "p420m", "--figures", results.to_str().unwrap(), "--tests", "4K write", "--params", "controller.program_path_bytes_per_sec"];
    let (code, out, err) = flashlab(&[&fit[..], &["--scale", "256", "--evals", "2", "--no-cross-validation", "-q"]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("p420m --format stock --scale 256") && out.contains("[4k-write 16T/16Q steady]"), "{out}");
    let _ = std::fs::remove_dir_all(&out_dir);
    // An export holding a file system is refused as a device would be.
    let img = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("measured-nbd-{}.img", std::process::id()));
    sh(Command::new(tool("mkfs.ext4", "e2fsprogs")).args(["-q", "-F"]).arg(&img).arg("16M"));
    sh(Command::new(tool("nbdcopy", "libnbd-bin")).arg(&img).arg(&uri));
    tool("qemu-img", "qemu-utils");
    refused(&["run", "--target", &uri, "--workload", "4k-write", "--interval", "1", "--duration", "1", "-q"], "holds a file system or volume of type ext4");
    let _ = std::fs::remove_file(img);
    let log = served.stop();
    assert!(log.contains("host slots written"), "{log}");
    let _ = std::fs::remove_file(json);
}

/// The reviewers' procedure on a file and a loop device in one review,
/// with one-second rounds: the review's files (results.json in the
/// review's schema, CSV, report.html) say measured, and each profile
/// erased its target first as far as it allowed. Then `compare` sets the
/// measured targets beside a simulated card and its published figures.
#[test]
fn the_reviewers_procedure_runs_on_a_file_and_a_loop_device() {
    tool("fio", "fio");
    let f = Files::new("review", 48);
    let looped = Loop::attach(&f.target);
    let dev = looped.0.clone();
    let out_dir = f.dir.join("review");
    let args = ["review", "--target", f.target(), "--target", &dev, "--profiles", "4k,seq", "--interval", "1", "--rounds-4k", "2"];
    let (code, out, err) = flashlab(&[&args[..], &["--precondition-hours", "0.0014", "--out", out_dir.to_str().unwrap(), "-q"]].concat());
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("main tests (measured)"), "{out}");
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out_dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(r["kind"], "flashlab-review");
    let jobs = r["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 4, "2 targets x 2 profiles");
    for (i, (target, erased)) in [(f.target(), "hole punched"), (dev.as_str(), "blkdiscard")].into_iter().enumerate() {
        let job = &jobs[2 * i];
        assert_eq!(job["device"]["id"], target);
        assert!(job["measured"]["erased"].as_str().unwrap().contains(erased), "{}", job["measured"]);
        let tests: Vec<&str> = job["tests"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(tests, ["4K write", "4K read"]);
        assert!(job["tests"][1]["summary"]["read"]["iops"].as_f64().unwrap() > 0.0);
        // The sequential profile fills the target twice over, then runs
        // its four tests as one stream each.
        let seq = &jobs[2 * i + 1];
        assert_eq!(seq["profile"], "seq");
        let fill = seq["precondition"]["drive_writes"].as_f64().unwrap();
        assert!((fill - 2.0).abs() < 0.05, "the fill wrote {fill} drive writes");
        let tests: Vec<&str> = seq["tests"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(tests, ["128K read", "64K read", "128K write", "64K write"]);
        assert!(seq["tests"].as_array().unwrap().iter().all(|t| t["summary"]["all"]["mb_per_s"].as_f64().unwrap() > 0.0));
    }
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(html.contains("Measured: every figure here is fio") && !html.contains("Simulated: every figure"));
    assert!(html.contains(&format!("{dev} [measured]")) && html.contains(&format!("{} [measured]", f.target())), "both targets in one report");
    let csv = std::fs::read_to_string(out_dir.join("tests.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2 * (2 + 4));
    // The card's own figures are not measured on real storage: empty.
    assert!(csv.lines().nth(1).unwrap().ends_with(','), "write amplification left empty: {csv}");
    f.neighbour_untouched();
    // Two devices' figures do not fit one profile.
    refused(&["fit", "p420m", "--figures", out_dir.join("results.json").to_str().unwrap()], "measured on several devices");
    // Beside a simulated card: each figure says where it came from, the
    // card's published figures judged against its simulated ones.
    let sim = f.dir.join("sim");
    let (code, _, err) = flashlab(&["review", "p420m", "--profiles", "4k,seq", "--scale", "256", "--out", sim.to_str().unwrap(), "-q"]);
    assert_eq!(code, 0, "{err}");
    let cmp = f.dir.join("cmp");
    let files = [out_dir.join("results.json"), sim.join("results.json")].map(|p| p.to_str().unwrap().to_string());
    let (code, _, err) = flashlab(&["compare", &files[0], &files[1], "--label", "lab", "--label", "model", "--out", cmp.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(cmp.join("report.html")).unwrap();
    assert!(html.contains("Measured and simulated: a job marked [measured] is fio"), "provenance of both");
    assert!(html.contains(&format!("{dev} [measured, lab] (measured)")) && html.contains("stock [model] (simulated)"), "each bar says where it came from");
    assert!(html.contains("Published and simulated") && html.contains("Seed 1"), "the simulated card's published figures and its seed");
    // Rendered in Chromium as a simulated review's report is: laid out
    // clean, each device in its colour (the 2 measured alone, and beside
    // the simulated one).
    let prof = f.dir.join("chromium");
    common::chromium::layout_check(&out_dir, &prof, 2, 0);
    common::chromium::layout_check(&cmp, &prof, 3, 0);
}

/// Starts flashlab with `args` and stops it with SIGINT after 4 s: it
/// ends at once (not after fio's run time) with status 130, saying
/// INCOMPLETE.
fn interrupted(args: &[&str]) {
    let child =
        Command::new(env!("CARGO_BIN_EXE_flashlab")).args(args).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_secs(4));
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let started = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(started.elapsed().as_secs() < 10, "fio stopped at once, not after its 360 s");
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("INCOMPLETE"), "{err}");
}

/// Ctrl-C during preconditioning: fio is stopped, what it measured is
/// kept in a whole results file marked incomplete, and the measured phase
/// does not run; a review's files (results, report) are written, marked
/// incomplete, with the profile it cut short.
#[test]
fn an_interrupted_run_on_a_target_keeps_what_fio_measured() {
    tool("fio", "fio");
    let f = Files::new("interrupt", 32);
    let json = f.dir.join("r.json");
    let run = ["run", "--target", f.target(), "--workload", "4k-write", "--threads", "1", "--qd", "4", "--interval", "1", "--precondition"];
    interrupted(&[&run[..], &["--precondition-hours", "0.1", "-q", "--json", json.to_str().unwrap()]].concat());
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(r["incomplete"].as_str().unwrap().contains("preconditioning"), "{}", r["incomplete"]);
    let phases = r["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 1, "the measured phase did not run");
    assert_eq!(phases[0]["interrupted"], true);
    assert!(phases[0]["intervals"].as_array().unwrap().len() >= 2, "the rounds fio ran are kept");
    let out = f.dir.join("review");
    let review = ["review", "--target", f.target(), "--profiles", "4k,seq", "--interval", "1", "--precondition-hours", "0.1", "-q", "--out"];
    interrupted(&[&review[..], &[out.to_str().unwrap()]].concat());
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert!(r["incomplete"].as_str().unwrap().contains("0 of 2 profiles whole"), "{}", r["incomplete"]);
    assert_eq!(r["jobs"].as_array().unwrap().len(), 1, "the profile not started is missing");
    assert_eq!(r["jobs"][0]["precondition"]["interrupted"], true);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<b>INCOMPLETE</b>"), "the report says so");
    f.neighbour_untouched();
}
