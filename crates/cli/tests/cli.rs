//! The binary: the main commands work and bad input gets a clear error
//! (exit status 2, the problem named), never a panic.

mod common;
use common::{flashlab, refused, Scratch};

#[test]
fn devices_lists_the_catalog() {
    let (code, out, _) = flashlab(&["devices"]);
    assert_eq!(code, 0);
    for id in ["flashmax2", "iodrive2-duo", "p420m", "mx6300"] {
        assert!(out.contains(id), "{out}");
    }
}

#[test]
fn run_prints_a_summary_and_writes_json() {
    let dir = Scratch::new("cli");
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("r.json");
    let (code, out, err) =
        flashlab(&["run", "mx6300", "-w", "8k-7030", "--scale", "64", "--ios", "50000", "--threads", "8", "--qd", "4", "-q", "--json", json.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("[simulated]") && out.contains("IOPS"), "{out}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["phases"][0]["summary"]["all"]["ios"], 50000);
    assert!(v["phases"][0]["summary"]["read"]["latency_p99_ms"].as_f64().unwrap() > 0.0);
}

/// `--host`: the card runs on another host. A host whose I/O stack takes
/// 50 us more to submit an I/O puts 50 us on every I/O at one in flight,
/// and the results name the host; a host with too few cores for a
/// host-managed card's GC threads, or an unknown one, is refused.
#[test]
fn a_card_on_another_host_pays_its_io_stack() {
    let dir = Scratch::new("host");
    std::fs::create_dir_all(&dir).unwrap();
    let reviewers = include_str!("../../../hosts/linux-centos6.toml");
    let slow = dir.join("slow.toml");
    std::fs::write(&slow, reviewers.replace("id = \"linux-centos6\"", "id = \"slow\"").replace("submit_ns = 2_000", "submit_ns = 52_000")).unwrap();
    let latency = |host: Option<&str>| -> (String, f64) {
        let mut args = vec!["run", "p420m", "--scale", "1024", "-w", "read=0;bs=4k", "--threads", "1", "--qd", "1", "--duration", "1", "-q", "--json", "-"];
        args.extend(host.map(|h| ["--host", h]).into_iter().flatten());
        let (code, out, err) = flashlab(&args);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        (v["device"]["host"].as_str().unwrap().to_string(), v["phases"][0]["summary"]["all"]["latency_avg_ms"].as_f64().unwrap())
    };
    let (base_host, base) = latency(None);
    let (slow_host, slowed) = latency(Some(slow.to_str().unwrap()));
    assert_eq!((base_host.as_str(), slow_host.as_str()), ("linux-centos6", "slow"));
    assert!(((slowed - base) * 1e3 - 50.0).abs() < 0.5, "{base} ms on the reviewers' host, {slowed} ms on one 50 us slower to submit");
    let one_core = dir.join("one-core.toml");
    std::fs::write(&one_core, reviewers.replace("sockets = 2", "sockets = 1").replace("cores_per_socket = 6", "cores_per_socket = 1")).unwrap();
    refused(&["run", "flashmax2", "--scale", "1024", "-w", "4k-read", "--host", one_core.to_str().unwrap()], "host cores of their own");
    refused(&["run", "p420m", "--scale", "1024", "-w", "4k-read", "--host", "windows-nt"], "unknown host 'windows-nt'");
}

#[test]
fn bad_input_is_refused_clearly() {
    refused(&["run", "nonesuch", "-w", "4k-read"], "unknown device 'nonesuch'");
    refused(&["run", "flashmax2", "-w", "nope", "--scale", "64"], "unknown workload 'nope'");
    refused(&["run", "flashmax2", "-w", "read=70;bs=4k/50:8k/40", "--scale", "64"], "sum to 90%");
    refused(&["run", "flashmax2", "-w", "4k-read", "--threads", "0"], "--threads 0");
    refused(&["run", "flashmax2", "-w", "4k-read", "--scale", "1000000"], "--scale 1000000: must be in 1..=");
    refused(&["run", "flashmax2", "-w", "4k-read", "--scale", "0"], "--scale 0");
    // A refused spec prints only its error: no table header before it.
    let (code, out, err) = flashlab(&["endurance", "p420m", "--scale", "0"]);
    assert!(code == 2 && err.contains("--scale 0") && out.is_empty(), "{code}: {out} / {err}");
    refused(&["run", "flashmax2", "-w", "4k-read", "--format", "ludicrous", "--scale", "64"], "unknown format 'ludicrous'");
    refused(&["run", "/nonexistent/x.toml", "-w", "4k-read"], "cannot read profile");
    let dir = Scratch::new("bad");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("zero-dies.toml");
    let text = card::CATALOG[0].1.replace("dies_per_channel = 12", "dies_per_channel = 0");
    std::fs::write(&bad, text).unwrap();
    refused(&["run", bad.to_str().unwrap(), "-w", "4k-read"], "dies_per_channel = 0");
    let (code, _, err) = flashlab(&["run", "flashmax2"]);
    assert_eq!(code, 2);
    assert!(err.contains("--workload"), "{err}");
}

/// Runs `script` in bash with `pipefail` (a pipeline fails when any of its
/// commands does) and the binary as `$F`: (exit status, standard error).
fn shell(script: &str) -> (i32, String) {
    let out = std::process::Command::new("bash").arg("-c").arg(format!("set -o pipefail; {script}")).env("F", env!("CARGO_BIN_EXE_flashlab")).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into())
}

/// A reader that goes away ends the program quietly: exit status 0, no
/// panic, and whatever the command writes to files is written first.
#[test]
fn a_closed_standard_output_ends_quietly_with_files_written() {
    for reader in ["head -1 >/dev/null", "true"] {
        let (code, err) = shell(&format!("\"$F\" devices | {reader}"));
        assert_eq!(code, 0, "devices | {reader}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let dir = Scratch::new("pipe");
    std::fs::create_dir_all(&dir).unwrap();
    let (j, r) = (dir.join("r.json"), dir.join("rv"));
    let script = format!(
        "\"$F\" run flashmax2 -w 4k-write --scale 128 --ios 20000 -q --json {} | true && \
         \"$F\" review flashmax2 --format stock --profiles 4k --scale 256 --rounds-4k 1 --precondition-min 0.3 --precondition-max 0.5 --snia-precondition --out {} -q | true",
        j.display(),
        r.display()
    );
    let (code, err) = shell(&script);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(std::fs::read_to_string(&j).unwrap().contains("\"phases\""));
    assert!(r.join("results.json").is_file() && r.join("report.html").is_file(), "review | true leaves its files");
}

/// Outputs are checked before any work, and `-` is standard output.
#[test]
fn outputs_are_checked_before_the_run_and_dash_is_standard_output() {
    let t = std::time::Instant::now();
    refused(&["run", "flashmax2", "-w", "4k-write", "--precondition", "--json", "/nonexistent-dir/x.json"], "cannot write --json /nonexistent-dir/x.json");
    refused(&["calibrate", "flashmax2", "--json", "/nonexistent-dir/x.json"], "cannot write --json");
    // A full-size preconditioning would take minutes: refused at once.
    assert!(t.elapsed().as_secs() < 60, "refused before the run");
    let (code, out, err) = flashlab(&["run", "flashmax2", "-w", "4k-read", "--scale", "128", "--ios", "2000", "-q", "--json", "-"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("standard output is the JSON alone");
    assert_eq!(v["phases"][0]["summary"]["all"]["ios"], 2000);
    assert!(err.contains("IOPS"), "the summary goes to standard error: {err}");
}

/// fio's habits work in mixes; repeated and unknown keys are refused by name.
#[test]
fn mixes_take_fio_habits_and_refuse_repeats() {
    for w in ["read=100;bs=64k", "rwmixread=70;bssplit=4k/60:64k/40", "rw=randwrite;bs=8k", "rwmixwrite=30;bs=4k"] {
        let (code, out, err) = flashlab(&["run", "flashmax2", "-w", w, "--scale", "128", "--ios", "2000", "-q"]);
        assert_eq!(code, 0, "{w}: {err}");
        assert!(out.contains("IOPS"), "{w}: {out}");
    }
    refused(&["run", "flashmax2", "-w", "read=70;read=30;bs=4k", "--scale", "128"], "'read' sets the read share that 'read' already set");
    refused(&["run", "flashmax2", "-w", "rw=randrw;rwmixread=70;bs=4k", "--scale", "128"], "already set");
    refused(&["run", "flashmax2", "-w", "read=70;bs=4k;iodepth=8", "--scale", "128"], "unknown key 'iodepth'");
}

/// `fit` on a user's own figure: the fitted parameter reproduces it, the
/// fitted profile is written and runs; a parameter the profile does not
/// mark as fitted, a format it does not have, or a malformed figures
/// file, is refused by name.
#[test]
fn fit_fits_a_users_figure_and_writes_a_profile_that_runs() {
    let dir = Scratch::new("fit");
    std::fs::create_dir_all(&dir).unwrap();
    let figures = dir.join("mine.toml");
    std::fs::write(
        &figures,
        "[[published]]\nby = \"reviewer\"\nsource = \"my lab\"\nwhat = \"4K random write, burst\"\nworkload = \"4k-write\"\nstate = \"fresh\"\nmetric = \"iops\"\nvalue = 140000\n",
    )
    .unwrap();
    let (fitted, json) = (dir.join("fitted.toml"), dir.join("fit.json"));
    let (f, o, j) = (figures.to_str().unwrap(), fitted.to_str().unwrap(), json.to_str().unwrap());
    let (code, out, err) = flashlab(&[
        "fit",
        "p420m",
        "--figures",
        f,
        "--params",
        "controller.program_path_bytes_per_sec",
        "--no-cross-validation",
        "--out",
        o,
        "--json",
        j,
        "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("controller.program_path_bytes_per_sec") && out.contains("published            140,000 IOPS"), "{out}");
    // The JSON file holds the same fit.
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!((r["device"].as_str(), r["simulated"].as_bool(), r["scale"].as_u64()), (Some("p420m"), Some(true), Some(64)));
    let fitted_value = r["fit"]["values"][0][2].as_f64().unwrap();
    assert!(out.contains(&format!("{fitted_value:.6e}")), "{fitted_value} in {out}");
    assert_eq!(r["fit"]["checks"][0]["published"].as_f64(), Some(140_000.0));
    let (code, out, err) = flashlab(&["run", o, "-w", "4k-write", "--scale", "64", "--duration", "1", "-q"]);
    assert_eq!(code, 0, "{err}");
    let iops: f64 = out.lines().find(|l| l.trim_start().starts_with("write")).and_then(|l| l.split_whitespace().nth(1)).unwrap().parse().unwrap();
    assert!((iops / 140_000.0 - 1.0).abs() < 0.02, "the fitted card runs at {iops}");
    refused(&["fit", "p420m", "--params", "nope"], "--params nope: not a fitted parameter of p420m");
    refused(&["fit", "p420m", "--format", "hp"], "--format hp: not a format of p420m (those are: stock)");
    std::fs::write(&figures, "[[published]]\nby = \"reviewer\"\nsource = \"my lab\"\nwhat = \"4K write, hp\"\nformat = \"hp\"\nworkload = \"4k-write\"\nstate = \"fresh\"\nmetric = \"iops\"\nvalue = 1\n").unwrap();
    refused(&["fit", "p420m", "--figures", f], "4K write, hp: format hp: not a format of p420m");
    std::fs::write(&figures, "[[published]]\nwhat = 3\n").unwrap();
    refused(&["fit", "p420m", "--figures", f], "not a TOML file of [[published]] figures");
}

/// `fit --figures results.json`: a review's main tests are the figures,
/// each in the conditions it ran in; fitted on the card that ran them,
/// they are met. A test name the results do not have, `--tests` without
/// a results file, or results of sequential tests alone, is refused by
/// name.
#[test]
fn fit_takes_a_reviews_results_as_its_figures() {
    let dir = Scratch::new("fit-results");
    let (code, _, err) = flashlab(&["review", "p420m", "--profiles", "4k", "--scale", "256", "--out", dir.to_str().unwrap(), "-q"]);
    assert_eq!(code, 0, "{err}");
    let results = dir.join("results.json");
    let r = results.to_str().unwrap();
    let (code, out, err) = flashlab(&[
        "fit",
        "p420m",
        "--figures",
        r,
        "--tests",
        "4K write",
        "--params",
        "controller.program_path_bytes_per_sec",
        "--scale",
        "256",
        "--evals",
        "3",
        "--no-cross-validation",
        "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    let checks: Vec<&str> = out.lines().filter(|l| l.contains("[4k-write 16T/16Q steady]")).collect();
    assert_eq!(checks.len(), 2, "the 4K write's IOPS and average latency: {out}");
    assert!(checks.iter().all(|l| l.trim_end().ends_with("ok")), "{out}");
    assert!(!out.contains("4k-read"), "only the test asked for: {out}");
    refused(&["fit", "p420m", "--figures", r, "--tests", "1T/1Q"], "no test named 1T/1Q to fit to (its tests: 4K write, 4K read)");
    refused(&["fit", "p420m", "--tests", "4K write"], "--tests chooses among a results.json's tests");
    // The sequential tests run on a card filled twice, not calibrate's
    // filled card: left out, and said.
    let seq = Scratch::new("fit-results-seq");
    let (code, _, err) = flashlab(&["review", "p420m", "--profiles", "seq", "--scale", "256", "--out", seq.to_str().unwrap(), "-q"]);
    assert_eq!(code, 0, "{err}");
    let r = seq.join("results.json");
    refused(&["fit", "p420m", "--figures", r.to_str().unwrap()], "left out: 128K read, 64K read, 128K write, 64K write (sequential:");
}

/// `replay`: an MSR Cambridge CSV and an fio iolog written here by their
/// documented formats replay on a card; the iolog exported from the CSV
/// replays the same I/Os; a malformed line is refused by its number.
#[test]
fn replay_reads_msr_csv_and_fio_iologs_and_names_a_bad_line() {
    let dir = Scratch::new("cli-replay");
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("hm_0.csv");
    let lines: String = (0..2_000u64)
        .map(|i| {
            format!(
                "{},hm,0,{},{},{},1500\n",
                128166372003061629 + i * 300,
                if i % 3 == 0 { "Write" } else { "Read" },
                (i * 7_919 % 50_000) * 4096,
                4096 << (i % 2)
            )
        })
        .collect();
    std::fs::write(&csv, lines).unwrap();
    let (json, exported) = (dir.join("r.json"), dir.join("hm_0.iolog"));
    let (code, out, err) = flashlab(&[
        "replay",
        csv.to_str().unwrap(),
        "p420m",
        "--scale",
        "1024",
        "-q",
        "--json",
        json.to_str().unwrap(),
        "--export-fio",
        exported.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("[simulated]") && out.contains("MSR Cambridge CSV at the recorded times"), "{out}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v[0]["summary"]["all"]["ios"], 2000);
    assert!(v[0]["summary"]["read"]["latency_avg_ms"].as_f64().unwrap() > 0.0);
    let (code, out, err) = flashlab(&["replay", exported.to_str().unwrap(), "mx6300", "--scale", "1024", "--timing", "closed", "--qd", "16", "-q"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("2000 I/Os of a fio iolog v3 closed loop, 16 in flight"), "{out}");
    let blk = dir.join("hm_0.blkparse");
    let (code, _, err) = flashlab(&["replay", exported.to_str().unwrap(), "mx6300", "--scale", "1024", "-q", "--export-blkparse", blk.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = flashlab(&["replay", blk.to_str().unwrap(), "p420m", "--scale", "1024", "-q"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("2000 I/Os of a blkparse text at the recorded times"), "{out}");
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "128166372003061629,hm,0,Write,0,4096,1\n128166372003061729,hm,0,Write,4096\n").unwrap();
    refused(&["replay", bad.to_str().unwrap(), "p420m", "--scale", "1024"], "line 2: 5 fields where an MSR Cambridge line has 7");
}
