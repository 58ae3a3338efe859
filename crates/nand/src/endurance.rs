//! Which blocks are bad: marked at the factory, or grown with wear.
//!
//! - **Factory bad blocks**: each die block is marked bad at the factory
//!   with probability `factory_bad_fraction` (the FTL reads the marks when
//!   it formats the card and never uses those blocks).
//! - **Grown bad blocks**: each die block can stand a number of program/
//!   erase cycles drawn from a Weibull distribution. Past that number the
//!   block fails a status check: for a share `program_fail_share` of the
//!   blocks, the program of one page (fixed per block) in the first cycle
//!   past it; for the rest, the erase that takes it past. Either way the
//!   FTL retires the block.
//!   The distribution's scale is set from the share of blocks the part may
//!   lose by its rated cycles (see [`Endurance::weibull_scale`]).
//!
//! Both are fixed per block by the seed (a hash of the seed and the
//! block, not a stream), so every run and every order of erases sees the
//! same bad blocks.

use serde::{Deserialize, Serialize};

/// The bad-block model of one member's NAND.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Endurance {
    /// Share of die blocks marked bad at the factory.
    pub factory_bad_fraction: f64,
    /// Weibull scale and shape of a block's endurance, in cycles.
    pub scale_cycles: f64,
    pub shape: f64,
    /// Cycles each erase ages a block by: 1, or more when a run ages the
    /// card at an accelerated pace (each erase standing for that many).
    pub cycles_per_erase: u32,
    /// Share of blocks that wear out at a program (the rest at an erase).
    pub program_fail_share: f64,
    pub seed: u64,
}

impl Endurance {
    /// The Weibull scale at which a share `failed_share` of blocks has
    /// failed by `rated_cycles`: `F(c) = 1 - exp(-(c/scale)^shape)`.
    pub fn weibull_scale(rated_cycles: f64, failed_share: f64, shape: f64) -> f64 {
        assert!(rated_cycles > 0.0 && failed_share > 0.0 && failed_share < 1.0 && shape > 0.0);
        rated_cycles / (-(1.0 - failed_share).ln()).powf(1.0 / shape)
    }

    /// The share of blocks worn out by `cycles`.
    pub fn failed_share(&self, cycles: f64) -> f64 {
        1.0 - (-(cycles / self.scale_cycles).powf(self.shape)).exp()
    }

    /// Whether die block (`die`, `block`) was marked bad at the factory.
    pub fn factory_bad(&self, die: u32, block: u32) -> bool {
        unit(self.seed, die, block, 1) < self.factory_bad_fraction
    }

    /// The cycles die block (`die`, `block`) stands: an erase that would
    /// age it to this or beyond fails.
    pub fn limit(&self, die: u32, block: u32) -> f64 {
        let u = unit(self.seed, die, block, 2);
        self.scale_cycles * (-(1.0 - u).ln()).powf(1.0 / self.shape)
    }

    /// Whether die block (`die`, `block`) wears out at a program rather
    /// than at an erase.
    pub fn fails_at_program(&self, die: u32, block: u32) -> bool {
        unit(self.seed, die, block, 3) < self.program_fail_share
    }

    /// Whether a block erased `erases` times is past the cycles it stands.
    fn worn(&self, die: u32, block: u32, erases: u32) -> bool {
        erases as f64 * self.cycles_per_erase as f64 >= self.limit(die, block)
    }

    /// Whether the erase that brings a block to `erases` erases fails.
    pub fn erase_fails(&self, die: u32, block: u32, erases: u32) -> bool {
        !self.fails_at_program(die, block) && self.worn(die, block, erases)
    }

    /// The page of a block (of `pages`) whose program fails once the block
    /// is worn: fixed per block, anywhere in it.
    pub fn program_fail_page(&self, die: u32, block: u32, pages: u32) -> u32 {
        ((unit(self.seed, die, block, 4) * pages as f64) as u32).min(pages - 1)
    }

