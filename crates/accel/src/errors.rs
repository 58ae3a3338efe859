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
        self.e + self.a * cycles.powf(self.k) + self.retention(cycles, days) + self.g * cycles.powf(self.p) * reads.powf(self.q)
    }

    /// The retention term alone (what read retry takes back).
    pub fn retention(&self, cycles: f64, days: f64) -> f64 {
        self.b * cycles.powf(self.m) * days.powf(self.n)
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
        let ret = self.rber.retention(cycles, days);
        self.rber.at(cycles, days, reads) - ret + ret * self.retry_retention_left.powi(i as i32)
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
    pub fn uber(&self, codeword_bytes: u32, stripe_width: u32, cycles: f64, days: f64, reads: f64) -> f64 {
        let lost: f64 = self.attempt_fail(codeword_bytes, 1, cycles, days, reads).iter().product();
        let lost = if stripe_width > 1 { lost * any_of(lost, stripe_width - 1) } else { lost };
        lost / (codeword_bytes as f64 * 8.0)
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
        ErrorsProfile { rber: mlc_2y(), ecc_bits: t, read_retries_max: 8, retry_retention_left: 0.5, uber_rated: None }
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
    }
}
