//! A card's endurance: its NAND's rated cycles and bad-block allowance
//! (the profile's `[nand.endurance]`), the card's rated bytes written, and
//! how much of its life a card has used.
//!
//! Blocks wear out as the NAND data sheets describe: a die may hold a few
//! per cent of invalid blocks, some from the factory and more grown in
//! service, and no fewer valid blocks than the data sheet's minimum (NVB)
//! "during the endurance life of the product", i.e. up to the rated
//! program/erase cycles. Each block's endurance is drawn from a Weibull
//! distribution scaled so that the blocks grown bad by the rated cycles
//! take up the rest of that allowance ([`nand::Endurance`]).

use ftl::BadBlocks;
use serde::{Deserialize, Serialize};

/// A profile's `[nand.endurance]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnduranceProfile {
    /// Program/erase cycles the NAND is rated for.
    pub rated_pe_cycles: u32,
    /// The data sheet's minimum share of valid blocks over that life (NVB
    /// over the blocks of a die).
    pub valid_blocks_min: f64,
    /// Share of the bad-block allowance found at the factory; the rest
    /// grows by the rated cycles.
    pub factory_share: f64,
    /// Weibull shape of a block's endurance.
    pub weibull_shape: f64,
    /// Share of the blocks that wear out at a program rather than at an
    /// erase (the page's data is written again, the block retired).
    pub program_fail_share: f64,
    /// The card's rated endurance in petabytes written, where published.
    #[serde(default)]
    pub rated_petabytes_written: Option<f64>,
}

impl EnduranceProfile {
    /// The field that is out of range, its value and the range.
    pub fn check(&self) -> Result<(), (&'static str, String, &'static str)> {
        if !(100..=1_000_000).contains(&self.rated_pe_cycles) {
            return Err(("rated_pe_cycles", self.rated_pe_cycles.to_string(), "100..=1000000 cycles"));
        }
        if !(self.valid_blocks_min > 0.5 && self.valid_blocks_min < 1.0) {
            return Err(("valid_blocks_min", self.valid_blocks_min.to_string(), "a share in (0.5, 1)"));
        }
        if !(self.factory_share >= 0.0 && self.factory_share < 1.0) {
            return Err(("factory_share", self.factory_share.to_string(), "a share in [0, 1)"));
        }
        if !(0.0..=1.0).contains(&self.program_fail_share) {
            return Err(("program_fail_share", self.program_fail_share.to_string(), "a share in [0, 1]"));
        }
        if !(self.weibull_shape >= 0.5 && self.weibull_shape <= 20.0) {
            return Err(("weibull_shape", self.weibull_shape.to_string(), "0.5..=20"));
        }
        if let Some(pb) = self.rated_petabytes_written.filter(|p| !(p.is_finite() && *p > 0.0 && *p < 1e4)) {
            return Err(("rated_petabytes_written", pb.to_string(), "a positive number of petabytes under 10000"));
        }
        Ok(())
    }

    /// The media's bad-block model, each erase standing for
    /// `cycles_per_erase` cycles.
    pub fn model(&self, cycles_per_erase: u32, seed: u64) -> nand::Endurance {
        let allowance = 1.0 - self.valid_blocks_min;
        let grown = allowance * (1.0 - self.factory_share);
        nand::Endurance {
            factory_bad_fraction: allowance * self.factory_share,
            scale_cycles: nand::Endurance::weibull_scale(self.rated_pe_cycles as f64, grown, self.weibull_shape),
            shape: self.weibull_shape,
            cycles_per_erase,
            program_fail_share: self.program_fail_share,
            seed,
        }
    }
}

/// How a card's blocks wear, for a run that ages it: bad blocks from the
/// factory and grown, each erase standing for `cycles_per_erase` cycles
/// (1: real time; more: an accelerated life).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aging {
    pub cycles_per_erase: u32,
    pub seed: u64,
}

/// An old card, as a run or a served card is asked to be: every block has
/// seen `pe_cycles` program/erase cycles before its own erases, and the
/// data on it is `age_days` old (`Device::wear_set`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Age {
    pub pe_cycles: u32,
    pub age_days: f64,
}

/// Retention ages the error models are fitted for (their sources
/// characterise months, not years).
pub const RETENTION_FITTED_DAYS: f64 = 365.0;

/// An age no card reaches.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AgeError {
    #[error("--pe-cycles {0}: must be at most 1000000")]
    Cycles(u32),
    #[error("--age-days {0}: must be in 0..=3650")]
    Days(f64),
}

impl Age {
    pub fn is_new(&self) -> bool {
        self.pe_cycles == 0 && self.age_days == 0.0
    }

    /// Refuses an age no card reaches (named as the options are).
    pub fn check(&self) -> Result<(), AgeError> {
        if self.pe_cycles > 1_000_000 {
            return Err(AgeError::Cycles(self.pe_cycles));
        }
        if !(self.age_days.is_finite() && (0.0..=3650.0).contains(&self.age_days)) {
            return Err(AgeError::Days(self.age_days));
        }
        Ok(())
    }

    /// What the card's error model cannot vouch for at this age.
    pub fn warnings(&self, profile: &crate::Profile) -> Vec<String> {
        let mut w = Vec::new();
        if let (Some(e), Some(_)) = (&profile.nand.endurance, &profile.nand.errors) {
            if self.pe_cycles > e.rated_pe_cycles {
                w.push(format!(
                    "--pe-cycles {} is past the NAND's rating ({} cycles): the bit-error model is a fit to characterisations up to about the rating and only extrapolates beyond it",
                    self.pe_cycles, e.rated_pe_cycles
                ));
            }
        }
        if profile.nand.errors.is_some() && self.age_days > RETENTION_FITTED_DAYS {
            w.push(format!(
                "--age-days {}: the bit-error model's retention term is a power-law fit to months of retention, not to be trusted past {RETENTION_FITTED_DAYS} days",
                self.age_days
            ));
        }
        if !self.is_new() && profile.nand.errors.is_none() {
            w.push(format!("{} has no bit-error model: its reads do not change with age", profile.id));
        }
        w
    }
}

/// A card's health: wear, bad blocks, spare, read-only state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Health {
    /// Program/erase cycles of the blocks: mean, least, most.
    pub pe_cycles_mean: f64,
    pub pe_cycles_min: u32,
    pub pe_cycles_max: u32,
    pub pe_cycles_rated: Option<u32>,
    /// Mean cycles over the rated cycles (1 = the rated life used).
    pub life_used: Option<f64>,
    pub bad_blocks: BadBlocks,
    /// Die blocks of the card.
    pub blocks: u64,
    /// The spare left: the effective over-provisioning
    /// (`Device::effective_op`), the one figure `run` shows too.
    pub spare_share: f64,
    pub read_only: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model takes the data sheet's allowance: the factory's share of
    /// it marked, the rest worn out by the rated cycles.
    #[test]
    fn the_allowance_splits_between_factory_and_wear() {
        let p = EnduranceProfile {
            rated_pe_cycles: 3000,
            valid_blocks_min: 0.96,
            factory_share: 0.5,
            weibull_shape: 2.0,
            program_fail_share: 0.5,
            rated_petabytes_written: None,
        };
        p.check().unwrap();
        let m = p.model(1, 1);
        assert!((m.factory_bad_fraction - 0.02).abs() < 1e-12);
        assert!((m.failed_share(3000.0) - 0.02).abs() < 1e-12);
        let bad = EnduranceProfile { valid_blocks_min: 1.2, ..p };
        assert_eq!(bad.check().unwrap_err().0, "valid_blocks_min");
    }
}
