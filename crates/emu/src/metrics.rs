//! The metrics endpoint: a served card's latest figures as Prometheus
//! text on `http://ADDR/metrics`, for dashboards (`flashlab monitor
//! --metrics ADDR`).

use crate::service::{line_read, Gate, RefusalLog, Socket};
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

/// Scrapes served at once.
pub const SCRAPES_MAX: usize = 8;

/// How long a scrape may take to send its request.
pub const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The longest line of a request's head, and the most lines in it.
pub const HEAD_LINE_BYTES_MAX: usize = 8 * 1024;
pub const HEAD_LINES_MAX: usize = 100;

/// Serves `GET /metrics` on `addr` from the latest figures (HTTP/1.0, one
/// request a connection: all a Prometheus scrape needs), up to
/// `SCRAPES_MAX` at once, each on a thread of its own and given
/// `REQUEST_TIMEOUT` to send a head of bounded lines.
pub fn serve(addr: &str, latest: Arc<Mutex<String>>) -> Result<std::net::SocketAddr> {
    let listener = std::net::TcpListener::bind(addr).with_context(|| format!("--metrics {addr}"))?;
    let bound = listener.local_addr()?;
    let gate = Gate::new("metrics", SCRAPES_MAX, Arc::new(RefusalLog::default()));
    std::thread::Builder::new().name("metrics".into()).spawn(move || {
        let e = gate.serve(
            || listener.accept().map(|(s, _)| s),
            || {
                let latest = Arc::clone(&latest);
                move |stream| scrape(stream, &latest)
            },
        );
        eprintln!("flashlab: the metrics endpoint no longer accepts ({e})");
    })?;
    Ok(bound)
}

/// Answers one scrape: its request line, then the rest of its head (at
/// most `HEAD_LINES_MAX` lines of `HEAD_LINE_BYTES_MAX`), then the text.
fn scrape(stream: std::net::TcpStream, latest: &Mutex<String>) {
    use std::io::Write;
    if stream.time_limit(Some(REQUEST_TIMEOUT)).is_err() {
        return;
    }
    let Ok(mut w) = stream.try_clone() else { return };
    let mut r = std::io::BufReader::new(stream);
    let mut line = String::new();
    if !line_read(&mut r, &mut line, HEAD_LINE_BYTES_MAX).unwrap_or(false) {
        return;
    }
    let mut h = String::new();
    let mut ended = false;
    for _ in 0..HEAD_LINES_MAX {
        match line_read(&mut r, &mut h, HEAD_LINE_BYTES_MAX) {
            Ok(true) if h.trim_end().is_empty() => {
                ended = true;
                break;
            }
            Ok(true) => {}
            _ => return,
        }
    }
    let path = line.split_whitespace().nth(1).unwrap_or("");
    let (code, body) = match (ended, line.starts_with("GET ") && path == "/metrics") {
        (false, _) => ("431 Request Header Fields Too Large", format!("at most {HEAD_LINES_MAX} header lines\n")),
        (true, true) => ("200 OK", latest.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()),
        (true, false) => ("404 Not Found", "only GET /metrics is served here\n".to_string()),
    };
    let _ = write!(w, "HTTP/1.0 {code}\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\n\r\n{body}", body.len());
}
