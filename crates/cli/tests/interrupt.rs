//! Ctrl-C keeps what was measured and never empties a results file: a
//! run or a review writes a complete file marked incomplete; a
//! calibration (which judges every figure or none) leaves the file it
//! would have replaced as it was. Each was once truncated when the run
//! started, so an interrupted run left an empty file.

mod common;
use common::Scratch;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `flashlab args`, sends SIGINT after `after_s`, and returns its
/// exit status and standard error.
fn interrupted(args: &[&str], after_s: f64) -> (i32, String) {
    let child = Command::new(env!("CARGO_BIN_EXE_flashlab")).args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_secs_f64(after_s));
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into())
}

fn json_of(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not whole JSON ({e}): {text:.200}", path.display()))
}

#[test]
fn an_interrupted_run_writes_what_it_measured_marked_incomplete() {
    let dir = Scratch::new("int-run");
    std::fs::create_dir_all(&*dir).unwrap();
    let file = dir.join("r.json");
    std::fs::write(&file, "{\"earlier\": true}\n").unwrap();
    let f = file.to_str().unwrap();
    let (code, err) = interrupted(&["run", "flashmax2", "--scale", "16", "--workload", "4k-write", "--precondition", "--json", f, "-q"], 2.0);
    assert_eq!(code, 130, "{err}");
    assert!(err.contains("INCOMPLETE"), "{err}");
    let v = json_of(&file);
    assert!(v["incomplete"].as_str().unwrap().contains("precondition"), "{v:.300}");
    let pre = &v["phases"][0];
    assert_eq!(pre["interrupted"], true);
    assert!(!pre["intervals"].as_array().unwrap().is_empty(), "the rounds run are kept");
    assert_eq!(v["phases"].as_array().unwrap().len(), 1, "the main phase did not run");
    assert!(!dir.join("r.json.tmp").exists());
}

#[test]
fn an_interrupted_calibration_leaves_the_earlier_file_as_it_was() {
    let dir = Scratch::new("int-cal");
    std::fs::create_dir_all(&*dir).unwrap();
    let file = dir.join("c.json");
    std::fs::write(&file, "{\"earlier\": true}\n").unwrap();
    let (code, err) = interrupted(&["calibrate", "flashmax2", "--scale", "16", "--json", file.to_str().unwrap(), "-q"], 2.0);
    assert_eq!(code, 130, "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "{\"earlier\": true}\n");
}

#[test]
fn an_interrupted_review_writes_its_files_marked_incomplete() {
    let dir = Scratch::new("int-review");
    std::fs::create_dir_all(&*dir).unwrap();
    let (code, err) = interrupted(&["review", "flashmax2", "--scale", "64", "--out", dir.to_str().unwrap(), "-q"], 4.0);
    assert_eq!(code, 130, "{err}");
    let v = json_of(&dir.join("results.json"));
    assert!(v["incomplete"].as_str().unwrap().contains("interrupted"), "{v:.300}");
    assert!(!v["jobs"].as_array().unwrap().is_empty(), "the jobs under way are kept");
    let report = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(report.contains("INCOMPLETE") && report.trim_end().ends_with("</html>"), "the report is whole and says it is incomplete");
    for csv in ["precondition.csv", "steady_state.csv"] {
        assert!(dir.join(csv).exists(), "{csv}");
    }
    no_file_empty(&dir);
}

/// No file under `dir` is empty (a table with no rows is absent).
fn no_file_empty(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            no_file_empty(&p);
        } else {
            assert!(std::fs::metadata(&p).unwrap().len() > 0, "{} is empty", p.display());
        }
    }
}

/// A complete review survives an interrupted re-run into its directory,
/// stopped early or late: the directory is left as it was, byte for
/// byte, and the interrupted run's whole results go beside it. A first
/// run interrupted leaves whole files only.
#[test]
fn a_complete_review_survives_an_interrupted_rerun_into_it() {
    let dir = Scratch::new("int-rerun");
    std::fs::create_dir_all(&*dir).unwrap();
    let out = dir.join("rv");
    let o = out.to_str().unwrap();
    let (code, _, err) = common::small_review(&out);
    assert_eq!(code, 0, "{err}");
    let files = |d: &Path| -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
            .collect();
        v.sort();
        v
    };
    let complete = files(&out);
    for after_s in [0.3, 1.5, 3.0] {
        let (code, err) = interrupted(&["review", "flashmax2", "--scale", "64", "--out", o, "-q"], after_s);
        assert_eq!(code, 130, "{err}");
        assert!(err.contains("the complete review in") && err.contains("rv.interrupted"), "{err}");
        assert_eq!(files(&out), complete, "stopped after {after_s} s: the complete review is as it was");
        let v = json_of(&dir.join("rv.interrupted/results.json"));
        assert!(v["incomplete"].as_str().unwrap().contains("interrupted"), "{v:.300}");
        no_file_empty(&dir);
    }
    // A first run into an empty directory, interrupted: whole files only.
    let first = dir.join("first");
    let (code, err) = interrupted(&["review", "flashmax2", "--scale", "64", "--out", first.to_str().unwrap(), "-q"], 1.0);
    assert_eq!(code, 130, "{err}");
    assert!(json_of(&first.join("results.json"))["incomplete"].is_string());
    no_file_empty(&first);
    let stages: Vec<_> =
        std::fs::read_dir(&*dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().to_string()).filter(|n| n.contains("partial")).collect();
    assert!(stages.is_empty(), "no stage left: {stages:?}");
}
