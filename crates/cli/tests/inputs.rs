//! What a careless or hostile user hands the program beyond the NBD
//! protocol and the profiles: output paths that name devices, pipes and
//! links; traces, sweeps and results files that are small but costly,
//! wrapping or damaged. Each is answered with a clear error or handled as
//! a user expects; nothing is replaced that is not a file.

mod common;
use common::{flashlab, refused, Scratch};
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// A short run whose results go to `json`.
fn run_to(json: &str) -> (i32, String, String) {
    flashlab(&["run", "p420m", "--scale", "1024", "-q", "--ios", "2000", "-w", "4k-write", "--json", json])
}

fn is_char_device(p: &str) -> bool {
    std::fs::symlink_metadata(p).map(|m| m.file_type().is_char_device()).unwrap_or(false)
}

/// A device node named as the output is written through, never replaced:
/// `/dev/null` takes the results, `/dev/full` gives its error and the run
/// fails; both are still devices after.
#[test]
fn an_output_naming_a_device_is_written_through_not_replaced() {
    let (code, _, err) = run_to("/dev/null");
    assert_eq!(code, 0, "{err}");
    assert!(is_char_device("/dev/null"), "/dev/null is still a device");
    let (code, _, err) = run_to("/dev/full");
    assert_ne!(code, 0, "a device with no room fails the run: {err}");
    assert!(err.contains("/dev/full") && err.contains("No space left on device"), "{err}");
    assert!(is_char_device("/dev/full"), "/dev/full is still a device");
}

/// A symbolic link is followed: its target takes the results, the link
/// stays a link (as `>` in a shell does).
#[test]
fn an_output_naming_a_symlink_writes_its_target_and_keeps_the_link() {
    let dir = Scratch::new("link");
    std::fs::create_dir_all(&dir).unwrap();
    let (link, target) = (dir.join("r.json"), dir.join("kept.json"));
    std::fs::write(&target, "old").unwrap();
    std::os::unix::fs::symlink("kept.json", &link).unwrap();
    let (code, _, err) = run_to(link.to_str().unwrap());
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link is still a link");
    assert!(std::fs::read_to_string(&target).unwrap().contains("\"phases\""), "its target holds the results");
}

/// A named pipe is written through to its reader, and stays a pipe.
#[test]
fn an_output_naming_a_pipe_is_written_through() {
    let dir = Scratch::new("fifo");
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("results");
    let status = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(status.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let (code, _, err) = run_to(fifo.to_str().unwrap());
    assert_eq!(code, 0, "{err}");
    let got = reader.join().unwrap();
    assert!(serde_json::from_str::<serde_json::Value>(&got).is_ok(), "the reader got whole JSON: {got}");
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "still a pipe");
}

/// `/dev/stdout` is standard output, as `-` is: the JSON alone there, the
/// summary on standard error.
#[test]
fn dev_stdout_is_standard_output_as_dash_is() {
    for name in ["-", "/dev/stdout"] {
        let (code, out, err) = run_to(name);
        assert_eq!(code, 0, "{name}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{name}: standard output is the JSON alone ({e}): {out}"));
        assert_eq!(v["phases"][0]["summary"]["all"]["ios"], 2000);
        assert!(err.contains("IOPS"), "{name}: the summary goes to standard error: {err}");
    }
}

/// A directory, a socket and a disk are refused before any work, with the
/// reason.
#[test]
fn an_output_naming_a_directory_or_a_disk_is_refused_with_the_reason() {
    let dir = Scratch::new("sock");
    std::fs::create_dir_all(&dir).unwrap();
    let sock = dir.join("s");
    let _listening = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    refused(&["run", "p420m", "--scale", "1024", "-q", "--ios", "2000", "-w", "4k-write", "--json", sock.to_str().unwrap()], "it is a socket");
    refused(&["run", "p420m", "--scale", "1024", "-q", "--ios", "2000", "-w", "4k-write", "--json", "/tmp"], "it is a directory");
    if let Some(disk) = ["/dev/loop0", "/dev/sda", "/dev/vda", "/dev/nvme0n1"].into_iter().find(|p| Path::new(p).exists()) {
        refused(&["run", "p420m", "--scale", "1024", "-q", "--ios", "2000", "-w", "4k-write", "--json", disk], "block device");
    }
}

/// `--out` naming a file says so, once.
#[test]
fn an_out_directory_naming_a_file_says_it_is_not_a_directory_once() {
    let file = Scratch::new("out-file");
    std::fs::write(&file, "mine").unwrap();
    let (code, _, err) = flashlab(&["review", "p420m", "--scale", "1024", "--out", file.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("it is not a directory"), "{err}");
    assert!(!err.contains("os error 17"), "no OS error twice: {err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine", "the file is untouched");
}

/// Runs `flashlab ARGS` as the issue's bound says: under a 2 GB address
/// space limit and 60 s (status 124 is the timeout's, 137 a kill).
fn bounded(args: &[&str]) -> (i32, String, String) {
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    let script = format!("ulimit -v 2000000; exec timeout 60 \"$F\" {}", quoted.join(" "));
    let out = std::process::Command::new("bash").arg("-c").arg(script).env("F", env!("CARGO_BIN_EXE_flashlab")).output().unwrap();
    let (code, out, err) = (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).to_string());
    assert!(code != 124 && code != 137 && code >= 0, "{args:?} ran past 60 s or 2 GB (status {code}): {err}");
    assert!(!err.contains("panicked") && !err.contains("memory allocation"), "{args:?}: {err}");
    (code, out, err)
}

