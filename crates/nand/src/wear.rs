//! A member's blocks as the error model sees them: reads since erase, the
//! age of their data, and what each read costs in retries (see `errors`).
//! The card asks it of each page read the FTL issued; the FTL decides
//! what a read beyond ECC becomes (rebuilt from its stripe, or lost).

use crate::errors::{any_of, Codeword, ErrorsProfile, RberTerms, ReadOutcome, FAIL_NEGLIGIBLE};
use serde::{Deserialize, Serialize};
use units::Rng;

/// What the error model counted, over a member's reads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorCounters {
    /// Page reads that needed at least one retry.
    pub reads_retried: u64,
    /// Retries, over all reads.
    pub read_retries: u64,
    /// Page reads beyond ECC after every retry, rebuilt from the stripe.
    pub reads_rebuilt_from_parity: u64,
    /// Page reads beyond ECC with no parity to rebuild them: data lost.
    pub reads_uncorrectable: u64,
    /// Superblocks whose data read reclaim moved.
    #[serde(default)]
    pub superblocks_reclaimed: u64,
    /// Uncorrectable errors drawn at random (not from bit errors): each
    /// failed a page read's ECC, counted above with the others.
    #[serde(default)]
    pub uncorrectable_random: u64,
    /// Simulated host reads of data a second failure in its stripe lost
    /// (each an I/O error to the host).
    #[serde(default)]
    pub reads_lost: u64,
}

impl ErrorCounters {
    /// Adds another member's counts.
    pub fn add(&mut self, other: &ErrorCounters) {
        self.reads_retried += other.reads_retried;
        self.read_retries += other.read_retries;
        self.reads_rebuilt_from_parity += other.reads_rebuilt_from_parity;
        self.reads_uncorrectable += other.reads_uncorrectable;
        self.superblocks_reclaimed += other.superblocks_reclaimed;
        self.uncorrectable_random += other.uncorrectable_random;
        self.reads_lost += other.reads_lost;
    }

    /// What was counted since `base`.
    pub fn since(&self, base: &ErrorCounters) -> ErrorCounters {
        ErrorCounters {
            reads_retried: self.reads_retried - base.reads_retried,
            read_retries: self.read_retries - base.read_retries,
            reads_rebuilt_from_parity: self.reads_rebuilt_from_parity - base.reads_rebuilt_from_parity,
            reads_uncorrectable: self.reads_uncorrectable - base.reads_uncorrectable,
            superblocks_reclaimed: self.superblocks_reclaimed - base.superblocks_reclaimed,
            uncorrectable_random: self.uncorrectable_random - base.uncorrectable_random,
            reads_lost: self.reads_lost - base.reads_lost,
        }
    }
}

/// One (die, block) as the error model sees it, in one 16-byte entry: a
/// read touches one cache line, its block's factor with its counts (host
/// reads land on random blocks: a second array was a second miss).
#[derive(Debug, Clone, Copy)]
#[repr(C, align(16))]
struct Entry {
    /// Reads since erase.
    reads: u32,
    /// The chance one codeword's first read fails, at the top of the
    /// reads' power-of-two bucket; negative: to be computed.
    fail0: f32,
    /// The block's RBER factor (`ErrorsProfile::block_factor`), found at
    /// its first use (NaN before); an erase keeps it.
    factor: f64,
}

const UNSEEN: Entry = Entry { reads: 0, fail0: -1.0, factor: f64::NAN };
const _: () = assert!(std::mem::size_of::<Entry>() == 16, "an entry fills a quarter of a cache line");

/// Reads a block may see: the bound of the disturb term.
const READS_MAX: f64 = u32::MAX as f64;

