//! `flashlab run --target`: one workload on real storage (a file, a block
//! device, an NBD export) through fio, with the simulated run's
//! preconditioning rules, progress, summary and results file; the
//! figures say "measured".

use crate::out;
use crate::run::RunArgs;
use anyhow::{bail, Context, Result};
use lab::real::measured::{self, MeasuredProgress, MeasuredSpec, Precondition};
use lab::real::target::{write_check, Target, TargetInfo};
use std::time::Instant;

/// Round length on real storage unless `--interval` says otherwise: the
/// reviewers' minute.
const ROUND_S: u64 = 60;

pub fn run(a: &RunArgs) -> Result<()> {
    simulated_only(a)?;
    // Without fio nothing can be measured: said before anything else.
    lab::real::measure::fio_version()?;
    let target = a.target.as_deref().expect("a target without a device");
    let spec = spec_of(a, target)?;
    // Nothing is written to a target that holds data unless it is named
    // twice; a read-only run only reads.
    let writes = spec.workload.read_ppm < 1_000_000 || spec.precondition.is_some();
    let info = Target::parse(target).inspect().map_err(anyhow::Error::msg)?;
    if writes {
        write_check(&info, a.destroy.as_deref()).map_err(anyhow::Error::msg)?;
    }
    let json = a.json.as_deref().map(out::JsonSink::open).transpose()?;
    if !a.quiet {
        eprintln!(
            "flashlab run --target {} --workload {} --threads {} --qd {}: {} ({}{}), through fio",
            out::shell_word(target),
            out::shell_word(&a.workload),
            a.threads,
            a.qd,
            info.kind,
            info.size_bytes.map_or("size unknown".to_string(), |b| format!("{:.1} GB", b as f64 / 1e9)),
            info.model.as_ref().map_or(String::new(), |m| format!(", {m}"))
        );
    }
    let started = Instant::now();
    out::sigint_stops_the_lab();
    let quiet = a.quiet;
    if a.served_store.is_some() && spec.precondition.is_none() {
        bail!("--served-store erases the card before preconditioning: give --precondition too");
    }
    let erase = eraser(&info, a.served_store.as_deref())?;
    let result = measured::run(&spec, &erase, &mut |p: &MeasuredProgress| {
        if !quiet {
            eprintln!(
                "  {:<12} round {:>4} {:>8.0} s of {}{} s {:>10.0} IOPS {:>8.3} ms",
                p.phase,
                p.rounds,
                p.elapsed_s,
                if p.phase == "precondition" && matches!(spec.precondition, Some(Precondition::Steady { .. })) { "<= " } else { "" },
                p.planned_s,
                p.round.iops,
                p.round.latency_avg_ms
            )
        }
    })?;
    if let Some(sink) = json {
        sink.write(&result, a.quiet)?;
    }
    print_measured(&result);
    outln!("\nwall time {:.1} s", started.elapsed().as_secs_f64());
    if let Some(why) = &result.incomplete {
        out::interrupted_exit(&format!("INCOMPLETE: {why}"));
    }
    Ok(())
}

/// A measured run's results: where it ran, then each phase's table.
fn print_measured(result: &lab::RunResult) {
    let m = result.measured.as_ref().expect("a measured run says where it ran");
    outln!(
        "{} ({}{}){}: measured through {} ({}) on {}, {}  [measured]",
        m.target.target,
        m.target.kind,
        m.target.size_bytes.map_or(String::new(), |b| format!(", {:.1} GB", b as f64 / 1e9)),
        m.target.model.as_ref().map_or(String::new(), |s| format!(", {s}")),
        m.fio,
        m.engine,
        m.kernel,
        m.cpu
    );
    if let Some(e) = &m.erased {
        outln!("erase before preconditioning: {e}");
    }
    for p in &result.phases {
        outln!("\n{} — {} at {}T/{}Q: {:.1} s", p.name, p.workload.name, p.threads, p.queue_depth, p.virtual_seconds);
        if p.interrupted {
            outln!("  INTERRUPTED after {} rounds (SIGINT): the figures below are of those rounds; steady state not judged", p.intervals.len());
        } else if let Some(s) = &p.steady_state {
            crate::run::steady_print(s);
        }
        crate::run::stats_table(p);
    }
}

