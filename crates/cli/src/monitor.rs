//! `flashlab monitor`: a served card's live figures once a second, on a
//! terminal (a ratatui screen, `screen`), as lines where the output is
//! not a terminal, as JSON lines for scripts, and as a Prometheus text
//! endpoint for dashboards.

use anyhow::{bail, Context, Result};
use emu::channel::{is_served, request};
use serde_json::Value;
use std::io::Write;
use std::sync::{Arc, Mutex};

#[derive(clap::Args)]
pub struct MonitorArgs {
    #[command(flatten)]
    pub store: crate::manage::StoreArg,
    /// One JSON object a line, each second, for scripts: to FILE
    /// (written as it comes), or to standard output with `-` or no
    /// FILE.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<std::path::PathBuf>,
    /// Also serve the latest figures as Prometheus text on
    /// http://ADDR/metrics: a port alone (9101) binds loopback
    /// (127.0.0.1:9101); an address other machines reach (0.0.0.0:9101)
    /// shows the figures to them.
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

/// The plain lines' columns: title and width, the one place both the
/// header and each line take them from.
const COLUMNS: [(&str, usize); 12] = [
    ("s", 5),
    ("read/s", 8),
    ("write/s", 8),
    ("read MB/s", 9),
    ("wr MB/s", 8),
    ("avg us", 7),
    ("p99 us", 7),
    ("max us", 8),
    ("GC slots", 8),
    ("WA", 5),
    ("buffer", 6),
    ("watts", 6),
];

/// Cells right-aligned in `COLUMNS`' widths, one space apart.
fn row(cells: &[String]) -> String {
    debug_assert_eq!(cells.len(), COLUMNS.len());
    cells.iter().zip(COLUMNS).map(|(c, (_, w))| format!("{c:>w$}")).collect::<Vec<_>>().join(" ")
}

fn header() -> String {
    row(&COLUMNS.map(|(t, _)| t.to_string()))
}

/// A second as a plain line (`--plain`, or standard output not a
/// terminal).
fn second_line(s: &Value, status: &Value) -> String {
    let f = |k: &str| s[k].as_f64();
    let n = |k: &str| s[k].as_u64().map_or("-".to_string(), |v| v.to_string());
    let fixed = |k: &str, d: usize| f(k).map_or("-".to_string(), |v| format!("{v:.d$}"));
    let beacon = if status["beacon"].as_bool() == Some(true) { " BEACON" } else { "" };
    let cells = [
        n("index"),
        n("read_iops"),
        n("write_iops"),
        fixed("read_mb_s", 1),
        fixed("write_mb_s", 1),
        fixed("latency_avg_us", 0),
        fixed("latency_p99_us", 0),
        fixed("latency_max_us", 0),
        n("gc_slots_moved"),
        fixed("write_amplification", 2),
        f("buffer_fill").map_or("-".to_string(), |b| format!("{:.0}%", b * 100.0)),
        fixed("power_watts", 1),
    ];
    format!("{}{beacon}", row(&cells))
}

/// Where the seconds go: a screen on a terminal, lines where standard
/// output is not one (or with --plain), JSON lines with --json.
enum Output {
    Screen(Box<(crate::screen::Screen, crate::screen::View)>),
    Lines,
    Json(Box<dyn std::io::Write + Send>),
}

impl Output {
    fn show(&mut self, stats: &Value, status: &Value) -> Result<()> {
        let second = &stats["second"];
        match self {
            Output::Json(w) => {
                // The second, with the card's state the screen shows too.
                let mut line = second.clone();
                line["rebuilding"] = stats["rebuilding"].clone();
                line["read_only"] = stats["read_only"].clone();
                match writeln!(w, "{line}").and_then(|()| w.flush()) {
                    Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
                    r => r.context("writing --json")?,
                }
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
    let (store, json) = a.store.dir_and_json(a.json, "monitor")?;
    if !is_served(&store) {
        bail!("{}: no card is served from this store (monitor shows a served card's live figures; `flashlab status` reads one at rest)", store.display());
    }
    let latest = Arc::new(Mutex::new(String::new()));
    if let Some(addr) = &a.metrics {
        let addr = if addr.parse::<u16>().is_ok() { format!("127.0.0.1:{addr}") } else { addr.clone() };
        let bound = emu::metrics::serve(&addr, Arc::clone(&latest))?;
        if !bound.ip().is_loopback() {
            eprintln!("flashlab monitor: note: the metrics on {bound} are open to every machine that reaches it (no authentication)");
        }
        eprintln!("flashlab monitor: Prometheus metrics on http://{bound}/metrics");
    }
    let mut status = status_of(&store)?;

    let mut out = if let Some(json) = json {
        Output::Json(json.stream()?)
    } else if a.plain || !std::io::stdout().is_terminal() {
        println!("{}", header());
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
        let stats = request(&store, &ask)?;
        let index = stats["second"]["index"].as_u64();
        if index.is_some() && index != shown {
            shown = index;
            if count > 0 && count.is_multiple_of(10) {
                status = status_of(&store)?;
            }
            *latest.lock().expect("the metrics lock") = emu::metrics::text(&stats, &status);
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

/// The card's status, as the screen and the metrics read it.
fn status_of(store: &std::path::Path) -> Result<Value> {
    Ok(serde_json::to_value(emu::manage::status(store)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each value ends where its title does (a JSON value formatted with a
    /// width ignores it: the columns once drifted).
    #[test]
    fn a_plain_line_lines_up_under_the_header() {
        let s = serde_json::json!({"index": 7, "read_iops": 123456, "write_iops": 9, "read_mb_s": 505.3, "write_mb_s": 0.0,
            "latency_avg_us": 81.4, "latency_p99_us": 240.0, "latency_max_us": 1410.1, "gc_slots_moved": 0,
            "write_amplification": null, "buffer_fill": 0.25, "power_watts": 8.4});
        let (h, l) = (header(), second_line(&s, &serde_json::json!({})));
        assert_eq!(h.len(), l.len(), "\n{h}\n{l}");
        let ends = |t: &str| t.char_indices().filter(|&(i, c)| c != ' ' && t[i + 1..].starts_with(' ') || i + 1 == t.len()).map(|(i, _)| i).collect::<Vec<_>>();
        assert_eq!(ends(&l).len(), COLUMNS.len(), "{l}");
        assert!(ends(&l).iter().all(|e| h.as_bytes()[*e] != b' '), "every value ends under its title's end:\n{h}\n{l}");
    }
}
