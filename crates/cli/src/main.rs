//! The `flashlab` command: argument parsing and printing only.

#[macro_use]
mod out;
mod apptest;
mod bench;
mod calibrate;
mod endurance;
mod fit;
mod manage;
mod measured;
mod monitor;
mod replay;
mod review;
mod run;
mod screen;
mod serve;
mod sweep;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "flashlab", version, about = "Simulated enterprise PCIe flash accelerators and the reviewers' test lab", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the built-in device catalog.
    #[command(after_help = "Examples:\n  flashlab devices")]
    Devices,
    /// Run one workload on a simulated device, in virtual time.
    #[command(
        after_help = "Examples:\n  flashlab run p420m --scale 1024 --workload 4k-write --precondition --duration 5\n  flashlab run mx6300 --scale 1024 --workload 'read=70;bs=8k' --threads 8 --qd 16 --precondition --json run.json   # a mix, all measured as JSON\n  flashlab run flashmax2 --format hp --scale 1024 --workload 4k-read --precondition --json - -q   # JSON on standard output"
    )]
    Run(run::RunArgs),
    /// The reviewers' whole procedure on simulated devices: secure erase,
    /// precondition to steady state, main tests, for each device, format
    /// and profile; writes results.json, CSV tables, SVG charts and an HTML
    /// report.
    #[command(
        after_help = "Examples:\n  flashlab review p420m --scale 1024 --profiles 4k --out quick   # one profile, a small card: seconds\n  flashlab review mx6300 --pts --scale 1024 --out pts   # the SNIA PTS 2.0.2: IOPS, throughput and latency tests"
    )]
    Review(review::ReviewArgs),
    /// Build the review report from earlier results files, side by side.
    #[command(after_help = "Examples:\n  flashlab compare quick/results.json pts/results.json --label p420m --label mx6300 --out both")]
    Compare(review::CompareArgs),
    /// Measure the simulator's own speed and memory (a benchmark, not a test).
    #[command(after_help = "Examples:\n  flashlab bench --ios 200000 --repeat 1   # a quick look; the defaults take minutes")]
    Bench(bench::BenchArgs),
    /// Reproduce every figure a profile publishes (reviewers' and vendor's),
    /// each in the conditions it was measured in, and judge it.
    #[command(
        after_help = "Examples:\n  flashlab calibrate p420m --scale 64 --json calibration.json   # half a minute; the default scale 16 is the one judged"
    )]
    Calibrate(calibrate::CalibrateArgs),
    /// Fit a profile's fitted parameters (its `[[fit]]` entries, within
    /// their physical bounds) to published or measured figures; prints
    /// the fitted values, the figures and leave-one-out predictions.
    #[command(
        after_help = "Examples:\n  flashlab fit p420m --figures mine.toml --params controller.program_path_bytes_per_sec --no-cross-validation --json fit.json   # mine.toml: see the README"
    )]
    Fit(fit::FitArgs),
    /// Serve a simulated card holding real data as a block device over NBD
    /// (a Unix socket or TCP), for fio, qemu-img, nbdfuse and filesystems.
    #[command(
        after_help = "Examples:\n  flashlab serve p420m --scale 8192 --store card --unix card.sock   # then: nbdinfo 'nbd+unix:///p420m?socket=card.sock'"
    )]
    Serve(serve::ServeArgs),
    /// Tell a card something through its control socket
    /// (STORE/control.sock, protocol in docs/guide/control.md): `status`,
    /// `stats`, `fail-die CHANNEL.DIE` (or `CHANNEL.*`) fails a die (a
    /// channel) now, `beacon on|off`, `format F [secure-erase] [force]`,
    /// `volumes 1|2 [force]`; the answer a line a field (--json: as
    /// JSON). A card at rest takes all but `stats` and `fail-die`.
    #[command(after_help = "Examples:\n  flashlab control --store card status\n  flashlab control --store card fail-die 3.1 --json   # the answer as JSON")]
    Control(serve::ControlArgs),
    /// A card's status, served or at rest: what it is, volumes and
    /// clients, health against its ratings (life, bytes written, write
    /// amplification, spare, bad blocks), failures and rebuilds, power,
    /// SMART log, alerts.
    #[command(after_help = "Examples:\n  flashlab status --store card\n  flashlab status --store card --json status.json")]
    Status(manage::StatusArgs),
    /// A served card's live figures once a second: IOPS, MB/s, latency
    /// (average, p99, max), GC, write amplification, buffer fill, power,
    /// beacon, health and alerts; a screen on a terminal (q quits), lines
    /// otherwise (or --plain), JSON lines (--json), and Prometheus text
    /// (--metrics ADDR).
    #[command(
        after_help = "Examples:\n  flashlab monitor --store card --count 2 --plain\n  flashlab monitor --store card --count 2 --json seconds.jsonl   # a JSON object a line"
    )]
    Monitor(monitor::MonitorArgs),
    /// Format a card anew (served or at rest): a named format or a
    /// capacity, every byte lost and wear kept; --secure-erase also purges
    /// the media. Refuses without --force and while clients are connected.
    #[command(
        after_help = "Examples:\n  flashlab format --store card --format 1200GB --force\n  flashlab format --store card --format stock --secure-erase --force --json"
    )]
    Format(manage::FormatArgs),
    /// Show a card's volumes, split it into two (--split 2) or merge them
    /// (--merge), served or at rest. Destroys the data: refuses without
    /// --force and while clients are connected.
    #[command(
        after_help = "Examples:\n  flashlab volumes --store card\n  flashlab volumes --store card --split 2 --force\n  flashlab volumes --store card --merge --force"
    )]
    Volumes(manage::VolumesArgs),
    /// Light the card's identify beacon or put it out (served or at rest;
    /// kept in the store, shown by status and monitor).
    #[command(after_help = "Examples:\n  flashlab beacon --store card on\n  flashlab beacon --store card off")]
    Beacon(manage::BeaconArgs),
    /// Age a simulated card at an accelerated pace until it wears out:
    /// its life curve (life used, bad blocks, spare, write amplification,
    /// latency) and the drive writes and petabytes it took, against the
    /// vendor's rating.
    #[command(after_help = "Examples:\n  flashlab endurance p420m --scale 4096 --json life.json")]
    Endurance(endurance::EnduranceArgs),
    /// Replay an I/O trace (a `serve --trace` capture, fio iolog v2/v3,
    /// MSR Cambridge CSV, blkparse text) on a
    /// simulated card in virtual time: at its recorded times or closed
    /// loop at a queue depth; the statistics `run` prints.
    #[command(
        after_help = "Examples:\n  flashlab replay card.trace p420m --scale 8192   # a `serve --trace` capture (the README's tour makes card.trace)\n  flashlab replay card.trace all --scale 4096 --timing closed --qd 32 --chart rank.svg   # every card, as fast as each takes it"
    )]
    Replay(replay::ReplayArgs),
    /// The reviews' application tests on a served card, with a real
    /// database on this host: `sysbench` (SysBench OLTP on MariaDB).
    #[command(after_help = "Examples:\n  flashlab apptest sysbench p420m --threads 4 --duration 10 --table-size 20000 --out sb-quick   # as root")]
    Apptest(apptest::ApptestArgs),
    /// A design-space sweep (a base run and axes: profile numbers by their
    /// path, format, workload, threads, queue depth, seed): `plan`, `run`
    /// (one point, or all on this machine's cores, resuming), `collect`.
    #[command(
        after_help = "Examples:\n  flashlab sweep plan docs/sweeps/flashmax2-op.toml\n  flashlab sweep run docs/sweeps/flashmax2-op.toml --out op --jobs 2\n  flashlab sweep collect op"
    )]
    Sweep(sweep::SweepArgs),
}

