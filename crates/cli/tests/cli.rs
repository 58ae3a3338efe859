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

#[test]
fn bad_input_is_refused_clearly() {
    refused(&["run", "nonesuch", "-w", "4k-read"], "unknown device 'nonesuch'");
    refused(&["run", "flashmax2", "-w", "nope", "--scale", "64"], "unknown workload 'nope'");
    refused(&["run", "flashmax2", "-w", "read=70;bs=4k/50:8k/40", "--scale", "64"], "sum to 90%");
    refused(&["run", "flashmax2", "-w", "4k-read", "--threads", "0"], "--threads 0");
    refused(&["run", "flashmax2", "-w", "4k-read", "--scale", "1000000"], "--scale 1000000: must be in 1..=");
    refused(&["run", "flashmax2", "-w", "4k-read", "--scale", "0"], "--scale 0");
    refused(&["run", "flashmax2", "-w", "4k-read", "--format", "ludicrous", "--scale", "64"], "unknown format 'ludicrous'");
    refused(&["run", "/nonexistent/x.toml", "-w", "4k-read"], "cannot read profile");
    let dir = Scratch::new("bad");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("zero-dies.toml");
    let text = accel::CATALOG[0].1.replace("dies_per_channel = 12", "dies_per_channel = 0");
    std::fs::write(&bad, text).unwrap();
    refused(&["run", bad.to_str().unwrap(), "-w", "4k-read"], "dies_per_channel = 0");
    let (code, _, err) = flashlab(&["run", "flashmax2"]);
    assert_eq!(code, 2);
    assert!(err.contains("--workload"), "{err}");
}