/// `flashlab review --target`: the reviewers' procedure on real storage,
/// the same files as a simulated review.
pub fn review(a: &crate::review::ReviewArgs) -> Result<()> {
    assert!(!a.target.is_empty(), "called with --target");
    let given = [
        ("--scale", a.scale != 1),
        ("--seed", a.seed != 1),
        ("--format", a.format.is_some()),
        ("--jobs", a.jobs.is_some()),
        ("--snia-precondition", a.snia_precondition),
    ];
    if let Some((name, _)) = given.iter().find(|(_, g)| *g) {
        bail!("{name} is for simulated cards; --target reviews real storage as it is");
    }
    lab::real::measure::fio_version()?;
    let round_s = round_of(a.interval)?;
    let precondition = match a.precondition_hours {
        None => Precondition::Steady { min_s: steady_min_s(round_s), cap_s: measured::PRECONDITION_CAP_S },
        Some(h) => Precondition::Fixed { seconds: hours_checked(h, round_s)? },
    };
    for p in &a.profiles {
        lab::job::profile_find(p)?;
    }
    let infos = targets_checked(&a.target, &a.destroy)?;
    if a.served_store.is_some() && infos.len() > 1 {
        bail!("--served-store names one served card: give one --target with it");
    }
    let spec = measured::MeasuredReview {
        targets: a.target.clone(),
        profiles: a.profiles.clone(),
        round_s,
        rounds_4k: a.rounds_4k,
        rounds_matrix: a.rounds_matrix,
        precondition,
    };
    lab::report::out_dir_prepare(&a.out).with_context(|| format!("--out {}", a.out.display()))?;
    if !a.quiet {
        let named: Vec<String> = a.target.iter().map(|t| out::shell_word(t)).collect();
        eprintln!("flashlab review --target {}: {} profile(s), {round_s} s rounds, through fio  [measured]", named.join(" --target "), spec.profiles.len());
    }
    let started = Instant::now();
    out::sigint_stops_the_lab();
    let quiet = a.quiet;
    let erase = eraser(&infos[0], a.served_store.as_deref())?;
    let several = infos.len() > 1;
    let results = measured::review(&spec, &erase, &mut |target, profile, p| {
        if !quiet {
            let on = if several { format!("{target}: ") } else { String::new() };
            eprintln!(
                "  {on}{profile:<10} {:<12} round {:>4} {:>8.0} s of {} s {:>10.0} IOPS {:>8.3} ms",
                p.phase, p.rounds, p.elapsed_s, p.planned_s, p.round.iops, p.round.latency_avg_ms
            );
        }
    })?;
    let written = lab::report::write_all(&results, &a.out, true)?;
    crate::review::summary_print(&results);
    crate::review::written_print(&written);
    outln!("wall time {:.1} s", started.elapsed().as_secs_f64());
    if let Some(why) = &results.incomplete {
        out::interrupted_exit(&format!("INCOMPLETE: {why}{}", crate::review::kept_note(&written, &a.out)));
    }
    Ok(())
}

/// Each target found and checked before any is written: named once, and
/// writable (`write_check`, with the `--destroy` that names it); a
/// `--destroy` that names no target is refused.
fn targets_checked(targets: &[String], destroy: &[String]) -> Result<Vec<TargetInfo>> {
    if let Some(t) = targets.iter().enumerate().find(|(i, t)| targets[..*i].contains(t)).map(|(_, t)| t) {
        bail!("--target {t} is named twice: name each target once");
    }
    if let Some(d) = destroy.iter().find(|d| !targets.contains(d)) {
        bail!("--destroy {d} names no --target (targets: {})", targets.join(", "));
    }
    targets
        .iter()
        .map(|t| {
            let info = Target::parse(t).inspect().map_err(anyhow::Error::msg)?;
            write_check(&info, destroy.iter().find(|d| *d == t).map(String::as_str)).map_err(anyhow::Error::msg)?;
            Ok(info)
        })
        .collect()
}

