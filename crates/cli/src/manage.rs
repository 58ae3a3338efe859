//! Managing a card: `flashlab status` (served, through the control
//! channel; at rest, from its files, changing nothing) and `flashlab
//! monitor` (live statistics once a second: lines on a terminal, JSON
//! lines, and a Prometheus text endpoint).

use crate::serve::{control_request, is_served};
use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

#[derive(clap::Args)]
pub struct StatusArgs {
    /// The card's store directory.
    pub store: PathBuf,
    /// The whole status as JSON (the control protocol's `status` result).
    #[arg(long)]
    pub json: bool,
}

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
    /// Stop after this many seconds (default: until interrupted).
    #[arg(long)]
    pub count: Option<u64>,
}

/// The status of the card in `store`: served (asked through its control
/// channel) or at rest (read from its files, nothing changed).
pub fn status_of(store: &Path) -> Result<Value> {
    if is_served(store) {
        let mut v = control_request(store, r#"{"v": 1, "cmd": "status"}"#)?;
        v["served"] = json!(true);
        return Ok(v);
    }
    let card = accel::CardFile::load(store).map_err(anyhow::Error::msg)?;
    let Some(card) = card else {
        if accel::Device::store_exists(store) {
            bail!("{}: no card.toml (a store served by an older flashlab): serve it once with this one", store.display());
        }
        bail!("{}: no card here (no card.toml and no member-0.flash)", store.display());
    };
    let profile = accel::profile_load(&card.device).map_err(anyhow::Error::msg)?;
    let backing = accel::Backing::Inspect { dir: store.to_path_buf(), owner: card.owner() };
    let device = accel::Device::with_backing(&profile, &card.format, card.scale, &backing)?;
    let mut v = serde_json::to_value(device.status(0, None, false))?;
    let volumes =
        accel::Volumes::load(store).map_err(anyhow::Error::msg)?.unwrap_or_else(|| accel::Volumes::split(device.capacity_bytes(), 1).expect("one volume"));
    let list: Vec<Value> = volumes.list().iter().enumerate().map(|(i, vol)| json!({ "export": format!("volume {}", i + 1), "bytes": vol.bytes })).collect();
    v["volumes"] = Value::Array(list);
    v["clients"] = json!(0);
    v["served"] = json!(false);
    Ok(v)
}

pub fn status(a: StatusArgs) -> Result<()> {
    let v = status_of(&a.store)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    print!("{}", status_text(&v)?);
    Ok(())
}

fn gb(bytes: f64) -> String {
    if bytes >= 1e12 {
        format!("{:.2} TB", bytes / 1e12)
    } else {
        format!("{:.1} GB", bytes / 1e9)
    }
}

/// The status as a person reads it.
fn status_text(v: &Value) -> Result<String> {
    use std::fmt::Write;
    let s: accel::Status = serde_json::from_value(v.clone()).context("the card's status")?;
    let h = &s.health;
    let mut o = String::new();
    writeln!(
        o,
        "{} ({}) [simulated], format {}, scale 1/{}, {} member{}",
        s.device,
        s.id,
        s.format,
        s.scale,
        s.members,
        if s.members == 1 { "" } else { "s" }
    )?;
    let served = if v["served"].as_bool() == Some(true) {
        format!("served, {} client{} connected", v["clients"], if v["clients"] == 1 { "" } else { "s" })
    } else {
        "at rest".into()
    };
    writeln!(o, "firmware {}; {served}; beacon {}", s.firmware, if s.beacon { "ON" } else { "off" })?;
    let vols: Vec<String> = v["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|x| format!("{} {}", x["export"].as_str().unwrap_or("?"), gb(x["bytes"].as_f64().unwrap_or(0.0))))
        .collect();
    writeln!(o, "capacity {}; volumes: {}", gb(s.capacity_bytes as f64), vols.join(", "))?;
    writeln!(o, "health")?;
    match (h.life_used, h.pe_cycles_rated) {
        (Some(l), Some(r)) => writeln!(
            o,
            "  life used       {:.1}% (mean {:.0} of {r} rated P/E cycles; spread {} cycles, {}..{})",
            l * 100.0,
            h.pe_cycles_mean,
            s.erase_spread_cycles,
            h.pe_cycles_min,
            h.pe_cycles_max
        )?,
        _ => writeln!(o, "  life used       not rated (mean {:.0} P/E cycles)", h.pe_cycles_mean)?,
    }
    let rated = s.rated_drive_writes.map_or("no rated bytes written in the profile".to_string(), |r| format!("of the rated {r:.0}"));
    writeln!(o, "  written         {} by the host: {:.2} drive writes {rated}", gb(s.host_bytes_written as f64), s.drive_writes)?;
    match s.lifetime_write_amplification {
        Some(wa) => writeln!(o, "  write ampl.     {wa:.2} over its life (parity not counted)")?,
        None => writeln!(o, "  write ampl.     none yet (nothing written)")?,
    }
    let b = &h.bad_blocks;
    writeln!(
        o,
        "  spare           {:.1}% of the format; bad blocks {} of {} ({} from the factory, {} grown)",
        h.spare_share * 100.0,
        b.factory + b.grown,
        h.blocks,
        b.factory,
        b.grown
    )?;
    writeln!(o, "  power-loss prot. {}; read-only: {}", if s.power_loss_protection { "on" } else { "off" }, s.read_only.as_deref().unwrap_or("no"))?;
    let power = match (s.power_watts, s.power_idle_watts, s.power_max_watts) {
        (Some(w), Some(i), Some(m)) => format!("{w:.1} W over the last second [modelled; {i} W idle, {m} W max]"),
        (None, Some(i), Some(m)) => format!("not drawing (at rest; {i} W idle, {m} W max)"),
        _ => "not published for this card".into(),
    };
    writeln!(o, "power {power}")?;
    if let Some(m) = &s.smart {
        writeln!(
            o,
            "SMART power cycles {}, unclean shutdowns {}, media errors {}, host reads {}, host writes {} (4 KiB slots)",
            m.power_cycles, m.unclean_shutdowns, m.media_errors, m.host_slots_read, m.host_slots_written
        )?;
    }
    if s.alerts.is_empty() {
        writeln!(o, "alerts none")?;
    } else {
        writeln!(o, "alerts")?;
        for a in &s.alerts {
            writeln!(o, "  ! {a}")?;
        }
    }
    Ok(o)
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
    gauge("spare_ratio", "Spare left, as a share of the format.", status["health"]["spare_share"].as_f64());
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

pub fn monitor(a: MonitorArgs) -> Result<()> {
    if !is_served(&a.store) {
        bail!("{}: no card is served from this store (monitor shows a served card's live figures; `flashlab status` reads one at rest)", a.store.display());
    }
    let latest = Arc::new(Mutex::new(String::new()));
    if let Some(addr) = &a.metrics {
        metrics_serve(addr, Arc::clone(&latest))?;
    }
    if !a.json {
        println!("{HEADER}");
    }
    let mut shown = None;
    let mut count = 0u64;
    let mut status = status_of(&a.store)?;
    loop {
        let stats = control_request(&a.store, r#"{"v": 1, "cmd": "stats"}"#)?;
        let second = &stats["second"];
        let index = second["index"].as_u64();
        if index.is_some() && index != shown {
            shown = index;
            if count.is_multiple_of(10) {
                status = status_of(&a.store)?;
            }
            *latest.lock().expect("the metrics lock") = metrics_text(&stats, &status);
            if a.json {
                println!("{second}");
            } else {
                println!("{}", second_line(second, &stats));
            }
            count += 1;
            if a.count.is_some_and(|n| count >= n) {
                return Ok(());
            }
        }
        // Ask again just after the next second ends on the card's side.
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
}
