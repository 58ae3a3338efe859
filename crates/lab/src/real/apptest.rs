//! The reviews' application test: SysBench OLTP on MariaDB, on a served
//! card. The stack, from the bottom: the card served over NBD (started by
//! the caller's command, with `--trace`), nbdfuse presenting the export as
//! a file, a loop device on it (direct I/O, so the host's page cache does
//! not stand in for the card), ext4, and a MariaDB server of the run's
//! own with its data directory there. sysbench loads the tables
//! (`prepare`), then runs `oltp_read_write` at each thread count.
//!
//! Each step's undoing is kept as the step is done (`Stack`), and done in
//! reverse order whatever ends the test: success, an error, a stop asked
//! (Ctrl-C) or a panic. The card stops last and cleanly, so its store
//! mounts again.
//!
//! The card's own figures over each phase are read from its trace
//! afterwards: the requests whose arrival on the card's clock falls
//! between the phase's start and end, with the latency the card modelled
//! for each; write amplification, GC's moves and erases from its
//! counters (`stats`) at the phase's start and end.

use crate::real::host::{self, HostError, Process};
use crate::real::mariadb::{self, Mariadb};
use crate::real::sysbench::{self, Report};
use crate::runs::run::DeviceInfo;
use crate::runs::trace::{capture_for_each, CaptureLine};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The results file's kind and schema.
pub const RESULTS_KIND: &str = "flashlab apptest sysbench";
pub const RESULTS_SCHEMA_VERSION: u32 = 1;

/// What to run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SysbenchSpec {
    pub threads: Vec<u32>,
    pub tables: u32,
    pub table_size: u64,
    /// Seconds of each measured run.
    pub seconds: u64,
    /// InnoDB's buffer pool, MiB.
    pub buffer_pool_mib: u32,
    /// The served card's clock runs this many times slower than the wall
    /// clock (`serve --time-scale`).
    pub time_scale: f64,
}

/// The card's counters at an instant (its control channel's `stats`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CardCounters {
    /// The card's clock, ns: the clock of its trace.
    pub card_ns: u64,
    pub host_slots_written: u64,
    /// Slots programmed, data and parity.
    pub nand_slots_written: u64,
    pub gc_slots_moved: u64,
    pub block_erases: u64,
}

/// Why the served card's counters could not be read (not yet answering,
/// or its `stats` without them).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CountersUnread(pub String);

/// The served card the test runs on: how to start it and to read it.
pub struct Card<'a> {
    /// Starts `flashlab serve` with `--trace` at `trace`, on `socket`.
    pub serve: Command,
    /// The NBD URI of its export.
    pub uri: String,
    pub trace: PathBuf,
    /// Its counters now, through its control channel; an error while it
    /// is not yet answering.
    pub counters: &'a dyn Fn() -> Result<CardCounters, CountersUnread>,
    pub device: DeviceInfo,
}

/// What the card did over a phase, on its own clock (simulated).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CardWindow {
    /// The phase's length on the card's clock, s.
    pub seconds: f64,
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub read_mb: f64,
    pub write_mb: f64,
    /// Reads and writes a second.
    pub iops: f64,
    /// The card's modelled latency of its reads and writes, us.
    pub latency_avg_us: Option<f64>,
    pub latency_p99_us: Option<f64>,
    pub latency_max_us: Option<f64>,
    /// NAND slots programmed (data and parity) per host slot written
    /// over the phase.
    pub write_amplification: Option<f64>,
    /// Slots garbage collection moved, and blocks erased, over the phase.
    pub gc_slots_moved: u64,
    pub block_erases: u64,
}

/// One thread count's run: sysbench's figures and the card's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub threads: u32,
    pub sysbench: Report,
    pub card: CardWindow,
}

/// The tables' load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Load {
    pub wall_seconds: f64,
    pub card: CardWindow,
}

