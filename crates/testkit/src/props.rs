//! How the property tests draw their cases.
//!
//! The suite (and CI) draws the same cases every run, from a fixed seed:
//! a failure replays exactly, and a change is judged on the cases the
//! change before it passed, not on a fresh draw. Finding new cases is a
//! soak of its own: `FLASHLAB_SOAK=N` draws N cases from a random seed
//! (a failing case's seed is saved to the test's `.proptest-regressions`
//! file, which the suite replays from then on). proptest's own
//! `PROPTEST_CASES` and `PROPTEST_RNG_SEED` still apply.

use proptest::test_runner::{Config, RngSeed};

/// The suite's seed for every property test.
pub const SEED: u64 = 0x5eed_f1a5;

/// `cases` cases from [`SEED`], unless the environment asks otherwise.
pub fn config(cases: u32) -> Config {
    // `default` reads PROPTEST_CASES and PROPTEST_RNG_SEED.
    let mut c = Config::default();
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    if env("PROPTEST_CASES").is_none() {
        c.cases = cases;
    }
    if env("PROPTEST_RNG_SEED").is_none() {
        c.rng_seed = RngSeed::Fixed(SEED);
    }
    if let Some(n) = env("FLASHLAB_SOAK") {
        c.cases = n.parse().unwrap_or_else(|_| panic!("FLASHLAB_SOAK={n}: a number of cases"));
        c.rng_seed = RngSeed::Random;
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The suite's draw is fixed: two configurations agree on the seed.
    #[test]
    fn the_suite_draws_from_the_fixed_seed() {
        if std::env::var_os("FLASHLAB_SOAK").is_some() || std::env::var_os("PROPTEST_RNG_SEED").is_some() {
            return;
        }
        assert_eq!(config(7).rng_seed, RngSeed::Fixed(SEED));
    }
}
