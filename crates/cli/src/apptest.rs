//! `flashlab apptest sysbench`: SysBench OLTP on a MariaDB server of its
//! own, on ext4 on a served card; the console table, JSON and two charts.

use crate::out::{self, JsonSink};
use anyhow::{bail, Context, Result};
use lab::real::apptest::{self, Card, CardCounters, CountersUnread, Step, SysbenchResults, SysbenchSpec};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct ApptestArgs {
    #[command(subcommand)]
    pub test: Apptest,
}

#[derive(clap::Subcommand)]
pub enum Apptest {
    /// SysBench OLTP read/write on MariaDB on a served card: the card
    /// served over NBD (modelled timing, traced), nbdfuse and a loop
    /// device, ext4, a MariaDB server of the test's own; the tables
    /// loaded, then `oltp_read_write` at each thread count. Needs root,
    /// mariadb-server, sysbench, libnbd-bin, fuse3 (Debian's packages).
    #[command(after_help = "Examples:\n  flashlab apptest sysbench p420m --threads 4 --duration 10 --table-size 20000 --out sb-quick   # as root")]
    Sysbench(SysbenchArgs),
}

#[derive(clap::Args)]
pub struct SysbenchArgs {
    /// A catalog device id (see `flashlab devices`) or a profile file.
    pub device: String,
    /// Format (default: the device's default).
    #[arg(long)]
    pub format: Option<String>,
    /// Shrink the card N times (see `run --help`); the card must hold
    /// ext4 and the tables.
    #[arg(long, default_value_t = 1024)]
    pub scale: u32,
    /// Run the card's clock K times slower than the wall clock (`serve
    /// --time-scale`), where this host cannot carry the modelled rate.
    #[arg(long, default_value_t = 1.0)]
    pub time_scale: f64,
    /// Client thread counts, one run each.
    #[arg(long, value_delimiter = ',', default_value = "2,4,8,16,32")]
    pub threads: Vec<u32>,
    /// Tables sysbench loads.
    #[arg(long, default_value_t = 8)]
    pub tables: u32,
    /// Rows a table.
    #[arg(long, default_value_t = 100_000)]
    pub table_size: u64,
    /// Seconds of each run.
    #[arg(long, default_value_t = 60)]
    pub duration: u64,
    /// InnoDB's buffer pool, MiB (smaller than the tables, so that reads
    /// reach the card).
    #[arg(long, default_value_t = 64)]
    pub buffer_pool: u32,
    /// Directory for the card's store, its trace (`sysbench.trace`, for
    /// `flashlab replay`), the logs, `results.json` and the charts; must
    /// not hold a store already.
    #[arg(long, default_value = "apptest-sysbench")]
    pub out: PathBuf,
    /// The results also as JSON: to FILE, or to standard output with `-`
    /// or no FILE.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<PathBuf>,
}

pub fn apptest(a: ApptestArgs) -> Result<()> {
    match a.test {
        Apptest::Sysbench(s) => sysbench(s),
    }
}

