//! Raw bit errors, ECC and read retry: what an old card's reads cost.
//!
//! - Raw bit error rate (RBER) of a block as a power law of its program/
//!   erase cycles `c`, its data's retention age `t` (days) and the reads
//!   since its erase `r`: RBER = e + a c^k + b c^m t^n + g c^p r^q (wear,
//!   retention, read disturb), the form and fit the profile gives.
//! - A codeword of `n` bits (user bytes plus the BCH parity, 14 bits a
//!   corrected bit for 1 KiB codewords) fails when more than `t` of its
//!   bits are in error: P[X > t], X ~ Binomial(n, RBER).
//! - A read whose codeword fails is retried with shifted read references,
//!   each retry leaving a share of the retention errors (the shift
//!   follows the charge lost); after the last retry the codeword is
//!   recovered through the stripe's parity where the card has it, else
//!   the read is uncorrectable.
//!
//! Field data (Schroeder, Lagisetty and Merchant, FAST 2016) show RBER does
//! not predict uncorrectable errors; here RBER sets latency (retries) and
//! the analytic uncorrectable rate, which is compared with the vendor's.

use serde::{Deserialize, Serialize};

/// The power-law fit of RBER, with its source in the profile.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RberFit {
    pub e: f64,
    pub a: f64,
    pub k: f64,
    pub b: f64,
    pub m: f64,
    pub n: f64,
    pub g: f64,
    pub p: f64,
    pub q: f64,
}

impl RberFit {
    /// RBER at `cycles`, `days` of retention and `reads` since erase.
    pub fn at(&self, cycles: f64, days: f64, reads: f64) -> f64 {
        self.terms(cycles, days).at(self.reads_term(reads))
    }

    /// The terms a block's cycles and days fix, until its next erase.
    pub fn terms(&self, cycles: f64, days: f64) -> RberTerms {
        let retention = self.retention(cycles, days);
        RberTerms { unread: self.e + self.a * cycles.powf(self.k) + retention, retention, disturb: self.g * cycles.powf(self.p) }
    }

    /// The read-disturb factor of `reads` since erase.
    pub fn reads_term(&self, reads: f64) -> f64 {
        reads.powf(self.q)
    }

    /// The retention term alone (what read retry takes back).
    pub fn retention(&self, cycles: f64, days: f64) -> f64 {
        self.b * cycles.powf(self.m) * days.powf(self.n)
    }
}

/// The RBER terms of one block's cycles and days (`RberFit::terms`): a
/// block's RBER as its reads grow costs a multiply and an add.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RberTerms {
    /// e + a c^k + b c^m t^n: the RBER before any read.
    pub unread: f64,
    /// b c^m t^n: what read retry takes back.
    pub retention: f64,
    /// g c^p: read disturb per `RberFit::reads_term`.
    pub disturb: f64,
}

impl RberTerms {
    /// RBER at a reads term of `reads_term`.
    #[inline]
    pub fn at(&self, reads_term: f64) -> f64 {
        self.unread + self.disturb * reads_term
    }
}

/// Bits of BCH parity per corrected bit over a 1 KiB codeword (GF(2^14)).
const BCH_PARITY_BITS_PER_T: u32 = 14;

/// The error model of one card's NAND and controller.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorsProfile {
    pub rber: RberFit,
    /// Bits the ECC corrects in one codeword.
    pub ecc_bits: u32,
    /// Re-reads with shifted read references before parity is used.
    pub read_retries_max: u32,
    /// Share of the retention errors a retry leaves (0..1).
    pub retry_retention_left: f64,
    /// The vendor's uncorrectable bit error rating (bits in error per bit
    /// read), where published: what the model's UBER is set against.
    #[serde(default)]
    pub uber_rated: Option<f64>,
    /// Blocks differ: each block's RBER is the fit's times a lognormal
    /// factor of mean 1 and this standard deviation of its logarithm
    /// (0: every block at the fit), fixed per block.
    #[serde(default)]
    pub rber_block_sigma: f64,
    /// Read reclaim: a read that needed at least this many retries has
    /// its superblock's data moved (0: never).
    #[serde(default)]
    pub reclaim_after_retries: u32,
    /// Field rates of failures that bit errors do not predict, per member
    /// (one card and its controller): die failures a year, and
    /// uncorrectable errors a day (0: none). Random events on the device's
    /// clock where a run asks for them (`card::faults::RandomFaults`).
    #[serde(default)]
    pub field_die_failures_per_year: f64,
    #[serde(default)]
    pub field_uncorrectable_per_day: f64,
}

