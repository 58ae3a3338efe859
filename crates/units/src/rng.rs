//! The run's one PRNG.

use rand::{Rng as _, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The one seeded PRNG of a run (xoshiro256++: fast, and its output is fixed
/// by its definition, so a seed means the same stream on every machine).
#[derive(Debug, Clone)]
pub struct Rng(Xoshiro256PlusPlus);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(Xoshiro256PlusPlus::seed_from_u64(seed))
    }
    /// Uniform in `0..n` (`n > 0`).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        self.0.gen_range(0..n)
    }
    /// Uniform in `[0, 1)`.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        self.0.gen::<f64>()
    }
    /// Uniform in `0..1_000_000`, for shares given in parts per million.
    #[inline]
    pub fn ppm(&mut self) -> u32 {
        self.0.gen_range(0..1_000_000)
    }
}
