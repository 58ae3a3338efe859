//! The metrics endpoint: a served card's latest figures as Prometheus
//! text on `http://ADDR/metrics`, for dashboards (`flashlab monitor
//! --metrics ADDR`).

use anyhow::{Context, Result};
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// The Prometheus text of the last figures: the last whole second's
/// gauges and the totals' counters.
pub fn text(stats: &Value, status: &Value) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let mut gauge = |name: &str, help: &str, value: Option<f64>| {
        if let Some(v) = value {
            let _ = writeln!(o, "# HELP flashlab_{name} {help}\n# TYPE flashlab_{name} gauge\nflashlab_{name} {v}");
        }
    };
    let s = &stats["second"];
    let f = |k: &str| s[k].as_f64();
    gauge("read_iops", "Reads in the last whole second.", f("read_iops"));
    gauge("write_iops", "Writes in the last whole second.", f("write_iops"));
    gauge("read_bytes_per_second", "Bytes read in the last whole second.", f("read_mb_s").map(|m| m * 1e6));
    gauge("write_bytes_per_second", "Bytes written in the last whole second.", f("write_mb_s").map(|m| m * 1e6));
    gauge("latency_average_seconds", "Modelled latency, average over the last whole second.", f("latency_avg_us").map(|u| u / 1e6));
    gauge("latency_p99_seconds", "Modelled latency, 99th percentile over the last whole second.", f("latency_p99_us").map(|u| u / 1e6));
    gauge("latency_max_seconds", "Modelled latency, maximum over the last whole second.", f("latency_max_us").map(|u| u / 1e6));
    gauge("gc_slots_moved", "4 KiB slots garbage collection moved in the last whole second.", f("gc_slots_moved"));
    gauge("write_amplification", "NAND slots written per host slot in the last whole second.", f("write_amplification"));
    gauge("buffer_fill_ratio", "Share of the write buffer holding data not yet programmed.", f("buffer_fill"));
    gauge("power_watts", "Modelled power draw over the last whole second.", f("power_watts"));
    gauge("beacon", "The identify beacon (1: on).", stats["beacon"].as_bool().map(|b| b as u8 as f64));
    gauge("life_used_ratio", "Mean P/E cycles over the rated cycles.", status["health"]["life_used"].as_f64());
    gauge(
        "spare_ratio",
        "Spare left: the effective over-provisioning (spare after GC's working room, over the format), as flashlab run shows it.",
        status["health"]["spare_share"].as_f64(),
    );
    gauge("read_only", "Whether the card refuses writes (1: yes).", Some(!stats["read_only"].is_null() as u8 as f64));
    let t = &stats["totals"];
    for (k, help) in [
        ("requests", "Requests served."),
        ("errors", "Requests that failed."),
        ("reads", "Reads served."),
        ("writes", "Writes served."),
        ("bytes_read", "Bytes read."),
        ("bytes_written", "Bytes written."),
    ] {
        if let Some(v) = t[k].as_u64() {
            let _ = writeln!(o, "# HELP flashlab_{k}_total {help}\n# TYPE flashlab_{k}_total counter\nflashlab_{k}_total {v}");
        }
    }
    o
}

/// Serves `GET /metrics` on `addr` from the latest figures (HTTP/1.0, one
/// request a connection: all a Prometheus scrape needs).
pub fn serve(addr: &str, latest: Arc<Mutex<String>>) -> Result<std::net::SocketAddr> {
    use std::io::{BufRead, Write};
    let listener = std::net::TcpListener::bind(addr).with_context(|| format!("--metrics {addr}"))?;
    let bound = listener.local_addr()?;
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let Ok(mut w) = stream.try_clone() else { continue };
            let mut line = String::new();
            let mut r = std::io::BufReader::new(stream);
            if r.read_line(&mut line).is_err() {
                continue;
            }
            // The rest of the request's head.
            let mut h = String::new();
            while r.read_line(&mut h).is_ok_and(|n| n > 2) {
                h.clear();
            }
            let path = line.split_whitespace().nth(1).unwrap_or("");
            let (code, body) = if line.starts_with("GET ") && path == "/metrics" {
                ("200 OK", latest.lock().expect("the metrics lock").clone())
            } else {
                ("404 Not Found", "only GET /metrics is served here\n".to_string())
            };
            let _ = write!(w, "HTTP/1.0 {code}\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\n\r\n{body}", body.len());
        }
    });
    Ok(bound)
}
