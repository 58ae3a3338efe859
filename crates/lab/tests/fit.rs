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
        format: "stock".into(),
        scale: 64,
        seed: 1,
        evals_max: 60,
        leave_one_out: true,
    };
    let mut probe = known.clone();
    probe.published = spec.figures.clone();
    let c = lab::procedures::calibrate::calibrate(&probe, "stock", 64, 1, 5, &mut |_| {}).unwrap();
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
}
