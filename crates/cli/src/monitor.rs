//! `flashlab monitor`: a served card's live figures once a second, on a
//! terminal (a ratatui screen, `screen`), as lines where the output is
//! not a terminal, as JSON lines for scripts, and as a Prometheus text
//! endpoint for dashboards.

use anyhow::{bail, Context, Result};
use emu::channel::{is_served, request};
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
        let addr = if addr.parse::<u16>().is_ok() { format!("127.0.0.1:{addr}") } else { addr.clone() };
        let bound = emu::metrics::serve(&addr, Arc::clone(&latest))?;
        if !bound.ip().is_loopback() {
            eprintln!("flashlab monitor: note: the metrics on {bound} are open to every machine that reaches it (no authentication)");
        }
        eprintln!("flashlab monitor: Prometheus metrics on http://{bound}/metrics");
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
        let stats = request(&a.store, &ask)?;
        let index = stats["second"]["index"].as_u64();
        if index.is_some() && index != shown {
            shown = index;
            if count > 0 && count.is_multiple_of(10) {
                status = status_of(&a.store)?;
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
