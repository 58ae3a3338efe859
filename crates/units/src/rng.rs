//! The run's one PRNG.

use rand::{Rng as _, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A number fixed by `key` alone, spread over all 64 bits (SplitMix64's
/// finaliser): a property of a thing named by the key (a block's erase
/// time, its bit errors' factor) that is the same whatever order it is
/// asked in.
#[inline]
pub fn keyed(key: u64) -> u64 {
    let mut z = key.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `keyed(key)` as a number in (0, 1).
#[inline]
pub fn keyed_unit(key: u64) -> f64 {
    unit_of(keyed(key))
}

/// 64 random bits as a number in (0, 1) (the top 53, centred).
#[inline]
pub fn unit_of(bits: u64) -> f64 {
    ((bits >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

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