fn main() {
    arenas_one_per_core();
    let cli = Cli::parse();
    let r = match cli.command {
        Command::Devices => devices(),
        // Real storage (a --target, no device) is the measured lab's.
        Command::Run(a) if a.device.is_none() => measured::run(&a),
        Command::Run(a) => run::run(a),
        Command::Review(a) if !a.target.is_empty() => measured::review(&a),
        Command::Review(a) => review::review(a),
        Command::Compare(a) => review::compare(a),
        Command::Bench(a) => bench::bench(a),
        Command::Calibrate(a) => calibrate::calibrate(a),
        Command::Fit(a) => fit::fit_command(a),
        Command::Serve(a) => serve::serve(a),
        Command::Control(a) => serve::control(a),
        Command::Status(a) => manage::status(a),
        Command::Monitor(a) => monitor::monitor(a),
        Command::Format(a) => manage::format(a),
        Command::Volumes(a) => manage::volumes(a),
        Command::Beacon(a) => manage::beacon(a),
        Command::Endurance(a) => endurance::endurance(a),
        Command::Replay(a) => replay::replay(a),
        Command::Apptest(a) => apptest::apptest(a),
        Command::Sweep(a) => sweep::sweep(a),
    };
    if let Err(e) = r {
        eprintln!("flashlab: error: {e:#}");
        // A stop asked for ends as a shell reports Ctrl-C.
        let interrupted = matches!(e.downcast_ref::<lab::RunError>(), Some(lab::RunError::Interrupted));
        std::process::exit(if interrupted { 130 } else { 2 });
    }
}

