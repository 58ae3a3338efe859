//! The write-amplification oracle the FTL is validated against.

/// Write amplification of greedy (or FIFO) cleaning with very large blocks
/// under uniform random writes, the validation oracle of
/// (Xiang and Kurkoski, "An improved analytic expression for write
/// amplification in NAND flash", 2011): the victim's valid share `u`
/// solves `u = exp(-alpha * (1 - u))` with `alpha = 1 + rho`, and
/// `WA = 1 / (1 - u)`.
pub fn wa_greedy_large_block(rho: f64) -> f64 {
    assert!(rho > 0.0, "over-provisioning must be positive");
    let alpha = 1.0 + rho;
    // Bisection on f(u) = u - exp(-alpha (1 - u)) over (0, 1): f < 0 just
    // below the non-trivial root and > 0 just below u = 1.
    let (mut lo, mut hi) = (0.0f64, 1.0 - 1e-12);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid - (-alpha * (1.0 - mid)).exp() < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    1.0 / (1.0 - lo)
}

#[cfg(test)]
mod tests {
    #[test]
    fn oracle_matches_the_reference_table() {
        // The large-block formula's values at these over-provisionings.
        for (rho, wa) in [(0.07, 7.82), (0.28, 2.48), (0.30, 2.36), (0.38, 2.02), (0.50, 1.72), (0.66, 1.49)] {
            let got = super::wa_greedy_large_block(rho);
            assert!((got - wa).abs() < 0.006, "rho {rho}: {got} vs {wa}");
        }
    }
}