#[derive(Clone)]
pub struct Wear {
    model: ErrorsProfile,
    codeword: Codeword,
    dies: u32,
    /// By block index, then die (`Wear::entry`): a superblock's entries
    /// lie together, as GC reads its pages one die after another.
    entries: Vec<Entry>,
    /// `RberFit::reads_term` of 2^b reads, the top of bucket b.
    reads_terms: [f64; 33],
    /// `RberFit::terms` by erases since `pe_base`, then whether aged (at
    /// index 2 erases + aged), found at first use.
    terms: Vec<Option<RberTerms>>,
    /// Per block index (a superblock): whether its data is `age_days` old
    /// (written before the card was aged), else fresh.
    aged: Vec<bool>,
    pe_base: u32,
    age_days: f64,
    /// Fixes each block's RBER factor (`ErrorsProfile::block_factor`).
    seed: u64,
    /// No block can reach an error rate its ECC does not correct at
    /// once, however often read, and no random uncorrectable error waits:
    /// reads are not counted (the simulator's path for a young card).
    quiet: bool,
    /// Whether no block could fail a read (ends at the first erase that
    /// could).
    quiet_model: bool,
    /// The fewest erases at which a block could fail a first read at the
    /// card's age (`may_fail`, which grows with the erases, found once
    /// rather than at every erase); `u32::MAX` if none could.
    fail_from_erases: u32,
    /// Random uncorrectable errors waiting for the next page reads.
    ue_pending: u32,
    rng: Rng,
    pub counters: ErrorCounters,
}

impl Wear {
    /// The error state of a member whose most worn block has seen
    /// `erases_max` erases.
    pub fn new(model: ErrorsProfile, codeword_bytes: u32, dies: u32, blocks_per_plane: u32, erases_max: u32, seed: u64) -> Wear {
        let rber = model.rber;
        let mut w = Wear {
            codeword: model.codeword(codeword_bytes),
            model,
            dies,
            entries: units::vec_huge(dies as usize * blocks_per_plane as usize, UNSEEN),
            reads_terms: std::array::from_fn(|b| rber.reads_term((1u64 << b) as f64)),
            terms: Vec::new(),
            aged: vec![false; blocks_per_plane as usize],
            pe_base: 0,
            age_days: 0.0,
            seed,
            quiet: true,
            quiet_model: true,
            fail_from_erases: 0,
            ue_pending: 0,
            rng: Rng::new(seed),
            counters: ErrorCounters::default(),
        };
        w.set(0, 0.0, erases_max, seed);
        w
    }

    /// Cycles every block has seen before this run (added to its erase
    /// count, the largest of which is `erases_max`) and the age of the
    /// data on the card now.
    pub fn set(&mut self, pe_cycles: u32, age_days: f64, erases_max: u32, seed: u64) {
        assert!(age_days.is_finite() && age_days >= 0.0);
        self.rng = Rng::new(seed);
        self.seed = seed;
        self.pe_base = pe_cycles;
        self.age_days = age_days;
        self.aged.fill(age_days > 0.0);
        self.entries.fill(UNSEEN);
        self.terms.clear();
        self.fail_from_erases = self.fail_from();
        self.quiet_model = !self.may_fail(erases_max);
        self.quiet_update();
    }

    /// The fewest erases at which `may_fail` holds (it grows with the
    /// erases: the raw bit error rate rises with the cycles), by bisection.
    fn fail_from(&self) -> u32 {
        let top = u32::MAX - self.pe_base;
        if !self.may_fail(top) {
            return u32::MAX;
        }
        let (mut lo, mut hi) = (0u32, top);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.may_fail(mid) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    }

    /// The fewest erases at which a block could fail a first read at the
    /// card's age (`u32::MAX` if none could).
    pub fn fail_from_erases(&self) -> u32 {
        self.fail_from_erases
    }

    fn quiet_update(&mut self) {
        self.quiet = self.quiet_model && self.ue_pending == 0;
    }

    /// A random uncorrectable error: the next page read fails its ECC.
    pub fn ue_inject(&mut self) {
        self.ue_pending += 1;
        self.quiet_update();
    }

    /// Whether a block of `erases` could fail a first read at the card's
    /// age, read as often as a block can be.
    pub fn may_fail(&self, erases: u32) -> bool {
        self.model.block_factor_max() * self.model.rber.at((self.pe_base + erases) as f64, self.age_days, READS_MAX) >= self.codeword.rber_negligible()
    }

