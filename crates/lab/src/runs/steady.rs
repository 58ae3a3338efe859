//! Steady-state determination by the SNIA PTS criteria, computed here (fio's
//! own --steadystate bounds each sample, which is not the SNIA rule).
//!
//! Over a measurement window of `WINDOW` rounds of a tracked value y:
//! - data excursion: max(y) - min(y) <= 20% of mean(y);
//! - slope excursion: the least-squares line's rise across the window,
//!   |slope| * (rounds - 1), <= 10% of mean(y).

use serde::{Deserialize, Serialize};

pub const WINDOW: usize = 5;
pub const RANGE_MAX: f64 = 0.20;
pub const SLOPE_EXCURSION_MAX: f64 = 0.10;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyWindow {
    /// Index of the window's first round.
    pub first_round: usize,
    pub mean: f64,
    pub range: f64,
    pub range_allowed: f64,
    pub slope: f64,
    pub intercept: f64,
    pub slope_excursion: f64,
    pub slope_excursion_allowed: f64,
    pub steady: bool,
}

/// Judges the window `y[first..first + WINDOW]`.
pub fn window_judge(y: &[f64], first: usize) -> Option<SteadyWindow> {
    let w = y.get(first..first + WINDOW)?;
    let n = w.len() as f64;
    let mean = w.iter().sum::<f64>() / n;
    let (lo, hi) = w.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let xm = (n - 1.0) / 2.0;
    let sxx: f64 = (0..w.len()).map(|i| (i as f64 - xm).powi(2)).sum();
    let sxy: f64 = w.iter().enumerate().map(|(i, &v)| (i as f64 - xm) * (v - mean)).sum();
    let slope = sxy / sxx;
    let intercept = mean - slope * xm;
    let range = hi - lo;
    let slope_excursion = (slope * (n - 1.0)).abs();
    let range_allowed = RANGE_MAX * mean.abs();
    let slope_excursion_allowed = SLOPE_EXCURSION_MAX * mean.abs();
    let steady = mean > 0.0 && range <= range_allowed && slope_excursion <= slope_excursion_allowed;
    Some(SteadyWindow { first_round: first, mean, range, range_allowed, slope, intercept, slope_excursion, slope_excursion_allowed, steady })
}

/// How fast `y` still moves with `x`: the least-squares slope of y on x,
/// in percent of mean(y) per unit of x (per drive write when x counts
/// drive writes). `None` with fewer than 3 points or no spread in x.
pub fn drift_percent(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len().min(y.len());
    if n < 3 {
        return None;
    }
    let (x, y) = (&x[..n], &y[..n]);
    let xm = x.iter().sum::<f64>() / n as f64;
    let ym = y.iter().sum::<f64>() / n as f64;
    let sxx: f64 = x.iter().map(|v| (v - xm).powi(2)).sum();
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - xm) * (b - ym)).sum();
    (sxx > 0.0 && ym != 0.0).then(|| sxy / sxx / ym * 100.0)
}

/// The latest window, ending at the last round.
pub fn latest(y: &[f64]) -> Option<SteadyWindow> {
    y.len().checked_sub(WINDOW).and_then(|first| window_judge(y, first))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_steady(y: &[f64]) -> Option<usize> {
        (WINDOW..=y.len()).find(|&end| latest(&y[..end]).is_some_and(|w| w.steady)).map(|end| end - WINDOW)
    }

    #[test]
    fn converging_series_becomes_steady_once_settled() {
        // A burst decaying to 100 with time constant 3 rounds.
        let y: Vec<f64> = (0..40).map(|i| 100.0 + 300.0 * (-(i as f64) / 3.0).exp()).collect();
        let first = first_steady(&y).expect("converges");
        // The slope rule holds it back until the decay is under 10% of the mean over the window.
        let w = window_judge(&y, first).unwrap();
        assert!(w.steady && w.slope_excursion <= 0.1 * w.mean);
        assert!((5..=15).contains(&first), "{first}");
        assert!(!window_judge(&y, 0).unwrap().steady);
    }

    #[test]
    fn drifting_series_is_never_steady() {
        // Flat-looking but drifting 3% of its level a round: 12% over a window.
        let y: Vec<f64> = (0..50).map(|i| 100.0 * 1.03f64.powi(i)).collect();
        assert_eq!(first_steady(&y), None);
    }

    #[test]
    fn oscillating_series_judged_by_its_range() {
        // +-8%: range 16% of mean, slope small: steady.
        let y: Vec<f64> = (0..20).map(|i| if i % 2 == 0 { 108.0 } else { 92.0 }).collect();
        assert!(latest(&y).unwrap().steady);
        // +-12%: range 24%: not steady, though the line is flat.
        let y: Vec<f64> = (0..20).map(|i| if i % 2 == 0 { 112.0 } else { 88.0 }).collect();
        let w = latest(&y).unwrap();
        assert!(!w.steady && w.slope_excursion < w.slope_excursion_allowed);
    }

    #[test]
    fn drift_is_the_slope_per_unit_in_percent_of_the_mean() {
        // y = 100 + 10 x over x in 0..=4: mean 120, slope 10: 8.33% per unit.
        let x = [0.0, 1.0, 2.0, 3.0, 4.0];
        let y: Vec<f64> = x.iter().map(|v| 100.0 + 10.0 * v).collect();
        assert!((drift_percent(&x, &y).unwrap() - 10.0 / 120.0 * 100.0).abs() < 1e-9);
        assert_eq!(drift_percent(&x, &[5.0; 5]), Some(0.0));
        assert_eq!(drift_percent(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None);
        assert_eq!(drift_percent(&[1.0, 2.0], &[1.0, 2.0]), None);
    }

    #[test]
    fn never_converging_series_and_short_series() {
        let y: Vec<f64> = (0..30).map(|i| 1000.0 - 30.0 * i as f64).collect();
        assert_eq!(first_steady(&y), None);
        assert!(latest(&y[..4]).is_none());
        assert!(!latest(&[0.0; 5]).unwrap().steady);
    }
}