fn sysbench(a: SysbenchArgs) -> Result<()> {
    let spec = spec_of(&a)?;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        bail!("apptest needs root: it attaches a loop device and mounts ext4 on the served card");
    }
    let profile = card::profile_load(&a.device).map_err(anyhow::Error::msg)?;
    let format = a.format.clone().unwrap_or_else(|| profile.default_format.clone());
    card::Device::validate(&profile, &format, a.scale)?;
    let device = lab::run::device_info(&profile, &format, a.scale, &card::Device::new(&profile, &format, a.scale)?);
    let store = a.out.join("store");
    if store.exists() {
        bail!("{} holds a card already (an earlier test's): remove it, or choose another --out", store.display());
    }
    lab::outputs::files::out_dir_prepare(&a.out)?;
    let json = a.json.as_deref().map(JsonSink::open).transpose()?;
    let out_dir = std::fs::canonicalize(&a.out).with_context(|| a.out.display().to_string())?;
    let run_dir = std::env::temp_dir().join(format!("flashlab-apptest-{}", std::process::id()));
    let socket = run_dir.join("nbd.sock");
    let trace = out_dir.join("sysbench.trace");
    let mut serve = std::process::Command::new(std::env::current_exe().context("the flashlab binary")?);
    serve.arg("serve").arg(&a.device).args(["--format", &format, "--scale", &a.scale.to_string(), "--time-scale", &a.time_scale.to_string()]);
    serve.arg("--store").arg(out_dir.join("store")).arg("--unix").arg(&socket).arg("--trace").arg(&trace);
    let store = out_dir.join("store");
    let counters = move || card_counters(&store);
    let card = Card { serve, uri: format!("nbd+unix:///{}?socket={}", profile.id, socket.display()), trace: trace.clone(), counters: &counters, device };
    stop_signals_tear_down();
    outln!("flashlab apptest sysbench: {} {} at scale {} [simulated card; MariaDB and sysbench real, on this host]", card.device.name, format, a.scale);
    let r = apptest::sysbench(&spec, card, &out_dir, &run_dir, &mut |s| match s {
        Step::Phase(what) => eprintln!("  {what}"),
        Step::Loaded(l) => eprintln!("  loaded {} tables x {} rows in {:.1} s", spec.tables, spec.table_size, l.wall_seconds),
        Step::Measured(p) => eprintln!(
            "  {:>3} threads: {:.1} TPS, latency {:.2} ms average, {:.2} ms p99",
            p.threads, p.sysbench.tps, p.sysbench.latency_avg_ms, p.sysbench.latency_p99_ms
        ),
    })?;
    print(&r);
    write_files(&r, &out_dir, json)?;
    if let Some(why) = &r.incomplete {
        let left = if r.teardown_problems.is_empty() { "nothing is left mounted or running" } else { "the teardown had problems (above)" };
        out::interrupted_exit(&format!("{why}: the runs above were kept, marked incomplete; {left}"));
    }
    Ok(())
}

fn spec_of(a: &SysbenchArgs) -> Result<SysbenchSpec> {
    if a.threads.is_empty() || a.threads.iter().any(|&t| t == 0 || t > 1024) {
        bail!("--threads {:?}: thread counts are 1 to 1024", a.threads);
    }
    if a.tables == 0 || a.table_size == 0 || a.duration == 0 {
        bail!("--tables, --table-size and --duration must be above 0");
    }
    if !(a.time_scale.is_finite() && (1.0..=1e6).contains(&a.time_scale)) {
        bail!("--time-scale {}: must be in 1..=1000000", a.time_scale);
    }
    if a.buffer_pool < 8 {
        bail!("--buffer-pool {} MiB: MariaDB needs 8 MiB or more", a.buffer_pool);
    }
    Ok(SysbenchSpec {
        threads: a.threads.clone(),
        tables: a.tables,
        table_size: a.table_size,
        seconds: a.duration,
        buffer_pool_mib: a.buffer_pool,
        time_scale: a.time_scale,
    })
}

/// The served card's clock and counters, from its `stats`.
fn card_counters(store: &Path) -> Result<CardCounters, CountersUnread> {
    let v = emu::channel::request(store, r#"{"v": 1, "cmd": "stats"}"#).map_err(|e| CountersUnread(format!("{e:#}")))?;
    let n = |path: &str| v.pointer(path).and_then(|x| x.as_u64()).ok_or_else(|| CountersUnread(format!("the card's stats have no {path}")));
    Ok(CardCounters {
        card_ns: n("/card_ns")?,
        host_slots_written: n("/counters/host_slots_written")?,
        nand_slots_written: n("/counters/nand_slots_programmed")? + n("/counters/nand_parity_slots_programmed")?,
        gc_slots_moved: n("/counters/gc_slots_moved")?,
        block_erases: n("/counters/block_erases")?,
    })
}

/// SIGINT and SIGTERM ask the test to stop; it then takes the stack down
/// in order, however many times they come (never an exit that would
/// leave a mount or a server behind).
fn stop_signals_tear_down() {
    extern "C" fn on_stop(_: libc::c_int) {
        lab::interrupt::ask();
        let msg = b"\nflashlab: stopping: MariaDB, the file system, nbdfuse and the card are being taken down in order (this can take a minute)\n";
        // SAFETY: write(2) is async-signal-safe; the buffer is static.
        unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
    }
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: installs a handler that only touches an atomic and calls
        // async-signal-safe functions.
        unsafe { libc::signal(sig, on_stop as *const () as libc::sighandler_t) };
    }
}

