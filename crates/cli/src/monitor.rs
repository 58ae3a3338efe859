//! `flashlab monitor`: a served card's live figures once a second, on a
//! terminal (a ratatui screen, `screen`), as lines where the output is
//! not a terminal, as JSON lines for scripts, and as a Prometheus text
//! endpoint for dashboards.

use crate::manage::status_of;
use crate::serve::{control_request, is_served};
use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

#[derive(clap::Args)]
pub struct MonitorArgs {
    /// The served card's store directory.
    pub store: PathBuf,
    /// One JSON object a line, each second, for scripts.
    #[arg(long)]
    pub json: bool,
    /// Also serve the latest figures as Prometheus text on
    /// http://ADDR/metrics (e.g. 127.0.0.1:9101).
    #[arg(long)]
    pub metrics: Option<String>,
    /// Stop after this many seconds (default: until interrupted, or q on
    /// the screen).
    #[arg(long)]
    pub count: Option<u64>,
    /// Lines, one a second, even on a terminal (the default where
    /// standard output is not a terminal).
    #[arg(long, conflicts_with = "json")]
    pub plain: bool,
}

/// The Prometheus text of the last figures: the last whole second's
/// gauges and the totals' counters.
fn metrics_text(stats: &Value, status: &Value) -> String {
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
fn metrics_serve(addr: &str, latest: Arc<Mutex<String>>) -> Result<()> {
    use std::io::{BufRead, Write};
    let listener = std::net::TcpListener::bind(addr).with_context(|| format!("--metrics {addr}"))?;
    eprintln!("flashlab monitor: Prometheus metrics on http://{}/metrics", listener.local_addr()?);
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
    Ok(())
}

/// One second as a line on a terminal.
fn second_line(s: &Value, status: &Value) -> String {
    let f = |k: &str| s[k].as_f64();
    let us = |k: &str| f(k).map_or("-".to_string(), |u| format!("{u:.0}"));
    let power = f("power_watts").map_or("-".to_string(), |w| format!("{w:.1}"));
    let wa = f("write_amplification").map_or("-".to_string(), |w| format!("{w:.2}"));
    let beacon = if status["beacon"].as_bool() == Some(true) { " BEACON" } else { "" };
    format!(
        "{:>5} {:>8} {:>8} {:>8.1} {:>8.1} {:>7} {:>7} {:>8} {:>8} {:>5} {:>5.0}% {:>6}{beacon}",
        s["index"],
        s["read_iops"],
        s["write_iops"],
        f("read_mb_s").unwrap_or(0.0),
        f("write_mb_s").unwrap_or(0.0),
        us("latency_avg_us"),
        us("latency_p99_us"),
        us("latency_max_us"),
        s["gc_slots_moved"],
        wa,
        f("buffer_fill").unwrap_or(0.0) * 100.0,
        power
    )
}

const HEADER: &str = "    s   read/s  write/s  read MB/s wr MB/s  avg us  p99 us   max us  GC slots   WA  buffer  watts";

/// Where the seconds go: a screen on a terminal, lines where standard
/// output is not one (or with --plain), JSON lines with --json.
enum Output {
    Screen(Box<(crate::screen::Screen, crate::screen::View)>),
    Lines,
    Json,
}

impl Output {
    fn show(&mut self, stats: &Value, status: &Value) -> Result<()> {
        let second = &stats["second"];
        match self {
            Output::Json => {
                // The second, with the card's state the screen shows too.
                let mut line = second.clone();
                line["rebuilding"] = stats["rebuilding"].clone();
                line["read_only"] = stats["read_only"].clone();
                println!("{line}");
            }
            Output::Lines => println!("{}", second_line(second, stats)),
            Output::Screen(b) => {
                let (screen, view) = &mut **b;
                let s: emu::live::Second = serde_json::from_value(second.clone()).context("the card's second")?;
                view.push(s, stats.clone(), status.clone());
                screen.draw(view)?;
            }
        }
        Ok(())
    }

    /// Waits until the next look at the card; whether to stop.
    fn wait(&mut self, d: std::time::Duration) -> Result<bool> {
        match self {
            Output::Screen(b) => Ok(b.0.quit_asked(d)?),
            _ => {
                std::thread::sleep(d);
                Ok(false)
            }
        }
    }
}

pub fn monitor(a: MonitorArgs) -> Result<()> {
    use std::io::IsTerminal;
    if !is_served(&a.store) {
        bail!("{}: no card is served from this store (monitor shows a served card's live figures; `flashlab status` reads one at rest)", a.store.display());
    }
    let latest = Arc::new(Mutex::new(String::new()));
    if let Some(addr) = &a.metrics {
        metrics_serve(addr, Arc::clone(&latest))?;
    }
    let mut status = status_of(&a.store)?;
    let mut out = if a.json {
        Output::Json
    } else if a.plain || !std::io::stdout().is_terminal() {
        println!("{HEADER}");
        Output::Lines
    } else {
        let view = crate::screen::View::new(status.clone());
        let mut screen = crate::screen::Screen::start().context("the terminal")?;
        screen.draw(&view)?;
        Output::Screen(Box::new((screen, view)))
    };
    let ask = emu::Control::Stats.request();
    let mut shown = None;
    let mut count = 0u64;
    loop {
        let stats = control_request(&a.store, &ask)?;
        let index = stats["second"]["index"].as_u64();
        if index.is_some() && index != shown {
            shown = index;
            if count > 0 && count.is_multiple_of(10) {
                status = status_of(&a.store)?;
            }
            *latest.lock().expect("the metrics lock") = metrics_text(&stats, &status);
            out.show(&stats, &status)?;
            count += 1;
            if a.count.is_some_and(|n| count >= n) {
                return Ok(());
            }
        }
        // Ask again just after the next second ends on the card's side.
        if out.wait(std::time::Duration::from_millis(250))? {
            return Ok(());
        }
    }
}