/// `bounded`, refused: exit status 2 and `needle` in the error.
fn bounded_refused(args: &[&str], needle: &str) {
    let (code, _, err) = bounded(args);
    assert_eq!(code, 2, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: expected '{needle}' in: {err}");
}

/// A trace's cost follows its requests, not its time span: a second
/// request 10^16 ns after the first replays at once, in little memory.
#[test]
fn a_trace_with_a_vast_gap_replays_in_bounded_time_and_memory() {
    let dir = Scratch::new("gap");
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("gap.log");
    std::fs::write(&log, "fio version 3 iolog\n0 /dev/x write 0 4096\n1000 /dev/x write 4096 4096\n10000000000000 /dev/x read 0 4096\n").unwrap();
    let (code, out, err) = bounded(&["replay", log.to_str().unwrap(), "p420m", "--scale", "1024", "-q"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("3 I/Os"), "{out}");
    // Slowed beyond what virtual time holds: refused, not wrapped.
    bounded_refused(&["replay", log.to_str().unwrap(), "p420m", "--scale", "1024", "-q", "--speed", "0.001"], "more than virtual time holds");
}

/// A trace is read as a stream with a bound on a line: a device that
/// never ends a line, or a megabyte of zeros, is refused at line 1.
#[test]
fn an_endless_or_binary_trace_is_refused_at_its_first_line() {
    let dir = Scratch::new("zeros");
    std::fs::create_dir_all(&dir).unwrap();
    let zeros = dir.join("zeros");
    std::fs::write(&zeros, vec![0u8; 1 << 20]).unwrap();
    for input in ["/dev/zero", zeros.to_str().unwrap()] {
        bounded_refused(&["replay", input, "p420m", "-q"], "line 1: longer than 65536 bytes");
    }
}

/// Values read from a trace that do not fit are refused with their line,
/// never wrapped: a sector of 2^55 (times 512 passes 2^64) is not byte 0.
#[test]
fn trace_values_that_do_not_fit_are_refused_with_their_line() {
    let dir = Scratch::new("wrap");
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            "  8,0    0        1     0.000000000  1  Q   W 0 + 8 [x]\n  8,0    0        2     0.000001000  1  Q   W 36028797018963968 + 8 [x]\n",
            "line 2: sector 36028797018963968 is too large",
        ),
        ("fio version 3 iolog\n0 /dev/x write 0 4096\n18446744073709552 /dev/x read 0 4096\n", "line 3: timestamp (us) 18446744073709552"),
        ("184467440737095517,hm,0,Write,0,4096,1\n", "line 1: timestamp (100 ns ticks)"),
        (
            "flashlab trace v1\n0 W 0 4096 0 1 0\n18446744073709551615 W 18446744073709551615 4096 0 1 0\n",
            "line 3: offset 18446744073709551615 and length 4096 end past byte 2^64",
        ),
    ];
    for (i, (text, why)) in cases.iter().enumerate() {
        let p = dir.join(format!("t{i}"));
        std::fs::write(&p, text).unwrap();
        bounded_refused(&["replay", p.to_str().unwrap(), "p420m", "--scale", "1024", "-q"], why);
    }
}

/// A trace can come through a pipe (`-`, standard input): it is read once.
#[test]
fn a_trace_on_standard_input_replays() {
    let script = "printf '1,hm,0,Write,0,4096,1\\n2,hm,0,Read,0,4096,1\\n' | \"$F\" replay - p420m flashmax2 --scale 1024 -q";
    let out = std::process::Command::new("bash").arg("-c").arg(script).env("F", env!("CARGO_BIN_EXE_flashlab")).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(text.matches("2 I/Os of a MSR Cambridge CSV").count(), 2, "both cards replay it: {text}");
}