/// glibc gives each thread that allocates an arena of its own, up to eight
/// per core, and keeps in it what the thread freed. A fit's searches and
/// calibration chains run on threads that come and go, each building a
/// card of its own, so freed cards piled up in up to sixteen arenas (the
/// ioDrive2 Duo's fit peaked at 1.64 GB). The simulation's work is spread
/// over the cores, so one arena per core serves it. A user's
/// `MALLOC_ARENA_MAX` is left to rule.
fn arenas_one_per_core() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        let cores = lab::runs::threads::cores().min(i32::MAX as usize) as i32;
        // SAFETY: mallopt only sets an allocator limit; it is called before
        // any other thread exists.
        unsafe { libc::mallopt(libc::M_ARENA_MAX, cores) };
    }
}

fn devices() -> Result<()> {
    let catalog = card::catalog().context("built-in catalog")?;
    outln!("{:<14} {:<36} {:>8} {:>8} {:>6}  {:<10} formats (usable GB)", "id", "name", "raw GB", "dies", "mgmt", "parity");
    for p in catalog {
        let formats: Vec<String> = p.formats.iter().map(|(n, b)| format!("{n} {:.0}", *b as f64 / 1e9)).collect();
        let parity = if p.ftl.stripe_width > 1 { format!("{}+1", p.ftl.stripe_width - 1) } else { "none".into() };
        outln!(
            "{:<14} {:<36} {:>8.0} {:>8} {:>6}  {:<10} {}",
            p.id,
            p.name,
            p.raw_bytes() as f64 / 1e9,
            p.nand.geometry().dies() * p.members,
            format!("{:?}", p.management).to_lowercase(),
            parity,
            formats.join(", ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// Every command and subcommand, by its path (`sweep run`).
    fn commands() -> Vec<(String, clap::Command)> {
        fn walk(c: &clap::Command, at: &str, out: &mut Vec<(String, clap::Command)>) {
            for sub in c.get_subcommands().filter(|s| s.get_name() != "help") {
                let path = format!("{at}{}", sub.get_name());
                out.push((path.clone(), sub.clone()));
                walk(sub, &format!("{path} "), out);
            }
        }
        let mut out = Vec::new();
        walk(&Cli::command(), "", &mut out);
        out
    }

    /// The example lines of a command's help, as a shell reads them
    /// (their `# ...` comments left out).
    fn examples(c: &clap::Command) -> Vec<Vec<String>> {
        let help = c.get_after_help().map(|h| h.to_string()).unwrap_or_default();
        let body = help.strip_prefix("Examples:\n").unwrap_or("");
        body.lines().map(|l| shlex::split(l.split("   #").next().unwrap()).expect("an example a shell can split")).collect()
    }

    /// Every command's help ends with examples of it, each parsed as
    /// written (`scripts/readme-commands.sh` runs them).
    #[test]
    fn every_command_has_examples_that_parse() {
        let all = commands();
        assert!(all.len() > 20, "{} commands", all.len());
        for (path, c) in &all {
            let ex = examples(c);
            assert!(!ex.is_empty(), "`flashlab {path} --help` has no examples");
            for words in ex {
                let named: Vec<&str> = path.split(' ').collect();
                assert_eq!(words[0], "flashlab", "{path}: {words:?}");
                assert_eq!(&words[1..=named.len()], &named[..], "an example of `{path}` that runs another command: {words:?}");
                if let Err(e) = <Cli as clap::Parser>::try_parse_from(&words) {
                    panic!("`{}` does not parse: {e}", words.join(" "));
                }
            }
        }
    }

    /// `--json [FILE]` is one option in every command that has it: the
    /// file optional, `-` (and no file) standard output.
    #[test]
    fn json_is_one_form_everywhere() {
        let mut seen = 0;
        for (path, c) in commands() {
            let Some(a) = c.get_arguments().find(|a| a.get_id() == "json") else { continue };
            seen += 1;
            assert_eq!(a.get_long(), Some("json"), "{path}");
            assert_eq!(a.get_num_args(), Some((0..=1).into()), "`{path} --json` must take an optional FILE");
            // `--json` alone (what else the command needs left out).
            let alone = c.clone().ignore_errors(true).try_get_matches_from([path.as_str(), "--json"]);
            let alone = alone.unwrap_or_else(|e| panic!("`{path} --json`: {e}"));
            assert_eq!(alone.get_one::<std::path::PathBuf>("json").map(|p| p.to_str().unwrap()), Some("-"), "`{path} --json` alone must mean standard output");
            assert_eq!(a.get_value_names().map(|n| n.iter().map(|s| s.as_str()).collect::<Vec<_>>()), Some(vec!["FILE"]), "{path}");
        }
        assert!(seen >= 11, "{seen} commands take --json");
    }
}
