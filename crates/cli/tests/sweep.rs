//! `flashlab sweep`: points planned and checked, run all at once or one
//! by one with byte-identical results, resumed without redoing a point,
//! a failing point named while the others complete, and collected.

mod common;
use common::{flashlab, Scratch};
use std::path::Path;

const SWEEP: &str = r#"
[base]
device = "p420m"
scale = 1024
workload = "4k-write"
duration = 0.2

[axes]
workload = ["4k-write", "8k-7030"]
"controller.program_path_bytes_per_sec" = [500e6, 740e6, 1000e6]
"#;

fn sweep_file(dir: &Path, text: &str) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let f = dir.join("s.toml");
    std::fs::write(&f, text).unwrap();
    f.to_str().unwrap().to_string()
}

fn points(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("point-") && n.ends_with(".json"))
        .collect();
    v.sort();
    v
}

#[test]
fn a_sweep_runs_all_at_once_or_point_by_point_alike_and_resumes() {
    let d = Scratch::new("sweep");
    let file = sweep_file(&d, SWEEP);
    let (code, out, err) = flashlab(&["sweep", "plan", &file]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("6 points") && out.contains("controller.program_path_bytes_per_sec=1000000000.0 workload=8k-7030"), "{out}");

    let (all, one) = (d.join("all"), d.join("one"));
    let (code, out, err) = flashlab(&["sweep", "run", &file, "--out", all.to_str().unwrap(), "--jobs", "2"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("6 points: 6 run now, 0 done before, 0 failed"), "{out}");
    for i in 0..6 {
        let (code, _, err) = flashlab(&["sweep", "run", &file, "--out", one.to_str().unwrap(), "--index", &i.to_string()]);
        assert_eq!(code, 0, "{err}");
    }
    assert_eq!(points(&all).len(), 6);
    for p in points(&all) {
        assert!(std::fs::read(all.join(&p)).unwrap() == std::fs::read(one.join(&p)).unwrap(), "{p} differs between --jobs 2 and --index");
    }
    // Resumed: nothing done twice; a lost point is run again, alone.
    let (_, out, _) = flashlab(&["sweep", "run", &file, "--out", all.to_str().unwrap()]);
    assert!(out.contains("0 run now, 6 done before"), "{out}");
    std::fs::remove_file(all.join("point-00004.json")).unwrap();
    let (_, out, _) = flashlab(&["sweep", "run", &file, "--out", all.to_str().unwrap()]);
    assert!(out.contains("1 run now, 5 done before"), "{out}");
    assert!(std::fs::read(all.join("point-00004.json")).unwrap() == std::fs::read(one.join("point-00004.json")).unwrap());

    let (code, out, err) = flashlab(&["sweep", "collect", all.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let c: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(all.join("sweep.json")).unwrap()).unwrap();
    let rows = c["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6, "{out}");
    // A faster program path writes faster, for each workload.
    let iops = |i: usize| rows[i]["iops"].as_f64().unwrap();
    assert!(iops(0) < iops(2) && iops(2) < iops(4) && iops(1) < iops(5), "{out}");
    for f in ["iops-by-workload.svg", "latency-by-controller-program_path_bytes_per_sec.svg", "wa-by-workload.svg"] {
        assert!(all.join(f).is_file(), "{f} missing");
    }
    // Another sweep into the same directory is refused.
    let other = sweep_file(&d.join("other"), &SWEEP.replace("0.2", "0.3"));
    let (code, _, err) = flashlab(&["sweep", "run", &other, "--out", all.to_str().unwrap()]);
    assert!(code == 2 && err.contains("holds another sweep's results"), "{err}");
}

#[test]
fn a_failing_point_is_named_and_the_others_complete() {
    let d = Scratch::new("sweep-fail");
    let file = sweep_file(&d, SWEEP);
    let out_dir = d.join("out");
    // Point 1's results file cannot be written: a directory is in its way.
    std::fs::create_dir_all(out_dir.join("point-00001.json")).unwrap();
    let (code, out, err) = flashlab(&["sweep", "run", &file, "--out", out_dir.to_str().unwrap(), "--jobs", "2"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("5 run now, 0 done before, 1 failed") && err.contains("1 point(s) failed: 1 ("), "{out}{err}");
    let (code, _, err) = flashlab(&["sweep", "collect", out_dir.to_str().unwrap()]);
    assert!(code == 2 && err.contains("5 of 6 points collected") && err.contains("failed: 1 ("), "{err}");
    // A bad sweep is refused before anything runs, naming its point.
    let bad = sweep_file(&d.join("bad"), &SWEEP.replace("1000e6", "1.0"));
    let (code, _, err) = flashlab(&["sweep", "run", &bad, "--out", d.join("bad-out").to_str().unwrap()]);
    assert!(code == 2 && err.contains("point 4: controller.program_path_bytes_per_sec = 1.0"), "{err}");
    assert!(points(&d.join("bad-out")).is_empty());
}