/// A sweep of 10^9 points is refused at once, in little memory, with the
/// count and the bound; `sweep plan` refuses what `sweep run` would.
#[test]
fn a_vast_or_impossible_sweep_is_refused_by_its_plan() {
    let dir = Scratch::new("sweeps");
    std::fs::create_dir_all(&dir).unwrap();
    let axis = |name: &str| format!("{name} = [{}]\n", (1..=1000).map(|i| i.to_string()).collect::<Vec<_>>().join(", "));
    let huge = dir.join("huge.toml");
    std::fs::write(
        &huge,
        format!("[base]\ndevice = \"p420m\"\nscale = 1024\nworkload = \"4k-write\"\nduration = 0.2\n[axes]\n{}{}{}", axis("threads"), axis("qd"), axis("seed")),
    )
    .unwrap();
    bounded_refused(&["sweep", "plan", huge.to_str().unwrap()], "1000000000 points, more than the 10000 this sweep allows");
    let neg = dir.join("neg.toml");
    std::fs::write(&neg, "[base]\ndevice = \"p420m\"\nscale = 1024\nworkload = \"4k-write\"\nduration = -5\n[axes]\nseed = [1, 2]\n").unwrap();
    bounded_refused(&["sweep", "plan", neg.to_str().unwrap()], "point 0: --duration -5: must be in (0, 10000000]");
}

/// A damaged point file (cut short, garbage, or figures no run gives) is
/// not "done": `collect` names it, the next `run` runs it again.
#[test]
fn damaged_sweep_points_are_named_and_run_again() {
    let dir = Scratch::new("damaged");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.toml");
    std::fs::write(&file, "[base]\ndevice = \"p420m\"\nscale = 1024\nworkload = \"4k-write\"\nduration = 0.05\n[axes]\nseed = [1, 2, 3]\n").unwrap();
    let out = dir.join("out");
    let (f, o) = (file.to_str().unwrap(), out.to_str().unwrap());
    let (code, _, err) = flashlab(&["sweep", "run", f, "--out", o, "--jobs", "1"]);
    assert_eq!(code, 0, "{err}");
    let point = |i: usize| out.join(format!("point-{i:05}.json"));
    let whole = std::fs::read_to_string(point(0)).unwrap();
    std::fs::write(point(0), &whole[..whole.len() / 2]).unwrap();
    std::fs::write(point(1), "garbage").unwrap();
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(point(2)).unwrap()).unwrap();
    let tampered = serde_json::to_string(&v).unwrap().replacen("\"iops\":", "\"iops\":-", 1);
    std::fs::write(point(2), tampered).unwrap();
    let (code, _, err) = flashlab(&["sweep", "collect", o]);
    assert_eq!(code, 2, "{err}");
    for i in 0..3 {
        assert!(err.contains(&format!("{i} (damaged results file")), "point {i} named damaged: {err}");
    }
    assert!(err.contains(".iops = -"), "the field named: {err}");
    let (code, _, err) = flashlab(&["sweep", "run", f, "--out", o, "--jobs", "1"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("point 0 done") && err.contains("point 1 done") && err.contains("point 2 done"), "run again: {err}");
    let (code, out_text, err) = flashlab(&["sweep", "collect", o]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(point(0)).unwrap().len(), whole.len(), "{out_text}");
}

/// A results file read back by `compare` or `fit --figures` with figures
/// no run gives is refused with the field named.
#[test]
fn a_tampered_results_file_is_refused_with_the_field_named() {
    let dir = Scratch::new("tampered");
    let (d, out) = (dir.to_str().unwrap().to_string(), dir.join("r"));
    let (code, _, err) = common::small_review(&out);
    assert_eq!(code, 0, "{err}");
    let results = out.join("results.json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    v["jobs"][0]["tests"][0]["summary"]["all"]["latency_avg_ms"] = serde_json::json!(-1.5);
    std::fs::write(&results, serde_json::to_string(&v).unwrap()).unwrap();
    let (code, _, err) = flashlab(&["compare", results.to_str().unwrap(), "--out", &format!("{d}/cmp")]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("summary.all.latency_avg_ms = -1.5") && err.contains("not negative"), "{err}");
}

/// A card whose maps the process cannot have is refused before it is
/// built, with what it takes and what there is, not ended by a failed
/// allocation.
#[test]
fn a_card_too_large_for_the_address_space_is_refused_before_it_is_built() {
    let (code, _, err) = bounded(&["run", "p420m", "-w", "4k-write", "--ios", "1000", "-q"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("the card's maps take 3.6 GB, more than the address space this process may still take (ulimit -v)"), "{err}");
}

/// A sweep's values are never wrapped or rounded into others: a thread
/// count past 2^32 and a profile number past a whole number's range are
/// refused by name.
#[test]
fn sweep_values_that_do_not_fit_are_refused_by_name() {
    let dir = Scratch::new("sweep-wrap");
    std::fs::create_dir_all(&dir).unwrap();
    let base = "[base]\ndevice = \"p420m\"\nscale = 1024\nworkload = \"4k-write\"\nduration = 0.05\n[axes]\n";
    for (axis, why) in [
        ("threads = [4294967297]", "threads = 4294967297: at most 4294967295"),
        ("\"controller.program_path_bytes_per_sec\" = [1e300]", "= 1e300: too large for a whole number"),
    ] {
        let f = dir.join("s.toml");
        std::fs::write(&f, format!("{base}{axis}\n")).unwrap();
        let (code, _, err) = flashlab(&["sweep", "plan", f.to_str().unwrap()]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(why), "expected '{why}' in: {err}");
    }
}
