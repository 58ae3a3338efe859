//! A fit recovers known parameters: figures simulated with the P420m's
//! program path and read command rate changed to known values are given
//! to a fit that starts from the catalog's values, and it finds the known
//! ones again (within 3%), deterministically; leave-one-out predicts each
//! figure from the other, reusing the calibrations the fit ran.

use card::{Bound, By, FitParam, Metric, Published, State};
use lab::procedures::fit::{fit, FitSpec};

fn figure(what: &str, workload: &str, state: State, value: f64) -> Published {
    Published {
        by: By::Reviewer,
        source: "simulated with known parameters".into(),
        what: what.into(),
        format: None,
        workload: workload.into(),
        threads: 16,
        qd: 16,
        state,
        metric: Metric::Iops,
        value,
        range: None,
        bound: Bound::About,
        conflict: None,
        gap: None,
        host: None,
    }
}

#[test]
fn a_fit_recovers_the_parameters_its_figures_were_simulated_with() {
    let mut profile = card::profile_load("p420m").unwrap();
    // The test's own parameters and bounds, wider than the profile's.
    profile.fit.clear();
    let params = vec![
        FitParam { path: "controller.program_path_bytes_per_sec".into(), min: 2e8, max: 3e9, why: "test".into() },
        FitParam { path: "controller.read_commands_per_sec".into(), min: 1e5, max: 3e6, why: "test".into() },
    ];
    let truth = [520e6, 450_000.0];
    let known = profile.with_number(&params[0].path, truth[0]).unwrap().with_number(&params[1].path, truth[1]).unwrap();
    // The figures the known card gives.
    let mut spec = FitSpec {
        params: params.clone(),
        figures: vec![figure("4K write, burst", "4k-write", State::Fresh, 1.0), figure("4K read, filled", "4k-read", State::Filled, 1.0)],
        scale: 256,
        seed: 1,
        evals_max: 60,
        leave_one_out: true,
    };
    let mut probe = known.clone();
    probe.published = spec.figures.clone();
    let c = lab::procedures::calibrate::calibrate(&probe, "stock", 256, 1, 5, &mut |_| {}).unwrap();
    for (f, ch) in spec.figures.iter_mut().zip(&c.checks) {
        f.value = ch.simulated;
    }
    let (fitted, result) = fit(&profile, &spec, &|_| {}).unwrap();
    for (p, &t) in params.iter().zip(&truth) {
        let got = fitted.number(&p.path).unwrap();
        assert!((got / t - 1.0).abs() < 0.03, "{}: fitted {got}, simulated with {t} ({result:?})", p.path);
    }
    assert!(result.checks.iter().all(|c| c.error_percent.abs() < 2.0), "{:?}", result.checks);
    assert_eq!(result.leave_one_out.len(), 2);
    // The leave-one-out searches start where the fit did: their first
    // points are the fit's, calibrated once.
    assert!(result.reused > 0, "no point reused: {result:?}");
    // Deterministic: the same fit again gives the same values.
    let (_, again) = fit(&profile, &FitSpec { leave_one_out: false, ..spec.clone() }, &|_| {}).unwrap();
    assert_eq!(again.values, result.values);
    // One search asks for at most its `evals_max` points, each two
    // chains (the fresh card and the filled one); the rest of what it ran
    // was tried ahead.
    assert!(again.evals - again.unasked <= 2 * spec.evals_max, "{again:?}");
}

/// The P420m with no fit of its own and a second format, "op", for a
/// fit over two formats with `params` (each with the test's bounds).
fn p420m_with_op(params: &[(&str, f64, f64)]) -> (card::Profile, Vec<FitParam>) {
    let mut profile = card::profile_load("p420m").unwrap();
    profile.fit.clear();
    profile.formats.insert("op".into(), 1_200_000_000_000);
    (profile, params.iter().map(|&(path, min, max)| FitParam { path: path.into(), min, max, why: "test".into() }).collect())
}

/// Figures of two formats are fitted with one parameter set, each format
/// calibrated on its own card, in the spec's order; a format's capacity
/// acts on that format only, so moving it runs no other format's
/// calibration again.
#[test]
fn a_fit_spans_formats_and_a_capacity_moves_only_its_own() {
    let (profile, params) = p420m_with_op(&[("controller.program_path_bytes_per_sec", 2e8, 3e9), ("formats.op", 1.0e12, 1.4e12)]);
    let op = Published { format: Some("op".into()), ..figure("4K write, burst, op", "4k-write", State::Fresh, 150_000.0) };
    let figures = vec![op, figure("4K write, burst", "4k-write", State::Fresh, 150_000.0)];
    let spec = FitSpec { params, figures: figures.clone(), scale: 64, seed: 1, evals_max: 8, leave_one_out: false };
    let (_, r) = fit(&profile, &spec, &|_| {}).unwrap();
    let whats: Vec<&str> = r.checks.iter().map(|c| c.what.as_str()).collect();
    assert_eq!(whats, ["4K write, burst, op", "4K write, burst"]);
    let by: Vec<(&str, u32)> = r.evals_by_format.iter().map(|(f, n)| (f.as_str(), *n)).collect();
    assert_eq!(by.iter().map(|(f, _)| *f).collect::<Vec<_>>(), ["op", "stock"]);
    assert!(by[1].1 < by[0].1, "the capacity's moves reran the stock card: {by:?}");
    assert_eq!(r.evals, by[0].1 + by[1].1);
}