    /// Whether the program of `page` (of `pages`) fails in a block erased
    /// `erases` times: a block that wears out at a program, past its
    /// cycles, at or after its failing page.
    pub fn program_fails(&self, die: u32, block: u32, erases: u32, page: u32, pages: u32) -> bool {
        self.fails_at_program(die, block) && self.worn(die, block, erases) && page >= self.program_fail_page(die, block, pages)
    }
}

/// A uniform number in [0, 1) fixed by (seed, die, block, stream): the
/// SplitMix64 finaliser over their combination.
fn unit(seed: u64, die: u32, block: u32, stream: u64) -> f64 {
    let mut z = seed ^ ((die as u64) << 32 | block as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ stream.wrapping_mul(0xd1b5_4a32_d192_ed03);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> Endurance {
        let scale = Endurance::weibull_scale(3000.0, 0.02, 2.0);
        Endurance { factory_bad_fraction: 0.02, scale_cycles: scale, shape: 2.0, cycles_per_erase: 1, program_fail_share: 0.0, seed: 7 }
    }

    /// The drawn limits follow the distribution: the share of 100,000
    /// blocks worn out by the rated cycles is the share the scale was set
    /// for, and likewise the factory marks.
    #[test]
    fn limits_and_marks_follow_their_shares() {
        let m = model();
        assert!((m.failed_share(3000.0) - 0.02).abs() < 1e-12);
        let n = 100_000u32;
        let worn = (0..n).filter(|&b| m.limit(b % 64, b / 64) <= 3000.0).count() as f64 / n as f64;
        let marked = (0..n).filter(|&b| m.factory_bad(b % 64, b / 64)).count() as f64 / n as f64;
        // Binomial standard deviation at p = 0.02, n = 1e5: 0.00044.
        assert!((worn - 0.02).abs() < 0.0022, "{worn}");
        assert!((marked - 0.02).abs() < 0.0022, "{marked}");
        let median = (0..n).map(|b| m.limit(0, b)).fold(0usize, |k, l| k + (l <= m.scale_cycles * 2f64.ln().sqrt()) as usize) as f64 / n as f64;
        assert!((median - 0.5).abs() < 0.01, "{median}");
    }

    #[test]
    fn an_erase_fails_once_past_the_limit_and_acceleration_counts() {
        let mut m = model();
        let l = m.limit(3, 9);
        let n = l.ceil() as u32;
        assert!(!m.erase_fails(3, 9, n - 1) && m.erase_fails(3, 9, n));
        m.cycles_per_erase = 10;
        assert!(m.erase_fails(3, 9, n.div_ceil(10)) && !m.erase_fails(3, 9, (n - 1) / 10));
    }

    /// Blocks that wear out at a program are the share asked for; such a
    /// block's erases never fail, and its program fails only once worn,
    /// from its failing page on.
    #[test]
    fn a_share_of_blocks_wears_out_at_a_program_instead() {
        let m = Endurance { program_fail_share: 0.3, ..model() };
        let n = 100_000u32;
        let share = (0..n).filter(|&b| m.fails_at_program(b % 64, b / 64)).count() as f64 / n as f64;
        assert!((share - 0.3).abs() < 0.005, "{share}");
        let b = (0..n).find(|&b| m.fails_at_program(0, b)).unwrap();
        let worn = m.limit(0, b).ceil() as u32;
        let page = m.program_fail_page(0, b, 64);
        assert!(page < 64);
        assert!(!m.erase_fails(0, b, worn + 5));
        assert!(!m.program_fails(0, b, worn - 1, 63, 64));
        assert!(m.program_fails(0, b, worn, page, 64) && m.program_fails(0, b, worn, 63, 64));
        assert!(page == 0 || !m.program_fails(0, b, worn, page - 1, 64));
        let e = (0..n).find(|&b| !m.fails_at_program(0, b)).unwrap();
        assert!(!m.program_fails(0, e, 1_000_000, 63, 64) && m.erase_fails(0, e, 1_000_000));
    }
}