    /// Whether reads can be taken to decode at once without looking.
    #[inline(always)]
    pub fn quiet(&self) -> bool {
        self.quiet
    }

    /// The index of (die, block)'s entry.
    #[inline(always)]
    fn entry(&self, die: u32, block: u32) -> usize {
        debug_assert!(die < self.dies);
        block as usize * self.dies as usize + die as usize
    }

    /// Asks the cache for (die, block)'s entry ahead of the `read` that
    /// will count on it (host reads land on random blocks: the entry is
    /// seldom cached), so that other work overlaps the fetch.
    #[inline(always)]
    pub fn prefetch(&self, die: u32, block: u32) {
        if let Some(e) = self.entries.get(self.entry(die, block)) {
            units::prefetch_read(e);
        }
    }

    /// A block erased (now at `erases`): no reads, fresh data from now on.
    #[inline]
    pub fn erased(&mut self, die: u32, block: u32, erases: u32) {
        self.aged[block as usize] = false;
        debug_assert_eq!(erases >= self.fail_from_erases, self.may_fail(erases), "may_fail grows with the erases");
        if self.quiet_model && erases < self.fail_from_erases {
            return;
        }
        // Blocks erased before start counting from here: while the card
        // was quiet none could fail however often read.
        self.quiet_model = false;
        self.quiet_update();
        let i = self.entry(die, block);
        let e = &mut self.entries[i];
        (e.reads, e.fail0) = (0, -1.0);
    }

    /// A page read of `codewords` from (die, block), whose erase count is
    /// `erases`: how it ended.
    #[inline]
    pub fn read(&mut self, die: u32, block: u32, erases: u32, codewords: u32) -> ReadOutcome {
        if self.quiet {
            return ReadOutcome::Retries(0);
        }
        if self.ue_pending > 0 {
            return self.ue_take();
        }
        let i = self.entry(die, block);
        let e = &mut self.entries[i];
        e.reads = e.reads.saturating_add(1);
        let (r, stale) = (e.reads, e.fail0 < 0.0);
        // The bucket changes as the count reaches a power of two.
        let b = (32 - r.leading_zeros()) as u8;
        if stale || r.is_power_of_two() {
            let (factor, terms) = (self.factor(i, die, block), self.terms_of(block, erases));
            let rber = factor * self.model.rber_at_retry_of(&terms, self.reads_terms[b as usize], 0);
            // A young block's RBER is far below what its ECC cannot
            // correct: the binomial tail is not summed at all.
            self.entries[i].fail0 = if rber < self.codeword.rber_negligible() { 0.0 } else { self.codeword.fail(rber) as f32 };
        }
        if (self.entries[i].fail0 as f64) < FAIL_NEGLIGIBLE {
            return ReadOutcome::Retries(0);
        }
        self.read_slow(i, die, block, erases, b, codewords)
    }

    /// Entry `i`'s (die, block) RBER factor.
    #[inline]
    fn factor(&mut self, i: usize, die: u32, block: u32) -> f64 {
        if self.entries[i].factor.is_nan() {
            self.entries[i].factor = self.model.block_factor(self.seed, die, block);
        }
        self.entries[i].factor
    }

    /// The RBER terms of `block` at `erases`: its cycles, and its data's
    /// age (`age_days` if written before the card was aged, else fresh).
    #[inline]
    fn terms_of(&mut self, block: u32, erases: u32) -> RberTerms {
        let aged = self.aged[block as usize];
        let k = 2 * erases as usize + aged as usize;
        if k >= self.terms.len() {
            self.terms.resize(k + 1, None);
        }
        let (cycles, days) = ((self.pe_base + erases) as f64, if aged { self.age_days } else { 0.0 });
        *self.terms[k].get_or_insert_with(|| self.model.rber.terms(cycles, days))
    }