/// The read command rate times host reads alone: a format whose figures
/// are writes alone is not calibrated again when it moves (the write
/// figure's calibrations are those of the program path's moves), and the
/// fit is the same as one that calibrates every format at every point.
#[test]
fn a_write_only_format_is_not_calibrated_again_for_the_read_command_rate() {
    let (profile, params) = p420m_with_op(&[("controller.read_commands_per_sec", 1e5, 3e6), ("controller.program_path_bytes_per_sec", 2e8, 3e9)]);
    let read = Published { format: Some("op".into()), ..figure("4K read, filled, op", "4k-read", State::Filled, 700_000.0) };
    let figures = vec![read, figure("4K write, burst", "4k-write", State::Fresh, 150_000.0)];
    let spec = FitSpec { params, figures, scale: 64, seed: 1, evals_max: 8, leave_one_out: false };
    let (_, r) = fit(&profile, &spec, &|_| {}).unwrap();
    let by: Vec<(&str, u32)> = r.evals_by_format.iter().map(|(f, n)| (f.as_str(), *n)).collect();
    assert_eq!(by.iter().map(|(f, _)| *f).collect::<Vec<_>>(), ["op", "stock"]);
    assert!(by[1].1 < by[0].1, "the read command rate's moves reran the write-only card: {by:?}");
    // The write figure at the fitted values is what a calibration of them
    // gives.
    let fitted = profile.with_number(&spec.params[0].path, r.values[0].2).unwrap().with_number(&spec.params[1].path, r.values[1].2).unwrap();
    let mut probe = fitted;
    probe.published = vec![spec.figures[1].clone()];
    let c = lab::procedures::calibrate::calibrate(&probe, "stock", 64, 1, 5, &mut |_| {}).unwrap();
    assert_eq!(c.checks[0].simulated, r.checks[1].simulated);
}

/// A card kept after a steady chain's write-only part (preconditioning
/// and the 4K write) and given another read command rate is, to the bit,
/// the card a calibration at that rate builds: the calibration from it
/// equals one from a secure erase, and the rate did move the read.
#[test]
fn a_card_kept_after_its_writes_calibrates_as_a_fresh_one() {
    use lab::procedures::calibrate::{calibrate, calibrate_keeping};
    use lab::procedures::prefixes::Prefixes;
    let mut profile = card::profile_load("p420m").unwrap();
    profile.published = vec![figure("4K write, steady", "4k-write", State::Steady, 99_000.0), figure("4K read, steady", "4k-read", State::Steady, 587_000.0)];
    let rate = "controller.read_commands_per_sec";
    let slower = profile.with_number(rate, profile.number(rate).unwrap() / 2.0).unwrap();
    let kept = Prefixes::new(1);
    let first = calibrate_keeping(&profile, "stock", 256, 1, 5, Some(&kept), &mut |_| {}).unwrap();
    assert_eq!(kept.reused(), 0);
    let from_kept = calibrate_keeping(&slower, "stock", 256, 1, 5, Some(&kept), &mut |_| {}).unwrap();
    assert_eq!(kept.reused(), 1, "the second calibration started from the kept card");
    let from_erase = calibrate(&slower, "stock", 256, 1, 5, &mut |_| {}).unwrap();
    assert_eq!(from_kept, from_erase);
    assert_eq!(first.checks[0].simulated, from_kept.checks[0].simulated, "the 4K write is the kept card's");
    assert!(from_kept.checks[1].simulated < first.checks[1].simulated * 0.9, "{} against {}", from_kept.checks[1].simulated, first.checks[1].simulated);
    // Any other number builds another card.
    let gc = profile.with_number("ftl.gc_ns_per_slot", profile.number("ftl.gc_ns_per_slot").unwrap() * 1.1).unwrap();
    let _ = calibrate_keeping(&gc, "stock", 256, 1, 5, Some(&kept), &mut |_| {}).unwrap();
    assert_eq!(kept.reused(), 1);
}
