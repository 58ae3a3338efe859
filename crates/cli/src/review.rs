//! `flashlab review` and `flashlab compare`: argument parsing, progress
//! bars and printing; the procedure is `lab::review`, the files
//! `lab::report`.

use anyhow::{Context, Result};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use lab::job::{self, ReviewEvent, ReviewSpec};
use lab::review::{self, ReviewResults};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

#[derive(clap::Args)]
pub struct ReviewArgs {
    /// Catalog devices (see `flashlab devices`) or profile files (.toml).
    pub devices: Vec<String>,
    /// The host the cards run on: linux (linux-centos6, the reviewers'
    /// CentOS 6.3 server: the default), windows (windows-2008r2, the same
    /// server under Windows Server 2008 R2) or a host file (.toml).
    /// Repeated, every card is reviewed on each, side by side in the report.
    #[arg(long = "host", value_name = "HOST", conflicts_with = "target")]
    pub hosts: Vec<String>,
    /// Real storage instead of simulated cards: a file, a block device or
    /// an NBD export, reviewed through fio (see `flashlab run --target`);
    /// repeated, several, one after another, in one report. Every byte on
    /// each is overwritten.
    #[arg(long, value_name = "PATH|URI", conflicts_with_all = ["devices", "pts", "fail_die", "export_fio"])]
    pub target: Vec<String>,
    /// With --target: go on although the target holds a file system or a
    /// partition table, repeating its name (a mounted one is refused);
    /// once per such target.
    #[arg(long, value_name = "TARGET", requires = "target")]
    pub destroy: Vec<String>,
    /// With an NBD --target that `flashlab serve` exports: that card's
    /// --store, so that each erase before preconditioning is the card's
    /// secure erase over its control socket (an NBD export has none of
    /// its own).
    #[arg(long, value_name = "STORE", requires = "target")]
    pub served_store: Option<std::path::PathBuf>,
    /// With --target: precondition each profile for this many hours (the
    /// reviewers ran 6 or 12) instead of to SNIA steady state (at most 12
    /// hours).
    #[arg(long, value_name = "HOURS", requires = "target")]
    pub precondition_hours: Option<f64>,
    /// Formats, comma-separated: named ones (stock, hp) or usable
    /// capacities (1500GB). Default: every named format of each device; a
    /// device without a named format skips it.
    #[arg(long, value_delimiter = ',')]
    pub format: Option<Vec<String>>,
    /// Profiles, comma-separated: 4k, 8k7030, fileserver, webserver, seq
    /// (128K and 64K sequential read and write on a sequentially filled
    /// card).
    #[arg(long, value_delimiter = ',', default_value = "4k,8k7030,fileserver,webserver,seq")]
    pub profiles: Vec<String>,
    /// Shrink the card N times (pages of each block first, then blocks;
    /// dies, channels and timings kept; see docs/design/model.md, "Scaling").
    /// 1 is full size.
    #[arg(long, default_value_t = 1)]
    pub scale: u32,
    /// Output directory: results.json, CSV tables, charts/, report.html.
    #[arg(long, default_value = "flashlab-review")]
    pub out: PathBuf,
    /// Seed of every job's PRNG.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Jobs run at once (default: one per core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Round (interval) length, virtual seconds (default: 60 s divided as
    /// the pages of a block are; see docs/design/model.md, "Scaling").
    /// Rounds of 60 s take a scaled card's maxima over as many I/Os as a
    /// full-size round; a round longer than the card's own judges no
    /// burst (the burst is over before it ends).
    #[arg(long)]
    pub interval: Option<f64>,
    /// Rounds of each 4K main test (not with --pts: each PTS test runs
    /// rounds to its own steady state).
    #[arg(long, default_value_t = 5)]
    pub rounds_4k: u32,
    /// Measured rounds of each thread/queue point, after 5 rounds of
    /// warm-up (5 or more: judged steady by the SNIA criteria).
    #[arg(long, default_value_t = 5)]
    pub rounds_matrix: u32,
    /// Preconditioning runs at least this many drive writes...
    #[arg(long, default_value_t = lab::run::PRECONDITION_MIN_DRIVE_WRITES)]
    pub precondition_min: f64,
    /// ...and gives up (loudly: "steady state not reached") at this many.
    #[arg(long, default_value_t = lab::run::PRECONDITION_CAP_DRIVE_WRITES)]
    pub precondition_max: f64,
    /// Precondition by the SNIA rule (the two options above) even where
    /// the profile gives the reviewers' hours (which are the default there:
    /// their published figures came after those hours).
    #[arg(long)]
    pub snia_precondition: bool,
    /// The SNIA PTS sequence instead, per device and format: purge,
    /// workload-independent preconditioning (2x capacity, SEQ 128KiB), the
    /// IOPS matrix (7 mixes x 8 block sizes) in rounds to steady state, the
    /// throughput and the latency tests. --profiles does not apply.
    #[arg(long)]
    pub pts: bool,
    /// With --pts: the version followed, 2.0.2 (three tracking variables
    /// in the IOPS test) or 1.1 (RND 4KiB 100% write IOPS alone).
    #[arg(long, default_value = "2.0.2", requires = "pts", value_parser = lab::pts::PtsVersion::parse)]
    pub pts_version: lab::pts::PtsVersion,
    /// A die fails in a last phase of every job, after its main tests:
    /// CHANNEL.DIE@SECONDS (or CHANNEL.*@SECONDS for a whole channel;
    /// MEMBER: before on a card of several members), SECONDS into that
    /// phase, which runs the profile's workload at 16T/16Q until the
    /// rebuild has ended. The report charts throughput and latency through
    /// it. Repeatable.
    #[arg(long = "fail-die", value_name = "DIE@SECONDS")]
    pub fail_die: Vec<String>,
    /// The rebuild's rate after a die failure, MB/s (default: each
    /// profile's `ftl.rebuild_bytes_per_sec`).
    #[arg(long, value_name = "MB/S", requires = "fail_die")]
    pub rebuild_rate: Option<f64>,
    /// Also write fio job files equivalent to each step into this
    /// directory, to run the same procedure on real hardware.
    #[arg(long)]
    pub export_fio: Option<PathBuf>,
    /// The device the exported fio jobs write to (destroying its data).
    #[arg(long, default_value = "/dev/CHANGE_ME", requires = "export_fio")]
    pub fio_filename: String,
    /// No progress on standard error.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(clap::Args)]
pub struct CompareArgs {
    /// results.json files of earlier reviews.
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// Output directory for the combined report.
    #[arg(long, default_value = "flashlab-compare")]
    pub out: PathBuf,
    /// A name for each results file's run, in order (default: the file's
    /// name, or its directory's for a results.json), shown in every name
    /// and legend of the report and in the deltas.
    #[arg(long)]
    pub label: Vec<String>,
}

/// Progress: a bar per running job's step on a terminal, a line per step
/// otherwise, nothing when quiet.
struct Display {
    quiet: bool,
    multi: MultiProgress,
    bars: Mutex<HashMap<usize, ProgressBar>>,
    jobs: usize,
    started: Instant,
}

/// One line within 80 columns: the job and step, a short bar, the percent
/// and ETA, then as much of the detail as the terminal has room for. A step
/// that may end sooner (a search for steady state) shows its ETA as a bound.
fn bar_style(bound: bool) -> ProgressStyle {
    let eta = if bound { "ETA<={eta}" } else { "ETA {eta}" };
    ProgressStyle::with_template(&format!("{{prefix:.bold}} [{{bar:10.cyan/blue}}] {{percent:>3}}% {eta} {{wide_msg}}"))
        .expect("valid template")
        .progress_chars("=> ")
}

impl Display {
    fn new(quiet: bool, jobs: usize) -> Display {
        let multi = if quiet { MultiProgress::with_draw_target(ProgressDrawTarget::hidden()) } else { MultiProgress::new() };
        Display { quiet, multi, bars: Mutex::new(HashMap::new()), jobs, started: Instant::now() }
    }