/// A block's RBER factor is drawn within this many standard deviations.
pub const BLOCK_Z_MAX: f64 = 6.0;

/// A standard normal draw fixed by `key` (Box-Muller on two hashed
/// uniforms), within +-[`BLOCK_Z_MAX`].
fn normal_of(key: u64) -> f64 {
    // Two draws fixed by the key, the second keyed by the first (`keyed`
    // adds the golden ratio before it mixes: taken off, the second mixes
    // `a ^ 0xd6e8...` itself).
    let a = units::keyed(key);
    let b = units::keyed((a ^ 0xd6e8_feb8_6659_fd93).wrapping_sub(0x9e37_79b9_7f4a_7c15));
    let z = (-2.0 * units::unit_of(a).ln()).sqrt() * (std::f64::consts::TAU * units::unit_of(b)).cos();
    z.clamp(-BLOCK_Z_MAX, BLOCK_Z_MAX)
}

/// `ln(i!)` for `i` in `0..=n`.
fn ln_factorials(n: u32) -> Vec<f64> {
    let mut v = Vec::with_capacity(n as usize + 1);
    let mut acc = 0.0;
    v.push(0.0);
    for i in 1..=n {
        acc += (i as f64).ln();
        v.push(acc);
    }
    v
}

/// P[X > t] for X ~ Binomial(n, p), summed in log space from whichever
/// side is the smaller tail.
pub fn binomial_tail_above(n: u32, t: u32, p: f64) -> f64 {
    tail_above(&ln_factorials(n), t, p)
}

