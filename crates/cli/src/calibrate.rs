//! `flashlab calibrate`: every published figure of each profile,
//! reproduced in its own conditions and judged, with the wall time of
//! each phase; a held figure outside its tolerance fails the command.

use crate::out;
use anyhow::Result;
use lab::calibrate::Calibration;
use lab::Progress;
use std::time::Instant;

#[derive(clap::Args)]
pub struct CalibrateArgs {
    /// Catalog devices or profile files (default: the whole catalog).
    pub devices: Vec<String>,
    /// Format (default: every format the device's figures were measured
    /// on, its default first).
    #[arg(long)]
    pub format: Option<String>,
    /// Shrink each card N times (see `run --help`); 1 is full size.
    #[arg(long, default_value_t = 16)]
    pub scale: u32,
    /// Seed of every phase's PRNG.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Only the figures measured on this host (linux, windows or a host
    /// id), each on a card on that host; repeated, on each. Default: every
    /// figure, each on the host it was measured on.
    #[arg(long = "host", value_name = "HOST")]
    pub hosts: Vec<String>,
    /// Rounds measured for each main test.
    #[arg(long, default_value_t = 5)]
    pub rounds: u32,
    /// The calibrations as JSON: to FILE, or to standard output with `-`
    /// or no FILE.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<std::path::PathBuf>,
    /// No progress lines on standard error.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn calibrate(a: CalibrateArgs) -> Result<()> {
    let ids: Vec<String> = if a.devices.is_empty() { card::CATALOG.iter().map(|(id, _)| id.to_string()).collect() } else { a.devices.clone() };
    let json = a.json.as_deref().map(out::JsonSink::open).transpose()?;
    out::sigint_stops_the_lab();
    let mut all = Vec::new();
    let hosts: Vec<String> = a.hosts.iter().map(|h| card::host_load(h).map(|h| h.id)).collect::<Result<_, _>>().map_err(anyhow::Error::msg)?;
    for id in ids {
        let mut profile = card::profile_load(&id).map_err(anyhow::Error::msg)?;
        if !hosts.is_empty() {
            profile.published.retain(|p| hosts.iter().any(|h| h == p.host_id()));
            if profile.published.is_empty() {
                outln!("{id}: no figure measured on {}: nothing to calibrate", hosts.join(", "));
                continue;
            }
        }
        let formats = match &a.format {
            Some(f) => vec![f.clone()],
            None => lab::runs::published::formats_with_figures(&profile),
        };
        for format in formats {
            all.push(calibrate_one(&a, &profile, &format)?);
        }
    }
    if let Some(sink) = json {
        sink.write(&all, a.quiet)?;
    }
    let outside: Vec<String> = all.iter().flat_map(|c| c.failures().map(move |f| format!("{} {} ({})", c.device, f.what, f.metric.unit()))).collect();
    if !outside.is_empty() {
        anyhow::bail!("{} figure(s) outside their tolerance: {}", outside.len(), outside.join("; "));
    }
    Ok(())
}

/// One device in one format: its calibration, printed with each phase's wall time.
fn calibrate_one(a: &CalibrateArgs, profile: &card::Profile, format: &str) -> Result<Calibration> {
    if a.scale == 1 {
        out::full_size_note(card::Device::map_bytes(profile, format, 1)?, 1);
    }
    let mut clock = PhaseClock::new(a.quiet);
    let c = lab::calibrate::calibrate(profile, format, a.scale, a.seed, a.rounds, &mut |p: &Progress| clock.progress(p))?;
    let (total, walls) = clock.end();
    outln!("{} --format {} --scale {} --seed {} [simulated]; wall {:.1} s ({})", c.device, c.format, c.scale, c.seed, total, walls.join(", "));
    for p in &c.preconditions {
        outln!("  {}", precondition_line(p));
    }
    for ch in &c.checks {
        outln!("  {}", ch.line());
    }
    for b in &c.beside {
        outln!("  {:<8} {:<75} published {:>18} {:<10} simulated {:>10}", "beside", b.what, "-", b.metric.unit(), lab::number::num(b.simulated));
    }
    Ok(c)
}

/// When each phase last reported (phases of separate cards run at once
/// and interleave), and a progress line every 10 s unless quiet.
struct PhaseClock {
    started: Instant,
    last_print: Instant,
    /// Each phase and the wall time of its last report, in the order
    /// phases first reported.
    done: Vec<(String, f64)>,
    quiet: bool,
}

impl PhaseClock {
    fn new(quiet: bool) -> PhaseClock {
        PhaseClock { started: Instant::now(), last_print: Instant::now(), done: Vec::new(), quiet }
    }

    fn progress(&mut self, p: &Progress) {
        let t = self.started.elapsed().as_secs_f64();
        // Each card state's preconditioning phase is "precondition".
        let name = if p.phase == "precondition" { format!("precondition {}", p.workload) } else { p.phase.to_string() };
        if !self.quiet && self.last_print.elapsed().as_secs_f64() >= 10.0 {
            self.last_print = Instant::now();
            eprintln!("  {name:<12} virtual {:>9.1} s  {:>6.2} drive writes  {:>9.0} IOPS  wall {t:.0} s", p.virtual_s, p.drive_writes, p.last.iops);
        }
        match self.done.iter_mut().find(|(n, _)| *n == name) {
            Some(entry) => entry.1 = t,
            None => self.done.push((name, t)),
        }
    }

    /// The total wall time and "phase done at N s" for each phase.
    fn end(self) -> (f64, Vec<String>) {
        let total = self.started.elapsed().as_secs_f64();
        (total, self.done.iter().map(|(name, t)| format!("{name} done at {t:.1} s")).collect())
    }
}

fn precondition_line(p: &lab::Phase) -> String {
    let s = p.steady_state.as_ref();
    format!(
        "preconditioned with {} by {}: {} after {:.2} drive writes, drift {}, WA {:.2}",
        p.workload.name,
        s.map_or("-", |s| s.rule.as_str()),
        if s.is_some_and(|s| s.reached) { "steady" } else { "STEADY STATE NOT REACHED" },
        p.drive_writes,
        s.and_then(|s| s.drift_percent_per_drive_write).map_or("-".into(), |d| format!("{d:+.1}% per drive write")),
        p.wa
    )
}