    #[inline(never)]
    fn read_slow(&mut self, i: usize, die: u32, block: u32, erases: u32, b: u8, codewords: u32) -> ReadOutcome {
        let (factor, terms) = (self.factor(i, die, block), self.terms_of(block, erases));
        for i in 0..=self.model.read_retries_max {
            let cw = self.codeword.fail(factor * self.model.rber_at_retry_of(&terms, self.reads_terms[b as usize], i));
            if self.rng.unit() >= any_of(cw, codewords) {
                if i > 0 {
                    self.counters.reads_retried += 1;
                    self.counters.read_retries += i as u64;
                }
                return ReadOutcome::Retries(i);
            }
        }
        self.counters.reads_retried += 1;
        self.counters.read_retries += self.model.read_retries_max as u64;
        ReadOutcome::BeyondEcc
    }

    /// A waiting random uncorrectable error takes this read: every retry
    /// fails too.
    #[inline(never)]
    fn ue_take(&mut self) -> ReadOutcome {
        self.ue_pending -= 1;
        self.quiet_update();
        self.counters.uncorrectable_random += 1;
        self.counters.reads_retried += 1;
        self.counters.read_retries += self.model.read_retries_max as u64;
        ReadOutcome::BeyondEcc
    }

    pub fn retries_max(&self) -> u32 {
        self.model.read_retries_max
    }

    /// Whether a read that ended so calls for its block's data to be
    /// moved (read reclaim).
    #[inline]
    pub fn reclaims(&self, outcome: ReadOutcome) -> bool {
        let after = self.model.reclaim_after_retries;
        after > 0
            && match outcome {
                ReadOutcome::Retries(k) => k >= after,
                ReadOutcome::BeyondEcc => true,
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errors::RberFit;

    /// Each block's first-read failure chance, found through its cached
    /// factor and terms, is the model's own at the block's state, for
    /// every (die, block), after erases, and after a new seed.
    #[test]
    fn cached_terms_give_the_models_first_read_failure() {
        // SimpleSSD's fit for 2y-nm MLC, blocks spread as the profiles do.
        let rber = RberFit { e: 8.34e-5, a: 3.30e-11, k: 1.71, b: 5.56e-19, m: 2.49, n: 3.33, g: 6.26e-13, p: 1.76, q: 0.47 };
        let model = ErrorsProfile {
            rber,
            ecc_bits: 24,
            read_retries_max: 8,
            retry_retention_left: 0.5,
            uber_rated: None,
            rber_block_sigma: 0.4,
            reclaim_after_retries: 0,
            field_die_failures_per_year: 0.0,
            field_uncorrectable_per_day: 0.0,
        };
        let (dies, blocks, pe, age) = (3u32, 5u32, 3000u32, 90.0);
        let mut w = Wear::new(model.clone(), 1024, dies, blocks, 100, 7);
        let mut summed = 0;
        for seed in [7u64, 8] {
            w.set(pe, age, 100, seed);
            assert!(!w.quiet(), "an old card's reads are looked at");
            // Erasing a block makes its superblock's data fresh on every die.
            w.erased(1, 2, 40);
            w.erased(2, 4, 41);
            let erases = |d: u32, b: u32| match (d, b) {
                (1, 2) => 40,
                (2, 4) => 41,
                _ => 0,
            };
            for r in 1..=9u32 {
                for d in 0..dies {
                    for b in 0..blocks {
                        w.read(d, b, erases(d, b), 4);
                        let days = if b == 2 || b == 4 { 0.0 } else { age };
                        let reads = (1u64 << (32 - r.leading_zeros())) as f64;
                        let at = model.block_factor(seed, d, b) * model.rber_at_retry((pe + erases(d, b)) as f64, days, reads, 0);
                        let want = if at < w.codeword.rber_negligible() { 0.0 } else { w.codeword.fail(at) as f32 };
                        let e = w.entries[w.entry(d, b)];
                        assert_eq!((e.reads, e.fail0), (r, want), "die {d} block {b} read {r} seed {seed}");
                        summed += (want > 0.0) as u32;
                    }
                }
            }
        }
        assert!(summed > 0, "some blocks' binomial tails are summed");
    }
}
