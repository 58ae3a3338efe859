//! A member's blocks as the error model sees them: reads since erase, the
//! age of their data, and what each read costs in retries (see `errors`).
//! Kept beside the timing model: the FTL knows nothing of bit errors.

use crate::errors::{any_of, ErrorsProfile, ReadOutcome};
use serde::{Deserialize, Serialize};
use sim::Rng;

/// Below this chance a codeword's first read is taken to decode: no draw.
const FAIL_NEGLIGIBLE: f32 = 1e-15;

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
}

impl ErrorCounters {
    /// Adds another member's counts.
    pub fn add(&mut self, other: &ErrorCounters) {
        self.reads_retried += other.reads_retried;
        self.read_retries += other.read_retries;
        self.reads_rebuilt_from_parity += other.reads_rebuilt_from_parity;
        self.reads_uncorrectable += other.reads_uncorrectable;
    }

    /// What was counted since `base`.
    pub fn since(&self, base: &ErrorCounters) -> ErrorCounters {
        ErrorCounters {
            reads_retried: self.reads_retried - base.reads_retried,
            read_retries: self.read_retries - base.read_retries,
            reads_rebuilt_from_parity: self.reads_rebuilt_from_parity - base.reads_rebuilt_from_parity,
            reads_uncorrectable: self.reads_uncorrectable - base.reads_uncorrectable,
        }
    }
}

pub(crate) struct Wear {
    model: ErrorsProfile,
    codeword_bytes: u32,
    blocks_per_plane: u32,
    /// Reads since erase of each (die, block).
    reads: Vec<u32>,
    /// The log2 bucket of reads `fail0` was computed at (`u8::MAX`: to be
    /// computed).
    bucket: Vec<u8>,
    /// The chance one codeword's first read fails, at the top of the bucket.
    fail0: Vec<f32>,
    /// Per block index (a superblock): whether its data is `age_days` old
    /// (written before the card was aged), else fresh.
    aged: Vec<bool>,
    pe_base: u32,
    age_days: f64,
    rng: Rng,
    pub(crate) counters: ErrorCounters,
}

impl Wear {
    pub(crate) fn new(model: ErrorsProfile, codeword_bytes: u32, dies: u32, blocks_per_plane: u32, seed: u64) -> Wear {
        let n = dies as usize * blocks_per_plane as usize;
        Wear {
            model,
            codeword_bytes,
            blocks_per_plane,
            reads: vec![0; n],
            bucket: vec![u8::MAX; n],
            fail0: vec![0.0; n],
            aged: vec![false; blocks_per_plane as usize],
            pe_base: 0,
            age_days: 0.0,
            rng: Rng::new(seed),
            counters: ErrorCounters::default(),
        }
    }

    /// Cycles every block has seen before this run (added to its erase
    /// count) and the age of the data on the card now.
    pub(crate) fn set(&mut self, pe_cycles: u32, age_days: f64, seed: u64) {
        assert!(age_days.is_finite() && age_days >= 0.0);
        self.rng = Rng::new(seed);
        self.pe_base = pe_cycles;
        self.age_days = age_days;
        self.aged.fill(age_days > 0.0);
        self.bucket.fill(u8::MAX);
    }

    /// A block erased: no reads, fresh data from now on.
    #[inline]
    pub(crate) fn erased(&mut self, die: u32, block: u32) {
        let i = (die * self.blocks_per_plane + block) as usize;
        self.reads[i] = 0;
        self.bucket[i] = u8::MAX;
        self.aged[block as usize] = false;
    }

    /// A page read of `codewords` from (die, block), whose erase count is
    /// `erases`: how it ended.
    #[inline]
    pub(crate) fn read(&mut self, die: u32, block: u32, erases: u32, codewords: u32) -> ReadOutcome {
        let i = (die * self.blocks_per_plane + block) as usize;
        let r = self.reads[i].saturating_add(1);
        self.reads[i] = r;
        let b = (32 - r.leading_zeros()) as u8;
        if b != self.bucket[i] {
            self.bucket[i] = b;
            let (c, t, reads) = self.state(block, erases, b);
            self.fail0[i] = self.model.codeword_fail(self.codeword_bytes, self.model.rber_at_retry(c, t, reads, 0)) as f32;
        }
        if self.fail0[i] < FAIL_NEGLIGIBLE {
            return ReadOutcome::Retries(0);
        }
        self.read_slow(block, erases, b, codewords)
    }

    /// (cycles, days, reads) of a block, reads at the top of bucket `b`.
    fn state(&self, block: u32, erases: u32, b: u8) -> (f64, f64, f64) {
        let days = if self.aged[block as usize] { self.age_days } else { 0.0 };
        ((self.pe_base + erases) as f64, days, (1u64 << b) as f64)
    }

    #[inline(never)]
    fn read_slow(&mut self, block: u32, erases: u32, b: u8, codewords: u32) -> ReadOutcome {
        let (c, t, reads) = self.state(block, erases, b);
        for i in 0..=self.model.read_retries_max {
            let cw = self.model.codeword_fail(self.codeword_bytes, self.model.rber_at_retry(c, t, reads, i));
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

    pub(crate) fn retries_max(&self) -> u32 {
        self.model.read_retries_max
    }
}