fn print(r: &SysbenchResults) {
    let opt = |v: Option<f64>, p: usize| v.map_or("-".to_string(), |v| format!("{v:.p$}"));
    if let Some(l) = &r.load {
        outln!(
            "load: {} tables x {} rows in {:.1} s; card: {} writes, {:.1} MB, WA {} [simulated]",
            r.spec.tables,
            r.spec.table_size,
            l.wall_seconds,
            l.card.writes,
            l.card.write_mb,
            opt(l.card.write_amplification, 2)
        );
    }
    outln!(
        "{:>7} {:>9} {:>8} {:>8} {:>8} {:>8}  | card [simulated]: {:>8} {:>7} {:>8} {:>8} {:>5} {:>9}",
        "threads",
        "TPS",
        "avg ms",
        "p95 ms",
        "p99 ms",
        "max ms",
        "IOPS",
        "read %",
        "avg us",
        "p99 us",
        "WA",
        "GC moves"
    );
    for p in &r.points {
        let (s, c) = (&p.sysbench, &p.card);
        let ios = c.reads + c.writes;
        let read_share = if ios > 0 { format!("{:.0}", 100.0 * c.reads as f64 / ios as f64) } else { "-".into() };
        outln!(
            "{:>7} {:>9.1} {:>8.2} {:>8.2} {:>8.2} {:>8.2}  |                   {:>8.0} {:>7} {:>8} {:>8} {:>5} {:>9}",
            p.threads,
            s.tps,
            s.latency_avg_ms,
            s.latency_p95_ms,
            s.latency_p99_ms,
            s.latency_max_ms,
            c.iops,
            read_share,
            opt(c.latency_avg_us, 1),
            opt(c.latency_p99_us, 1),
            opt(c.write_amplification, 2),
            c.gc_slots_moved
        );
    }
    for p in &r.teardown_problems {
        eprintln!("flashlab: teardown: {p}");
    }
    outln!("host: {}; {:.0} GB; {}; {}; {}", r.host.cpu, r.host.memory_gb, r.host.kernel, r.host.mariadb, r.host.sysbench);
    outln!("the card's trace: {} (replay it on any card: flashlab replay {} all --format all)", r.trace, r.trace);
}

fn write_files(r: &SysbenchResults, dir: &Path, json: Option<JsonSink>) -> Result<()> {
    let text = serde_json::to_string_pretty(r)? + "\n";
    lab::outputs::files::file_write(&dir.join("results.json"), text.as_bytes())?;
    if !r.points.is_empty() {
        lab::outputs::files::file_write(&dir.join("sysbench-tps.svg"), lab::outputs::sysbench::tps_chart(r).as_bytes())?;
        lab::outputs::files::file_write(&dir.join("sysbench-latency.svg"), lab::outputs::sysbench::latency_chart(r).as_bytes())?;
    }
    eprintln!("results, charts, logs and the card's trace in {}", PathBuf::from(dir).display());
    let store = dir.join("store");
    let bytes = store_bytes(&store);
    if bytes > 0 {
        eprintln!(
            "the card's store, {:.1} GB on disk, is kept in {} (serve it again with `flashlab serve ... --store {}`; `rm -r {}` frees it)",
            bytes as f64 / 1e9,
            store.display(),
            store.display(),
            store.display()
        );
    }
    if let Some(sink) = json {
        sink.write(r, true)?;
    }
    Ok(())
}

/// The bytes a directory's files take on disk (sparse files count what
/// they hold).
fn store_bytes(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::read_dir(dir).into_iter().flatten().flatten().filter_map(|e| e.metadata().ok()).filter(|m| m.is_file()).map(|m| m.blocks() * 512).sum()
}