    fn line(&self, s: String) {
        if self.quiet {
            return;
        }
        if self.multi.is_hidden() {
            eprintln!("{s}");
        } else {
            let _ = self.multi.println(s);
        }
    }

    fn event(&self, e: &ReviewEvent) {
        if self.quiet {
            return;
        }
        let mut bars = self.bars.lock().expect("progress lock");
        match e {
            ReviewEvent::Step { job, label, step } => {
                let bar = self.multi.add(ProgressBar::new(1000));
                bar.set_style(bar_style(false));
                bar.set_prefix(format!("[{}/{}] {label} {step}", job + 1, self.jobs));
                if let Some(old) = bars.insert(*job, bar) {
                    old.finish_and_clear();
                }
                if self.multi.is_hidden() {
                    eprintln!("[{}/{}] {label}: {step} ...", job + 1, self.jobs);
                }
            }
            ReviewEvent::Round { job, progress, fraction, bound, detail } => {
                if let Some(b) = bars.get(job) {
                    if *bound {
                        b.set_style(bar_style(true));
                    }
                    b.set_position((fraction * 1000.0) as u64);
                    b.set_message(format!("virtual {:.1} s, {detail}", progress.virtual_s));
                }
            }
            ReviewEvent::StepDone { job, label, step, summary } => {
                if let Some(b) = bars.remove(job) {
                    b.finish_and_clear();
                    self.multi.remove(&b);
                }
                drop(bars);
                self.line(format!("[{}/{}] {label}: {step} done, {summary} (wall {:.0} s)", job + 1, self.jobs, self.started.elapsed().as_secs_f64()));
            }
        }
    }
}

pub(crate) fn summary_print(r: &ReviewResults) {
    if !r.jobs.is_empty() {
        let how = match (r.jobs.iter().any(|j| j.measured.is_some()), r.jobs.iter().all(|j| j.measured.is_some())) {
            (_, true) => "measured",
            (true, false) => "simulated; [measured] ones measured",
            (false, false) => "simulated",
        };
        outln!("{:<34} {:<10} {:>14} {:>7}  main tests ({how})", "device / format", "profile", "steady state", "DW");
    }
    for j in &r.jobs {
        let s = j.precondition.steady_state.as_ref();
        let steady = match s {
            _ if j.precondition.interrupted => "INTERRUPTED".into(),
            _ if j.tests_kind == job::Tests::Sequential => "filled".into(),
            Some(s) if s.reached => format!("{} rounds", s.rounds),
            _ => "NOT REACHED".into(),
        };
        // A test a stop kept from running has no figure: none is printed.
        let iops = |name: &str, f: &dyn Fn(&lab::Phase) -> f64| j.test(name).map_or("not run".to_string(), |t| format!("{:.0} IOPS", f(t)));
        let main = match j.tests_kind {
            job::Tests::FourK => {
                format!("4K write {}, 4K read {}", iops("4K write", &|t| t.summary.write.iops), iops("4K read", &|t| t.summary.read.iops))
            }
            job::Tests::Sequential => {
                let mbs = |name: &str| j.test(name).map_or("not run".to_string(), |t| format!("{:.0}", t.summary.all.mb_per_s));
                format!("128K read {} MB/s, write {} MB/s", mbs("128K read"), mbs("128K write"))
            }
            job::Tests::Matrix => {
                let avg = j.test("16T/16Q").map_or(String::new(), |t| format!(", {:.3} ms avg", t.summary.all.latency_avg_ms));
                format!("16T/16Q {}{avg}; 2T/2Q {}", iops("16T/16Q", &|t| t.summary.all.iops), iops("2T/2Q", &|t| t.summary.all.iops))
            }
        };
        let main = if j.interrupted() { format!("{main} (INTERRUPTED)") } else { main };
        outln!("{:<34} {:<10} {:>14} {:>7.2}  {main}", j.label(), j.profile, steady, j.precondition.drive_writes);
    }
    for p in &r.pts {
        let cell = |rd: u32, bs: u32| lab::pts::cell(&p.iops_matrix, rd, bs).map_or(0.0, |c| c.iops);
        let reached = |s: &lab::runs::phase::SteadyReport| format!("{} in {} rounds", if s.reached { "steady" } else { "NOT STEADY" }, s.rounds);
        let tests: Vec<String> = std::iter::once(format!("IOPS {}", reached(&p.steady_state)))
            .chain(p.throughput_tests.iter().chain(&p.latency_test).map(|t| format!("{} {}", t.test, reached(&t.steady_state))))
            .collect();
        outln!(
            "{} {} SNIA {}: {}; RND 4KiB write {:.0} IOPS, read {:.0} IOPS; SEQ 1024KiB write {:.0} MB/s, read {:.0} MB/s",
            p.device.name,
            p.device.format,
            p.version.name(),
            tests.join(", "),
            cell(0, 4096),
            cell(100, 4096),
            lab::pts::cell(&p.throughput, 0, 1 << 20).map_or(0.0, |c| c.mb_per_s),
            lab::pts::cell(&p.throughput, 100, 1 << 20).map_or(0.0, |c| c.mb_per_s)
        );
    }
    for j in &r.jobs {
        for f in j.failure.iter().flat_map(|f| &f.reports) {
            outln!("  {}: {} [simulated]", j.label(), lab::runs::failure::summary(f));
        }
    }
    for j in &r.jobs {
        for c in &j.comparison {
            outln!("  {}: {}", j.label(), c.line());
        }
    }
}

pub fn review(a: ReviewArgs) -> Result<()> {
    assert!(a.target.is_empty(), "main sends a review of real storage to the measured lab");
    let mut profiles = Vec::new();
    for d in &a.devices {
        profiles.push(card::profile_load(d).map_err(anyhow::Error::msg)?);
    }
    let spec = spec_of(&a, &profiles)?;
    let (jobs, skipped) = job::jobs_of(&spec, &profiles)?;
    // Every device must build at this scale and format before hours go in.
    for j in &jobs {
        card::Device::validate(&j.profile, &j.format, spec.scale).map_err(|e| anyhow::anyhow!("{}: {e}", j.label()))?;
    }
    lab::report::out_dir_prepare(&a.out).with_context(|| format!("--out {}", a.out.display()))?;
    if let Some(dir) = &a.export_fio {
        fio_export(&a, &spec, dir)?;
    }
    let threads = a.jobs.unwrap_or_else(lab::runs::threads::cores);
    if threads == 0 {
        anyhow::bail!("--jobs 0: must be at least 1");
    }
    if spec.scale == 1 {
        let most = jobs.iter().map(|j| card::Device::map_bytes(&j.profile, &j.format, 1)).collect::<Result<Vec<_>, _>>()?;
        crate::out::full_size_note(most.into_iter().max().unwrap_or(0), threads.min(jobs.len()));
    }
    let display = Display::new(a.quiet, jobs.len());
    // Said even with -q: a job the user asked for will not run.
    for s in &skipped {
        eprintln!("flashlab: warning: skipped: {s}");
    }
    display.line(format!(
        "flashlab review{}: {} jobs ({} device(s){} x formats{}) at scale {}, seed {}, {} at once  [simulated, virtual time]",
        if spec.pts { " --pts" } else { "" },
        jobs.len(),
        profiles.len(),
        match spec.hosts.len() {
            0 => String::new(),
            n => format!(" x {n} host(s)"),
        },
        if spec.pts { String::new() } else { format!(" x {} profile(s)", spec.profiles.len()) },
        spec.scale,
        spec.seed,
        threads.min(jobs.len())
    ));
    let started = Instant::now();
    crate::out::sigint_stops_the_lab();
    let results = review::review(&spec, &jobs, threads, &|e| display.event(e))?;
    let wall = started.elapsed().as_secs_f64();
    // Files first: a closed standard output ends the program at the summary.
    let written = lab::report::write_all(&results, &a.out, true)?;
    summary_print(&results);
    crate::review::written_print(&written);
    outln!("wall time {wall:.1} s");
    if let Some(why) = &results.incomplete {
        crate::out::interrupted_exit(&format!("INCOMPLETE: {why}{}", kept_note(&written, &a.out)));
    }
    Ok(())
}

/// Where a review's files went.
pub fn written_print(w: &lab::report::Written) {
    outln!("\nwrote {} files to {}: report {}", w.paths.len(), w.dir.display(), w.dir.join("report.html").display());
}

/// What an interrupted review says of a complete one it did not replace.
pub fn kept_note(w: &lab::report::Written, out: &std::path::Path) -> String {
    if w.kept_complete {
        format!("; the complete review in {} is kept as it was, this run's results are in {}", out.display(), w.dir.display())
    } else {
        String::new()
    }
}

/// The review's settings from its arguments.
fn spec_of(a: &ReviewArgs, profiles: &[card::Profile]) -> Result<ReviewSpec> {
    let mut spec = ReviewSpec::new(profiles.iter().map(|p| p.id.clone()).collect(), a.scale, a.seed);
    spec.formats = a.format.clone();
    spec.profiles = a.profiles.clone();
    if let Some(i) = a.interval {
        lab::run::interval_ns_of(i)?;
        spec.interval_s = Some(i);
    }
    spec.pts = a.pts;
    spec.pts_version = a.pts_version;
    spec.rounds_4k = a.rounds_4k;
    spec.rounds_matrix = a.rounds_matrix;
    spec.precondition_min_drive_writes = a.precondition_min;
    spec.precondition_cap_drive_writes = a.precondition_max;
    spec.snia_precondition = a.snia_precondition;
    spec.fail = a.fail_die.iter().map(|f| lab::runs::failure::FailSpec::parse(f)).collect::<Result<_, _>>().map_err(anyhow::Error::msg)?;
    spec.rebuild_bytes_per_sec = crate::run::rebuild_rate_of(a.rebuild_rate)?;
    spec.hosts = a.hosts.clone();
    Ok(spec)
}

/// The same procedure as fio job files for a real card.
fn fio_export(a: &ReviewArgs, spec: &ReviewSpec, dir: &std::path::Path) -> Result<()> {
    let ps: Vec<&job::ReviewProfile> = spec.profiles.iter().map(|p| job::profile_find(p)).collect::<Result<_, _>>()?;
    let o = lab::fio::FioOptions {
        filename: a.fio_filename.clone(),
        precondition_s: 6 * 3600,
        round_s: card::ROUND_FULL_SIZE_S,
        rounds_4k: spec.rounds_4k,
        rounds_matrix: spec.rounds_matrix,
    };
    let files = if spec.pts { lab::fio::export_pts(dir, &o) } else { lab::fio::export(dir, &ps, &o) };
    let files = files.with_context(|| format!("cannot write --export-fio {}", dir.display()))?;
    if !a.quiet {
        eprintln!("fio job files written: {} files under {}", files.len(), dir.display());
    }
    Ok(())
}

pub fn compare(a: CompareArgs) -> Result<()> {
    if !a.label.is_empty() && a.label.len() != a.results.len() {
        anyhow::bail!("--label given {} times for {} results files: give one a file, or none", a.label.len(), a.results.len());
    }
    let labels = if a.label.is_empty() { run_labels(&a.results) } else { a.label.clone() };
    let mut all = Vec::new();
    for (p, label) in a.results.iter().zip(labels) {
        let text = card::input::read_text(p, card::input::RESULTS_BYTES_MAX).with_context(|| format!("cannot read results file {}", p.display()))?;
        all.push((label, review::results_parse(&text, &p.display().to_string())?));
    }
    let merged = review::results_merge(all).expect("at least one results file");
    lab::report::out_dir_prepare(&a.out).with_context(|| format!("--out {}", a.out.display()))?;
    let written = lab::report::write_all(&merged, &a.out, true)?;
    summary_print(&merged);
    deltas_print(&review::deltas(&merged));
    crate::review::written_print(&written);
    Ok(())
}

/// Each results file's run label: its name without `.json`, or for a
/// `results.json` its directory's name; made unique by its place in the
/// list where two would read the same.
fn run_labels(files: &[PathBuf]) -> Vec<String> {
    let name = |p: &PathBuf| {
        let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let dir = p.parent().and_then(|d| d.file_name()).map(|d| d.to_string_lossy().into_owned());
        match dir {
            Some(d) if stem == "results" => d,
            _ => stem,
        }
    };
    let names: Vec<String> = files.iter().map(name).collect();
    names.iter().enumerate().map(|(i, n)| if names.iter().filter(|m| *m == n).count() > 1 { format!("{n} #{}", i + 1) } else { n.clone() }).collect()
}

/// The later runs against the first, test by test.
fn deltas_print(d: &[review::Delta]) {
    if d.is_empty() {
        return;
    }
    outln!("\n{:<34} {:<10} {:<9} {:<15} {:>12} {:>12} {:>8}  runs [simulated]", "device / format", "profile", "test", "figure", "base", "value", "delta");
    for x in d {
        outln!(
            "{:<34} {:<10} {:<9} {:<15} {:>12} {:>12} {:>8}  {} -> {}",
            format!("{} {}", x.device, x.format),
            x.profile,
            x.test,
            x.figure,
            lab::number::num(x.base),
            lab::number::num(x.value),
            x.delta_percent.map_or("-".into(), |d| format!("{d:+.1}%")),
            x.base_run,
            x.run
        );
    }
}