/// This host, as the results describe it beside the reviewers'.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    pub cpu: String,
    pub memory_gb: f64,
    pub kernel: String,
    pub mariadb: String,
    pub sysbench: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SysbenchResults {
    pub kind: String,
    pub schema_version: u32,
    pub flashlab_version: String,
    pub note: String,
    pub device: DeviceInfo,
    pub spec: SysbenchSpec,
    pub host: HostInfo,
    pub load: Option<Load>,
    pub points: Vec<Point>,
    /// Why the test ended before its last thread count, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    /// What went wrong in the teardown, if anything.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub teardown_problems: Vec<String>,
    /// The card's trace of the whole test, for `flashlab replay`.
    pub trace: String,
}

/// What the test is doing, for the console.
pub enum Step<'a> {
    Phase(&'a str),
    Loaded(&'a Load),
    Measured(&'a Point),
}

/// The programs the stack needs besides MariaDB's, and their packages.
pub const PROGRAMS: [(&str, &str); 6] =
    [("nbdfuse", "libnbd-bin"), ("fusermount3", "fuse3"), ("mkfs.ext4", "e2fsprogs"), ("losetup", "mount"), ("umount", "mount"), ("sysbench", "sysbench")];

/// What was set up, each undone in reverse order by `teardown`.
struct Stack {
    run_dir: PathBuf,
    card: Option<Process>,
    nbdfuse: Option<Process>,
    loop_device: Option<String>,
    mounted: bool,
    db: Option<Mariadb>,
    problems: Vec<String>,
}

impl Stack {
    fn fuse_dir(&self) -> PathBuf {
        self.run_dir.join("fuse")
    }
    fn fs_dir(&self) -> PathBuf {
        self.run_dir.join("fs")
    }

    /// Undoes every step done, last first; what failed is kept in
    /// `problems`. Safe to call twice.
    fn teardown(&mut self) {
        if let Some(db) = self.db.take() {
            self.problems.extend(db.stop());
        }
        if self.mounted {
            self.mounted = false;
            if !quiet(Command::new("umount").arg(self.fs_dir())) {
                quiet(Command::new("umount").arg("-l").arg(self.fs_dir()));
                self.problems.push(format!("{} was busy at unmount: detached lazily", self.fs_dir().display()));
            }
        }
        if let Some(dev) = self.loop_device.take() {
            if !quiet(Command::new("losetup").arg("-d").arg(&dev)) {
                self.problems.push(format!("loop device {dev} could not be detached"));
            }
        }
        if let Some(mut fuse) = self.nbdfuse.take() {
            quiet(Command::new("fusermount3").arg("-u").arg(self.fuse_dir()));
            fuse.stop(libc::SIGTERM, Duration::from_secs(10));
        }
        if let Some(mut card) = self.card.take() {
            match card.stop(libc::SIGTERM, Duration::from_secs(120)) {
                Some(s) if s.success() => {}
                Some(s) => self.problems.push(format!("the served card {} at its stop; its log: {}", host::describe(s), card.log.display())),
                None => {}
            }
        }
        // Only what the stack made, and directories only when empty: a
        // mount that would not go keeps its files.
        for f in ["nbd.sock", "nbdfuse.pid", "mysqld.sock"] {
            let _ = std::fs::remove_file(self.run_dir.join(f));
        }
        for d in [self.fs_dir(), self.fuse_dir(), self.run_dir.clone()] {
            let _ = std::fs::remove_dir(d);
        }
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        self.teardown();
    }
}

/// Runs a command whose output nobody reads; whether it succeeded.
fn quiet(cmd: &mut Command) -> bool {
    cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).status().is_ok_and(|s| s.success())
}

/// The whole test. `out` keeps the logs; `run_dir` (short, for socket
/// paths) the sockets and mount points, removed at the end.
pub fn sysbench(spec: &SysbenchSpec, card: Card, out: &Path, run_dir: &Path, step: &mut dyn FnMut(Step)) -> Result<SysbenchResults, HostError> {
    assert!(!spec.threads.is_empty() && spec.threads.iter().all(|&t| t > 0), "thread counts checked by the caller");
    for (p, package) in PROGRAMS.into_iter().chain(mariadb::PROGRAMS) {
        host::need(p, package)?;
    }
    let failed = |what: &str, e: std::io::Error| HostError::Failed { what: what.into(), why: e.to_string(), log: String::new() };
    std::fs::create_dir_all(run_dir.join("fuse")).map_err(|e| failed("making the run directory", e))?;
    std::fs::create_dir_all(run_dir.join("fs")).map_err(|e| failed("making the run directory", e))?;
    let mut stack = Stack { run_dir: run_dir.to_path_buf(), card: None, nbdfuse: None, loop_device: None, mounted: false, db: None, problems: Vec::new() };
    let host = HostInfo {
        cpu: host::cpu(),
        memory_gb: host::memory_gb(),
        kernel: host::kernel(),
        mariadb: host::version("mariadbd"),
        sysbench: host::version("sysbench"),
    };
    let mut results = SysbenchResults {
        kind: RESULTS_KIND.into(),
        schema_version: RESULTS_SCHEMA_VERSION,
        flashlab_version: env!("CARGO_PKG_VERSION").into(),
        note: note(spec),
        device: card.device.clone(),
        spec: spec.clone(),
        host,
        load: None,
        points: Vec::new(),
        incomplete: None,
        teardown_problems: Vec::new(),
        trace: card.trace.display().to_string(),
    };
    let mut windows = Vec::new();
    let outcome = stack_run(spec, &card, out, &mut stack, &mut windows, &mut results, step);
    stack.teardown();
    results.teardown_problems = std::mem::take(&mut stack.problems);
    match outcome {
        Ok(()) => {}
        Err(HostError::Interrupted(what)) => results.incomplete = Some(format!("stopped (Ctrl-C) during {what}")),
        Err(e) => return Err(e),
    }
    if windows.is_empty() {
        return Ok(results);
    }
    // The trace is whole once the card has stopped.
    let phases = card_windows(&card.trace, &windows).map_err(|why| HostError::Failed {
        what: format!("reading the card's trace {}", card.trace.display()),
        why: why.to_string(),
        log: String::new(),
    })?;
    let mut phases = phases.into_iter();
    if let Some(load) = &mut results.load {
        load.card = phases.next().expect("a window per phase");
    }
    for (p, w) in results.points.iter_mut().zip(phases) {
        p.card = w;
    }
    Ok(results)
}

/// A phase's bounds on the card's clock, and its counters at each.
type Window = (CardCounters, CardCounters);

fn stack_run(
    spec: &SysbenchSpec,
    card: &Card,
    out: &Path,
    stack: &mut Stack,
    windows: &mut Vec<Window>,
    results: &mut SysbenchResults,
    step: &mut dyn FnMut(Step),
) -> Result<(), HostError> {
    step(Step::Phase("serving the card"));
    let mut serve = Command::new(card.serve.get_program());
    serve.args(card.serve.get_args());
    let p = stack.card.insert(Process::start("the served card (flashlab serve)", serve, &out.join("serve.log"))?);
    p.wait_ready("the card's start", Duration::from_secs(600), || (card.counters)().is_ok())?;
    step(Step::Phase("presenting it as a block device (nbdfuse, loop device) with ext4"));
    block_device(card, out, stack)?;
    step(Step::Phase("starting MariaDB"));
    let settings = mariadb::Settings { buffer_pool_mib: spec.buffer_pool_mib, redo_log_mib: 48 };
    let socket = stack.run_dir.join("mysqld.sock");
    stack.db = Some(Mariadb::start(&stack.fs_dir().join("mysql"), &socket, out, settings)?);
    step(Step::Phase("loading the tables (sysbench prepare)"));
    let started = Instant::now();
    let before = counters(card)?;
    let mut prepare = Command::new("sysbench");
    prepare.args(sysbench::args(&socket, spec.tables, spec.table_size, spec.tables.min(8))).arg("prepare");
    host::run("the load (sysbench prepare)", prepare, &out.join("sysbench-prepare.log"))?;
    windows.push((before, counters(card)?));
    results.load = Some(Load { wall_seconds: started.elapsed().as_secs_f64(), card: CardWindow::default() });
    step(Step::Loaded(results.load.as_ref().expect("just set")));
    for &threads in &spec.threads {
        step(Step::Phase(&format!("the run at {threads} threads ({} s)", spec.seconds)));
        let before = counters(card)?;
        let mut run = Command::new("sysbench");
        run.args(sysbench::args(&socket, spec.tables, spec.table_size, threads)).args(sysbench::run_args(spec.seconds));
        let log = out.join(format!("sysbench-{threads}t.log"));
        let what = format!("the run at {threads} threads");
        let text = host::run(&what, run, &log)?;
        let after = counters(card)?;
        let report = Report::parse(&text).map_err(|why| HostError::Failed { what: what.clone(), why: why.to_string(), log: log.display().to_string() })?;
        stack.db.as_mut().expect("started").alive(&what)?;
        windows.push((before, after));
        results.points.push(Point { threads, sysbench: report, card: CardWindow::default() });
        step(Step::Measured(results.points.last().expect("just pushed")));
    }
    Ok(())
}

fn counters(card: &Card) -> Result<CardCounters, HostError> {
    (card.counters)().map_err(|why| HostError::Failed { what: "reading the served card's counters".into(), why: why.0, log: String::new() })
}

/// nbdfuse, a loop device with direct I/O, ext4 made and mounted.
fn block_device(card: &Card, out: &Path, stack: &mut Stack) -> Result<(), HostError> {
    let (fuse_dir, pid) = (stack.fuse_dir(), stack.run_dir.join("nbdfuse.pid"));
    let disk = fuse_dir.join("disk");
    let mut fuse = Command::new("nbdfuse");
    fuse.arg("-P").arg(&pid).arg(&disk).arg(&card.uri);
    let p = stack.nbdfuse.insert(Process::start("nbdfuse", fuse, &out.join("nbdfuse.log"))?);
    p.wait_ready("nbdfuse's start", Duration::from_secs(30), || std::fs::metadata(&pid).is_ok_and(|m| m.len() > 0))?;
    let mut attach = Command::new("losetup");
    attach.args(["--find", "--show", "--direct-io=on"]).arg(&disk);
    let dev = host::run("attaching a loop device (losetup)", attach, &out.join("losetup.log"))?.trim().to_string();
    if !dev.starts_with("/dev/loop") {
        return Err(HostError::Failed {
            what: "attaching a loop device (losetup)".into(),
            why: format!("it printed '{dev}', not a loop device"),
            log: String::new(),
        });
    }
    stack.loop_device = Some(dev.clone());
    let mut mkfs = Command::new("mkfs.ext4");
    // Inode tables and the journal written now, not by the kernel's lazy
    // initialisation during the measured runs.
    mkfs.args(["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"]).arg(&dev);
    host::run("making ext4 (mkfs.ext4)", mkfs, &out.join("mkfs.log"))?;
    let mut mount = Command::new("mount");
    mount.arg(&dev).arg(stack.fs_dir());
    host::run("mounting ext4", mount, &out.join("mount.log"))?;
    stack.mounted = true;
    Ok(())
}

/// What the results say they are.
fn note(spec: &SysbenchSpec) -> String {
    let slowed = if spec.time_scale > 1.0 { format!(", its clock {}x slower than the wall clock", spec.time_scale) } else { String::new() };
    format!(
        "simulated card{slowed}, real database on this host: MariaDB and sysbench run for real on this machine, on ext4 on a loop device on nbdfuse on the card served over NBD; the reviewers ran MySQL on a dedicated server with the card in a PCIe slot, so host CPU, memory and the kernel's block path differ, and transactions per second here are bound by this host as much as by the card. The card's own figures (IOPS, latency, WA) are its model's [simulated]"
    )
}

/// The card's figures over each window, from its trace.
fn card_windows(trace: &Path, windows: &[Window]) -> Result<Vec<CardWindow>, crate::runs::trace::TraceError> {
    // Per window: its counts, a latency histogram, the latencies' sum
    // and maximum (kept exactly: a histogram rounds its top bucket).
    let mut acc: Vec<(CardWindow, hdrhistogram::Histogram<u64>, u128, u64)> =
        windows.iter().map(|_| (CardWindow::default(), crate::runs::metrics::hist(), 0, 0)).collect();
    capture_for_each(trace, |_, l| {
        let CaptureLine::Request(c) = l else { return Ok(()) };
        let Some(i) = windows.iter().position(|(a, b)| (a.card_ns..b.card_ns).contains(&c.at_ns)) else { return Ok(()) };
        let (w, hist, sum, max) = &mut acc[i];
        match c.op {
            'R' | 'W' if c.error == 0 => {
                let mb = c.len as f64 / 1e6;
                if c.op == 'R' {
                    (w.reads, w.read_mb) = (w.reads + 1, w.read_mb + mb);
                } else {
                    (w.writes, w.write_mb) = (w.writes + 1, w.write_mb + mb);
                }
                hist.saturating_record(c.latency_ns.max(1));
                *sum += c.latency_ns as u128;
                *max = (*max).max(c.latency_ns);
            }
            'F' => w.flushes += 1,
            _ => {}
        }
        Ok(())
    })?;
    Ok(acc
        .into_iter()
        .zip(windows)
        .map(|((mut w, hist, sum, max), (a, b))| {
            w.seconds = (b.card_ns - a.card_ns) as f64 / 1e9;
            let ios = w.reads + w.writes;
            w.iops = if w.seconds > 0.0 { ios as f64 / w.seconds } else { 0.0 };
            if ios > 0 {
                w.latency_avg_us = Some(sum as f64 / ios as f64 / 1e3);
                // The histogram's value is its bucket's top: never above
                // the largest latency.
                w.latency_p99_us = Some(hist.value_at_quantile(0.99).min(max) as f64 / 1e3);
                w.latency_max_us = Some(max as f64 / 1e3);
            }
            let host = b.host_slots_written - a.host_slots_written;
            w.write_amplification = (host > 0).then(|| (b.nand_slots_written - a.nand_slots_written) as f64 / host as f64);
            (w.gc_slots_moved, w.block_erases) = (b.gc_slots_moved - a.gc_slots_moved, b.block_erases - a.block_erases);
            w
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cards_figures_are_its_trace_within_each_window() {
        let d = std::env::temp_dir().join(format!("flashlab-apptest-windows-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let trace = d.join("t.trace");
        let lines = [
            "flashlab trace v1",
            "# card p420m stock scale 1024",
            "500 W 0 4096 0 9000 0",   // before the first window
            "1000 W 0 4096 0 20000 0", // window 0
            "1500 R 0 16384 0 100000 0",
            "1600 F 0 0 0 0 0",
            "1700 R 0 4096 0 0 5",        // an error: not counted
            "2000 R 4096 4096 0 60000 0", // window 1 (its start)
            "2999 W 4096 8192 1 40000 0",
            "3000 W 0 4096 0 1 0", // after the last window
        ];
        std::fs::write(&trace, lines.join("\n")).unwrap();
        let c = |ns, host, nand| CardCounters {
            card_ns: ns,
            host_slots_written: host,
            nand_slots_written: nand,
            gc_slots_moved: nand - host,
            block_erases: ns / 1000,
        };
        let w = card_windows(&trace, &[(c(1000, 10, 10), c(2000, 11, 12)), (c(2000, 11, 12), c(3000, 13, 15))]).unwrap();
        assert_eq!((w[0].reads, w[0].writes, w[0].flushes), (1, 1, 1));
        assert_eq!((w[0].read_mb, w[0].write_mb), (0.016384, 0.004096));
        assert_eq!(w[0].latency_avg_us, Some(60.0));
        assert_eq!((w[0].latency_p99_us, w[0].latency_max_us), (Some(100.0), Some(100.0)));
        assert_eq!((w[0].iops, w[0].write_amplification), (2.0 / 1e-6, Some(2.0)));
        assert_eq!((w[1].reads, w[1].writes, w[1].latency_avg_us, w[1].write_amplification), (1, 1, Some(50.0), Some(1.5)));
        assert_eq!((w[1].gc_slots_moved, w[1].block_erases), (1, 1));
        let empty = card_windows(&trace, &[(c(5000, 1, 1), c(6000, 1, 1))]).unwrap();
        assert_eq!((empty[0].latency_avg_us, empty[0].write_amplification, empty[0].iops), (None, None, 0.0));
        std::fs::remove_dir_all(d).unwrap();
    }
}