/// How the target is erased before preconditioning: by the served card's
/// secure erase over its control socket where `--served-store` names it
/// (only for an NBD target), else as the target allows.
fn eraser(info: &TargetInfo, store: Option<&std::path::Path>) -> Result<impl Fn(&Target, &TargetInfo) -> Result<String, measured::EraseFailed>> {
    if store.is_some() && !matches!(Target::parse(&info.target), Target::Nbd(_)) {
        bail!("--served-store is for an NBD target that flashlab serve exports; {} is a {}", info.target, info.kind);
    }
    let store = store.map(std::path::Path::to_path_buf);
    Ok(move |t: &Target, i: &TargetInfo| match &store {
        Some(s) => emu::manage::secure_erase_served(s, i.size_bytes).map_err(|e| measured::EraseFailed(format!("--served-store {}: {e:#}", s.display()))),
        None => measured::erase_default(t, i),
    })
}

/// A round on real storage: whole seconds, 1 to 3600 (default a minute).
fn round_of(interval: Option<f64>) -> Result<u64> {
    match interval {
        None => Ok(ROUND_S),
        Some(i) if i >= 1.0 && i.fract() == 0.0 && i <= 3600.0 => Ok(i as u64),
        Some(i) => bail!("--interval {i}: on real storage a round is a whole number of seconds, 1 to 3600 (fio reports once a round)"),
    }
}

/// Preconditioning hours in seconds, at least a round.
fn hours_checked(hours: f64, round_s: u64) -> Result<u64> {
    if !(hours.is_finite() && hours > 0.0) {
        bail!("--precondition-hours {hours}: must be a positive number of hours");
    }
    let seconds = (hours * 3600.0).round() as u64;
    if seconds < round_s {
        bail!("--precondition-hours {hours}: {seconds} s, shorter than one round ({round_s} s)");
    }
    Ok(seconds)
}

/// The run on a target, from the options.
fn spec_of(a: &RunArgs, target: &str) -> Result<MeasuredSpec> {
    let workload = lab::Mix::parse(&a.workload)?;
    let round_s = round_of(a.interval)?;
    let seconds = match a.duration {
        None => 5 * round_s,
        Some(d) if d >= round_s as f64 && d.fract() == 0.0 => d as u64,
        Some(d) => bail!("--duration {d}: on real storage, whole seconds, at least one round ({round_s} s)"),
    };
    let precondition = match (a.precondition, a.precondition_hours.as_deref()) {
        (false, _) => None,
        (true, None) => Some(Precondition::Steady { min_s: steady_min_s(round_s), cap_s: measured::PRECONDITION_CAP_S }),
        (true, Some("reviewers")) => {
            bail!("--precondition-hours reviewers: real storage has no profile to state them; give a number of hours (the reviewers ran 6 or 12)")
        }
        (true, Some(h)) => {
            let hours: f64 = h.parse().ok().with_context(|| format!("--precondition-hours '{h}': must be a positive number of hours"))?;
            Some(Precondition::Fixed { seconds: hours_checked(hours, round_s)? })
        }
    };
    if a.threads == 0 || a.qd == 0 {
        bail!("--threads and --qd: at least 1");
    }
    Ok(MeasuredSpec { target: target.to_string(), workload, threads: a.threads, queue_depth: a.qd, seconds, round_s, precondition })
}

/// At least a SNIA window of rounds before steady state may be declared.
fn steady_min_s(round_s: u64) -> u64 {
    lab::steady::WINDOW as u64 * round_s
}

/// Options that only a simulated card has are refused by name.
fn simulated_only(a: &RunArgs) -> Result<()> {
    let given = [
        ("--scale", a.scale != 1),
        ("--seed", a.seed != 1),
        ("--format", a.format.is_some()),
        ("--ios", a.ios.is_some()),
        ("--pe-cycles", a.pe_cycles != 0),
        ("--age-days", a.age_days != 0.0),
        ("--fail-die", !a.fail_die.is_empty()),
        ("--rebuild-rate", a.rebuild_rate.is_some()),
        ("--random-faults", a.random_faults.is_some()),
    ];
    if let Some((name, _)) = given.iter().find(|(_, g)| *g) {
        bail!("{name} is for a simulated card; --target runs real storage as it is");
    }
    Ok(())
}
