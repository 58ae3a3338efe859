//! Real storage through a real fio: a small file measured round by round.

use lab::real::measure::{run, Job, Target};
use lab::Mix;

/// A 64 MiB file of data beside the build (not in /tmp, which may be a
/// tmpfs without O_DIRECT).
fn file(name: &str) -> std::path::PathBuf {
    let p = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&p, vec![0x5au8; 64 << 20]).unwrap();
    p
}

fn job(path: &std::path::Path, mix: &str, runtime_s: u64) -> Job {
    Job {
        target: Target::Path(path.to_path_buf()),
        mix: Mix::parse(mix).unwrap(),
        threads: 2,
        queue_depth: 4,
        runtime_s,
        round_s: 1,
        ramp_s: 0,
        size_bytes: None,
        io_bytes: None,
    }
}

/// Each second is a round; the rounds add up to fio's own whole-run
/// figures, and every printed figure is consistent (no percentile above
/// the maximum, no round's maximum above the run's).
#[test]
fn a_file_measured_through_fio_gives_rounds_that_add_up_to_fios_figures() {
    let p = file("measure-mixed.dat");
    let m = run(&job(&p, "8k-7030", 4), |_, _| true).unwrap();
    assert!(m.fio.starts_with("fio-"), "{}", m.fio);
    assert!((3..=5).contains(&m.rounds.len()), "{} rounds in 4 s", m.rounds.len());
    let s = &m.summary;
    assert!(s.read.ios > 0 && s.write.ios > 0, "{s:?}");
    let share = s.read.ios as f64 / s.all.ios as f64;
    assert!((share - 0.7).abs() < 0.03, "read share {share}");
    // The rounds' I/Os are fio's, but for a partial last round dropped.
    let counted: f64 = m.rounds.iter().map(|r| r.iops * r.length_s).sum();
    assert!(counted <= s.all.ios as f64 * 1.001 && counted >= s.all.ios as f64 * 0.7, "{counted} of {}", s.all.ios);
    for r in &m.rounds {
        assert!(r.iops > 0.0 && r.latency_avg_ms > 0.0 && r.latency_max_ms >= r.latency_avg_ms, "{r:?}");
        assert!(r.latency_max_ms <= s.all.latency_max_ms, "{r:?}");
    }
    for d in [&s.read, &s.write, &s.all] {
        assert!(d.latency_p50_ms <= d.latency_p99_ms && d.latency_p9999_ms <= d.latency_max_ms, "{d:?}");
    }
    std::fs::remove_file(p).unwrap();
}

/// The caller stops fio as soon as what it waits for holds; what was
/// measured is kept.
#[test]
fn a_run_stops_when_its_caller_says_and_keeps_what_it_measured() {
    let p = file("measure-stop.dat");
    let started = std::time::Instant::now();
    let m = run(&job(&p, "4k-read", 60), |_, rounds| rounds.len() < 2).unwrap();
    assert!(m.stopped_early);
    assert!(started.elapsed().as_secs() < 20, "stopped after {:?}", started.elapsed());
    assert!(m.rounds.len() >= 2 && m.summary.read.ios > 0);
    std::fs::remove_file(p).unwrap();
}

/// A target fio cannot open is fio's error, said.
#[test]
fn a_missing_target_is_an_error_that_names_it() {
    let e = run(&job(std::path::Path::new("/nonexistent/flashlab/target"), "4k-read", 2), |_, _| true).unwrap_err().to_string();
    assert!(e.contains("/nonexistent/flashlab/target") && e.contains("No such file"), "{e}");
}

/// Ramp time is run but not measured: the rounds start after it.
#[test]
fn a_ramp_is_run_but_not_measured() {
    let p = file("measure-ramp.dat");
    let m = run(&Job { ramp_s: 2, ..job(&p, "4k-read", 2) }, |_, _| true).unwrap();
    assert!((1..=3).contains(&m.rounds.len()), "{:?}", m.rounds);
    assert!(m.runtime_s < 2.5, "measured {} s of 2 after a 2 s ramp", m.runtime_s);
    for r in &m.rounds {
        assert!(r.start_s >= 0.0 && r.length_s > 0.5 && r.latency_avg_ms > 0.0, "{r:?}");
    }
    std::fs::remove_file(p).unwrap();
}