/// [`binomial_tail_above`] with `ln(i!)` for `i` in `0..=n` given.
fn tail_above(lf: &[f64], t: u32, p: f64) -> f64 {
    let n = (lf.len() - 1) as u32;
    if p <= 0.0 || t >= n {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    let (lp, lq) = (p.ln(), (-p).ln_1p());
    let pmf = |i: u32| (lf[n as usize] - lf[i as usize] - lf[(n - i) as usize] + i as f64 * lp + (n - i) as f64 * lq).exp();
    let mean = n as f64 * p;
    if (t as f64) >= mean {
        // The upper tail: terms fall fast past the mean.
        let mut sum = 0.0;
        for i in t + 1..=n {
            let x = pmf(i);
            sum += x;
            if x < sum * 1e-17 {
                break;
            }
        }
        sum.min(1.0)
    } else {
        let head: f64 = (0..=t).map(pmf).sum();
        (1.0 - head).max(0.0)
    }
}

/// One codeword's decoder, for reads on the hot path: its `ln(i!)` table
/// made once, and the RBER below which it fails less than once in 1e15.
#[derive(Debug, Clone)]
pub struct Codeword {
    t: u32,
    ln_fact: Vec<f64>,
    rber_negligible: f64,
}

/// A codeword failing less often than this is taken to decode.
pub const FAIL_NEGLIGIBLE: f64 = 1e-15;

impl Codeword {
    pub fn new(n: u32, t: u32) -> Codeword {
        let ln_fact = ln_factorials(n);
        // The failure chance rises with RBER: bisect, in log space, for
        // the RBER where it reaches FAIL_NEGLIGIBLE.
        let (mut lo, mut hi) = (1e-12f64, 0.5f64);
        for _ in 0..60 {
            let mid = (lo * hi).sqrt();
            if tail_above(&ln_fact, t, mid) < FAIL_NEGLIGIBLE {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Codeword { t, ln_fact, rber_negligible: lo }
    }

    /// The chance the codeword fails to decode at `rber`.
    pub fn fail(&self, rber: f64) -> f64 {
        tail_above(&self.ln_fact, self.t, rber)
    }

    /// Below this RBER the codeword fails less often than
    /// [`FAIL_NEGLIGIBLE`].
    pub fn rber_negligible(&self) -> f64 {
        self.rber_negligible
    }
}

/// The chance at least one of `n` independent events of chance `p` happens
/// (exact for tiny `p`, where `1 - (1 - p)^n` rounds to zero).
pub fn any_of(p: f64, n: u32) -> f64 {
    -(n as f64 * (-p).ln_1p()).exp_m1()
}

/// How a page read ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOutcome {
    /// Decoded after this many retries (0: at the first read).
    Retries(u32),
    /// Every retry failed: recovered through the stripe's parity, or lost.
    BeyondEcc,
}

impl ErrorsProfile {
    /// The lognormal RBER factor at `z` standard deviations (mean 1 over
    /// the blocks).
    pub fn block_factor_at(&self, z: f64) -> f64 {
        let s = self.rber_block_sigma;
        (s * z - s * s / 2.0).exp()
    }

    /// Block `block` of die `die`'s RBER factor, fixed by `seed`.
    pub fn block_factor(&self, seed: u64, die: u32, block: u32) -> f64 {
        if self.rber_block_sigma == 0.0 {
            return 1.0;
        }
        self.block_factor_at(normal_of(seed ^ ((die as u64) << 32 | block as u64).wrapping_mul(0x2545_f491_4f6c_dd1d)))
    }

    /// The largest factor any block can have.
    pub fn block_factor_max(&self) -> f64 {
        self.block_factor_at(BLOCK_Z_MAX)
    }

    /// Bits of one codeword of `codeword_bytes` user bytes with its parity.
    pub fn codeword_bits(&self, codeword_bytes: u32) -> u32 {
        codeword_bytes * 8 + self.ecc_bits * BCH_PARITY_BITS_PER_T
    }

    /// The decoder of a codeword of `codeword_bytes` user bytes.
    pub fn codeword(&self, codeword_bytes: u32) -> Codeword {
        Codeword::new(self.codeword_bits(codeword_bytes), self.ecc_bits)
    }

    /// The chance one codeword fails to decode at `rber`.
    pub fn codeword_fail(&self, codeword_bytes: u32, rber: f64) -> f64 {
        binomial_tail_above(self.codeword_bits(codeword_bytes), self.ecc_bits, rber)
    }

    /// RBER at retry `i` (0: the first read): the retention share left
    /// after `i` shifts of the read references.
    pub fn rber_at_retry(&self, cycles: f64, days: f64, reads: f64, i: u32) -> f64 {
        self.rber_at_retry_of(&self.rber.terms(cycles, days), self.rber.reads_term(reads), i)
    }

    /// `rber_at_retry` from a block's terms and its reads term.
    #[inline]
    pub fn rber_at_retry_of(&self, terms: &RberTerms, reads_term: f64, i: u32) -> f64 {
        let ret = terms.retention;
        terms.at(reads_term) - ret + ret * self.retry_retention_left.powi(i as i32)
    }

    /// The chance each attempt (first read, then each retry) of a read of
    /// `codewords` fails, given the block's state.
    pub fn attempt_fail(&self, codeword_bytes: u32, codewords: u32, cycles: f64, days: f64, reads: f64) -> Vec<f64> {
        (0..=self.read_retries_max)
            .map(|i| {
                let cw = self.codeword_fail(codeword_bytes, self.rber_at_retry(cycles, days, reads, i));
                any_of(cw, codewords)
            })
            .collect()
    }

    /// Analytic uncorrectable bit error rate: the chance a codeword fails
    /// its first read and every retry, per user bit read (attempts taken
    /// as independent), before parity; with `stripe_width` > 1 a second
    /// codeword of the stripe must also fail.
    /// Averaged over the blocks' RBER spread (a normal quadrature in the
    /// log factor).
    pub fn uber(&self, codeword_bytes: u32, stripe_width: u32, cycles: f64, days: f64, reads: f64) -> f64 {
        let at = |f: f64| {
            let m = ErrorsProfile { rber_block_sigma: 0.0, ..self.clone() };
            let lost: f64 = (0..=m.read_retries_max).map(|i| m.codeword_fail(codeword_bytes, f * m.rber_at_retry(cycles, days, reads, i))).product();
            let lost = if stripe_width > 1 { lost * any_of(lost, stripe_width - 1) } else { lost };
            lost / (codeword_bytes as f64 * 8.0)
        };
        if self.rber_block_sigma == 0.0 {
            return at(1.0);
        }
        // Simpson's rule over z in +-BLOCK_Z_MAX, weighted by the normal
        // density.
        const STEPS: usize = 240;
        let h = 2.0 * BLOCK_Z_MAX / STEPS as f64;
        (0..=STEPS)
            .map(|k| {
                let z = -BLOCK_Z_MAX + k as f64 * h;
                let w = if k == 0 || k == STEPS {
                    1.0
                } else if k % 2 == 1 {
                    4.0
                } else {
                    2.0
                };
                w * (-z * z / 2.0).exp() / (std::f64::consts::TAU).sqrt() * at(self.block_factor_at(z))
            })
            .sum::<f64>()
            * h
            / 3.0
    }

    /// Checks the fields' physical ranges: on error the field's name (under
    /// `nand.errors`), its value and the range allowed.
    pub fn check(&self) -> Result<(), (&'static str, String, &'static str)> {
        let r = &self.rber;
        for (name, v) in [("rber.e", r.e), ("rber.a", r.a), ("rber.b", r.b), ("rber.g", r.g)] {
            if !(v.is_finite() && (0.0..0.01).contains(&v)) {
                return Err((name, v.to_string(), "a coefficient in 0..0.01"));
            }
        }
        for (name, v) in [("rber.k", r.k), ("rber.m", r.m), ("rber.n", r.n), ("rber.p", r.p), ("rber.q", r.q)] {
            if !(v.is_finite() && (0.0..=5.0).contains(&v)) {
                return Err((name, v.to_string(), "an exponent in 0..=5"));
            }
        }
        if let Some(u) = self.uber_rated.filter(|u| !(u.is_finite() && *u > 0.0 && *u < 1e-6)) {
            return Err(("uber_rated", u.to_string(), "a rate in (0, 1e-6)"));
        }
        if !(1..=200).contains(&self.ecc_bits) {
            return Err(("ecc_bits", self.ecc_bits.to_string(), "in 1..=200"));
        }
        if self.read_retries_max > 40 {
            return Err(("read_retries_max", self.read_retries_max.to_string(), "at most 40"));
        }
        if !(self.retry_retention_left.is_finite() && (0.0..=1.0).contains(&self.retry_retention_left)) {
            return Err(("retry_retention_left", self.retry_retention_left.to_string(), "a share in 0..=1"));
        }
        if !(self.field_die_failures_per_year.is_finite() && (0.0..=100.0).contains(&self.field_die_failures_per_year)) {
            return Err(("field_die_failures_per_year", self.field_die_failures_per_year.to_string(), "a rate in 0..=100 a year"));
        }
        if !(self.field_uncorrectable_per_day.is_finite() && (0.0..=100.0).contains(&self.field_uncorrectable_per_day)) {
            return Err(("field_uncorrectable_per_day", self.field_uncorrectable_per_day.to_string(), "a rate in 0..=100 a day"));
        }
        if !(self.rber_block_sigma.is_finite() && (0.0..=1.5).contains(&self.rber_block_sigma)) {
            return Err(("rber_block_sigma", self.rber_block_sigma.to_string(), "a standard deviation in 0..=1.5"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SimpleSSD's fit for 2y-nm MLC (src/ftl/read_reclaim/abstract_read_reclaim.cc).
    fn mlc_2y() -> RberFit {
        RberFit { e: 8.34e-5, a: 3.30e-11, k: 1.71, b: 5.56e-19, m: 2.49, n: 3.33, g: 6.26e-13, p: 1.76, q: 0.47 }
    }

    fn model(t: u32) -> ErrorsProfile {
        ErrorsProfile {
            rber: mlc_2y(),
            ecc_bits: t,
            read_retries_max: 8,
            retry_retention_left: 0.5,
            uber_rated: None,
            rber_block_sigma: 0.0,
            reclaim_after_retries: 0,
            field_die_failures_per_year: 0.0,
            field_uncorrectable_per_day: 0.0,
        }
    }

    #[test]
    fn the_fit_gives_its_stated_points() {
        let f = mlc_2y();
        // 3,000 cycles: about 1.1e-4 fresh, about 9e-4 after 90 days.
        let fresh = f.at(3000.0, 0.0, 0.0);
        assert!((1.0e-4..1.2e-4).contains(&fresh), "{fresh}");
        let aged = f.at(3000.0, 90.0, 0.0);
        assert!((8.5e-4..9.5e-4).contains(&aged), "{aged}");
        assert_eq!(f.at(0.0, 0.0, 0.0), f.e);
    }

    #[test]
    fn binomial_tails_match_direct_sums() {
        // Small cases summed term by term in plain arithmetic.
        let direct = |n: u32, t: u32, p: f64| -> f64 {
            let mut c = 1.0f64;
            let mut sum = 0.0;
            for i in 0..=n {
                if i > t {
                    sum += c * p.powi(i as i32) * (1.0 - p).powi((n - i) as i32);
                }
                c = c * (n - i) as f64 / (i + 1) as f64;
            }
            sum
        };
        for (n, t, p) in [(20, 3, 0.1), (50, 10, 0.3), (100, 2, 0.001), (60, 40, 0.5)] {
            let (a, b) = (binomial_tail_above(n, t, p), direct(n, t, p));
            assert!((a - b).abs() <= 1e-12 + b * 1e-9, "n {n} t {t} p {p}: {a} vs {b}");
        }
        assert_eq!(binomial_tail_above(100, 5, 0.0), 0.0);
        let cw = Codeword::new(8528, 24);
        assert_eq!(cw.fail(6e-4), binomial_tail_above(8528, 24, 6e-4));
        let edge = cw.rber_negligible();
        assert!(cw.fail(edge) < FAIL_NEGLIGIBLE && cw.fail(edge * 1.01) >= FAIL_NEGLIGIBLE, "{edge:e}");
        assert_eq!(binomial_tail_above(100, 100, 0.5), 0.0);
    }

    /// The standard sizing of BCH for MLC: for an uncorrectable rate of
    /// 1e-17 a 1 KiB codeword tolerates an RBER of about 1.1e-3 with 40
    /// bits corrected and about 4e-4 with 24.
    #[test]
    fn ecc_strength_sets_the_tolerable_rber() {
        for (t, want) in [(40u32, 1.1e-3), (24, 4e-4)] {
            let m = ErrorsProfile { read_retries_max: 0, ..model(t) };
            let uber = |rber: f64| m.codeword_fail(1024, rber) / 8192.0;
            let (mut lo, mut hi) = (1e-6f64, 1e-2f64);
            for _ in 0..60 {
                let mid = (lo * hi).sqrt();
                if uber(mid) > 1e-17 {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            assert!((lo / want - 1.0).abs() < 0.2, "t = {t}: tolerable RBER {lo:.3e}, expected about {want:.1e}");
        }
    }

    #[test]
    fn retries_take_back_retention_errors_and_parity_lowers_the_uber() {
        let m = model(24);
        let fails = m.attempt_fail(1024, 4, 3000.0, 90.0, 1000.0);
        assert!(fails.windows(2).all(|w| w[1] <= w[0]), "{fails:?}");
        assert!(fails[0] > fails[8] * 10.0, "{fails:?}");
        let once = ErrorsProfile { read_retries_max: 0, ..m.clone() };
        let (alone, striped) = (once.uber(1024, 1, 3000.0, 90.0, 1000.0), once.uber(1024, 8, 3000.0, 90.0, 1000.0));
        assert!(alone > 0.0 && striped < alone * 1e-3, "{alone:e} {striped:e}");
        assert!(m.uber(1024, 1, 3000.0, 90.0, 1000.0) < alone * 1e-6, "retries lower it");
        assert_eq!(m.check(), Ok(()));
        assert_eq!(ErrorsProfile { ecc_bits: 0, ..m.clone() }.check().unwrap_err().0, "ecc_bits");
        assert_eq!(ErrorsProfile { rber_block_sigma: -0.1, ..m.clone() }.check().unwrap_err().0, "rber_block_sigma");
    }

    /// Blocks' factors: mean 1 (the fit is the average block), the spread
    /// asked for, fixed per block and seed, within the stated bound; the
    /// spread raises the UBER (the worst blocks dominate it).
    #[test]
    fn block_factors_spread_around_the_fit() {
        let m = ErrorsProfile { rber_block_sigma: 0.4, ..model(24) };
        let f: Vec<f64> = (0..200_000u32).map(|b| m.block_factor(7, b % 64, b / 64)).collect();
        let mean = f.iter().sum::<f64>() / f.len() as f64;
        let logs: Vec<f64> = f.iter().map(|x| x.ln()).collect();
        let lmean = logs.iter().sum::<f64>() / logs.len() as f64;
        let sd = (logs.iter().map(|l| (l - lmean).powi(2)).sum::<f64>() / logs.len() as f64).sqrt();
        assert!((mean - 1.0).abs() < 0.01, "mean {mean}");
        assert!((sd - 0.4).abs() < 0.01, "sd {sd}");
        assert!(f.iter().all(|&x| x <= m.block_factor_max()));
        assert_eq!(m.block_factor(7, 3, 9), m.block_factor(7, 3, 9));
        assert_ne!(m.block_factor(7, 3, 9), m.block_factor(8, 3, 9));
        assert_eq!(ErrorsProfile { rber_block_sigma: 0.0, ..m.clone() }.block_factor(7, 3, 9), 1.0);
        let flat = ErrorsProfile { rber_block_sigma: 0.0, ..m.clone() };
        let (u0, u1) = (flat.uber(1024, 1, 3000.0, 90.0, 1000.0), m.uber(1024, 1, 3000.0, 90.0, 1000.0));
        assert!(u1 > u0 * 10.0, "{u0:e} {u1:e}");
        // Simpson's rule at sigma 0 of the same integrand gives the flat
        // figure: the quadrature is sound.
        let tiny = ErrorsProfile { rber_block_sigma: 1e-9, ..m.clone() };
        let u = tiny.uber(1024, 1, 3000.0, 90.0, 1000.0);
        assert!((u / u0 - 1.0).abs() < 1e-3, "{u:e} vs {u0:e}");
    }
}
