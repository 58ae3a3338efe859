use serde::{Deserialize, Serialize};
use units::{Ns, SLOT_BYTES};

/// Cell technology. It sets nothing by itself (timings are explicit in each
/// profile) but is reported and checked against the timings' plausibility.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CellType {
    Slc,
    Mlc,
    Emlc,
    Tlc,
}

/// The physical organisation of one member device's NAND.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Geometry {
    pub channels: u32,
    pub dies_per_channel: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    pub page_size_bytes: u32,
    pub oob_bytes: u32,
}

/// Array timings of one die, from the NAND datasheet, and the channel bus.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timings {
    /// tR: array to page register, one (multi-plane) page.
    pub read_ns: Ns,
    /// tPROG: page register to array, one (multi-plane) page: the mean
    /// over a block's pages (a datasheet's typical).
    pub program_ns: Ns,
    /// tPROG of an MLC upper (MSB) page, where the NAND's two pages of a
    /// word line program at different speeds: the upper page, which must
    /// place four levels, takes longer, the lower page `2 x program_ns -
    /// this`, so that `program_ns` stays the mean. Pages alternate, lower
    /// first. Absent: every page takes `program_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper_page_program_ns: Option<Ns>,
    /// tBERS: one (multi-plane) block erase, the datasheet's typical.
    pub erase_ns: Ns,
    /// tBERS's datasheet maximum. A block is erased by pulses of rising
    /// voltage, each followed by a verify, until every cell reads erased
    /// (incremental step pulse erase); a block whose cells erase slowly
    /// takes more loops, up to the most the chip allows, and blocks differ.
    /// `erase_slow_share` of the blocks take from `erase_ns` up to this
    /// (uniformly), the rest `erase_ns` (`erase_ns_of`). Absent: every
    /// erase takes `erase_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erase_max_ns: Option<Ns>,
    /// The share of blocks that erase slowly (with `erase_max_ns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erase_slow_share: Option<f64>,
    /// Channel bus rate (ONFI/Toggle), bytes per second, shared by the dies
    /// of one channel.
    pub channel_bytes_per_sec: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GeometryError {
    #[error("{field} = {value}: must be in {range}")]
    Field { field: &'static str, value: u64, range: String },
    #[error("geometry: {0}")]
    Inconsistent(String),
    /// A timing that breaks a rule of its own, the field named first.
    #[error("{0}")]
    Timing(String),
}

impl Geometry {
    pub fn dies(&self) -> u32 {
        self.channels * self.dies_per_channel
    }
    /// Bytes of one multi-plane page.
    pub fn mpage_bytes(&self) -> u64 {
        self.page_size_bytes as u64 * self.planes_per_die as u64
    }
    /// 4 KiB mapping slots in one multi-plane page.
    pub fn slots_per_mpage(&self) -> u32 {
        (self.mpage_bytes() / SLOT_BYTES) as u32
    }
    pub fn raw_bytes(&self) -> u64 {
        self.mpage_bytes() * self.pages_per_block as u64 * self.blocks_per_plane as u64 * self.dies() as u64
    }
    /// The channel a die sits on: dies are numbered channel-minor, so that
    /// consecutive dies of a stripe sit on different channels.
    #[inline]
    pub fn channel_of(&self, die: u32) -> u32 {
        die % self.channels
    }

    /// Checks every field against its physical range, naming the first that is off.
    pub fn validate(&self) -> Result<(), GeometryError> {
        let f = |field, value: u32, lo: u32, hi: u32, range: &str| {
            if value < lo || value > hi {
                Err(GeometryError::Field { field, value: value as u64, range: range.to_string() })
            } else {
                Ok(())
            }
        };
        f("geometry.channels", self.channels, 1, 1024, "1..=1024")?;
        f("geometry.dies_per_channel", self.dies_per_channel, 1, 256, "1..=256")?;
        f("geometry.planes_per_die", self.planes_per_die, 1, 16, "1..=16")?;
        f("geometry.blocks_per_plane", self.blocks_per_plane, 1, 1 << 20, "1..=1048576")?;
        f("geometry.pages_per_block", self.pages_per_block, 1, 65535, "1..=65535")?;
        f("geometry.page_size_bytes", self.page_size_bytes, 512, 1 << 20, "512..=1048576")?;
        // Each 4 KiB slot a page holds keeps its record (LBA, sequence
        // number) in the page's out-of-band area.
        let oob_min = self.page_size_bytes.div_ceil(SLOT_BYTES as u32) * crate::OOB_BYTES as u32;
        let oob_range = format!("{oob_min}..=65536 (a {}-byte page's slots' out-of-band records, {} bytes each)", self.page_size_bytes, crate::OOB_BYTES);
        f("geometry.oob_bytes", self.oob_bytes, oob_min, 1 << 16, &oob_range)?;
        if !self.mpage_bytes().is_multiple_of(SLOT_BYTES) {
            return Err(GeometryError::Inconsistent(format!(
                "a multi-plane page ({} planes x {} B) must hold a whole number of 4 KiB slots",
                self.planes_per_die, self.page_size_bytes
            )));
        }
        if self.slots_per_mpage() > 32 {
            return Err(GeometryError::Inconsistent(format!(
                "a multi-plane page ({} planes x {} B) holds {} slots; at most 32 (128 KiB) are supported",
                self.planes_per_die,
                self.page_size_bytes,
                self.slots_per_mpage()
            )));
        }
        let slots = self.raw_bytes() / SLOT_BYTES;
        if slots >= u32::MAX as u64 - 2 {
            return Err(GeometryError::Inconsistent(format!(
                "raw capacity {} bytes is {} slots; one member device is limited to {} 4 KiB slots (16 TiB)",
                self.raw_bytes(),
                slots,
                u32::MAX - 3
            )));
        }
        Ok(())
    }
}

/// How long the blocks of a die take to erase: `slow_share` of them from
/// `typical` up to `typical + extra_max` (uniformly), the rest `typical`.
/// A block's time is fixed by its key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EraseSpread {
    typical: Ns,
    extra_max: Ns,
    slow_share: f64,
}

impl EraseSpread {
    /// tBERS of the block that `key` names.
    #[inline]
    pub fn of(&self, key: u64) -> Ns {
        if self.extra_max == 0 {
            return self.typical;
        }
        let u = units::keyed_unit(key);
        if u >= self.slow_share {
            return self.typical;
        }
        self.typical + (self.extra_max as f64 * (u / self.slow_share)) as Ns
    }
}

impl Timings {
    /// tBERS of the block that `key` names (a die's block: fixed for it,
    /// whatever the order of the erases).
    pub fn erase_ns_of(&self, key: u64) -> Ns {
        self.erase_spread().of(key)
    }

    /// The blocks' erase times, to draw from (`EraseSpread::of`).
    pub fn erase_spread(&self) -> EraseSpread {
        match (self.erase_max_ns, self.erase_slow_share) {
            (Some(max), Some(share)) => EraseSpread { typical: self.erase_ns, extra_max: max - self.erase_ns, slow_share: share },
            _ => EraseSpread { typical: self.erase_ns, extra_max: 0, slow_share: 0.0 },
        }
    }

    /// The longest an erase takes.
    pub fn erase_longest_ns(&self) -> Ns {
        self.erase_max_ns.unwrap_or(self.erase_ns)
    }

    /// tPROG of the lower and the upper page of a word line (both
    /// `program_ns` where the NAND does not tell them apart).
    pub fn page_program_ns(&self) -> [Ns; 2] {
        match self.upper_page_program_ns {
            Some(upper) => [2 * self.program_ns - upper, upper],
            None => [self.program_ns; 2],
        }
    }

    pub fn validate(&self) -> Result<(), GeometryError> {
        let f = |field, value: u64, lo: u64, hi: u64, range: &str| {
            if value < lo || value > hi {
                Err(GeometryError::Field { field, value, range: range.to_string() })
            } else {
                Ok(())
            }
        };
        f("timings.read_ns", self.read_ns, 1_000, 10_000_000, "1 us..=10 ms")?;
        f("timings.program_ns", self.program_ns, 10_000, 100_000_000, "10 us..=100 ms")?;
        f("timings.erase_ns", self.erase_ns, 100_000, 1_000_000_000, "100 us..=1 s")?;
        match (self.erase_max_ns, self.erase_slow_share) {
            (None, None) => {}
            (Some(max), Some(share)) => {
                f("timings.erase_max_ns", max, self.erase_ns + 1, 10 * self.erase_ns, "erase_ns (exclusive)..=10 x erase_ns")?;
                if !(share > 0.0 && share <= 1.0) {
                    return Err(GeometryError::Timing(format!("timings.erase_slow_share = {share}: must be in (0, 1]")));
                }
            }
            _ => {
                return Err(GeometryError::Inconsistent(
                    "timings.erase_max_ns and timings.erase_slow_share go together: the slow blocks' share and how slow they get".into(),
                ))
            }
        }
        if let Some(upper) = self.upper_page_program_ns {
            f(
                "timings.upper_page_program_ns",
                upper,
                self.program_ns,
                (2 * self.program_ns).saturating_sub(10_000),
                "program_ns..=2 x program_ns - 10 us (the lower page takes the rest of twice the mean)",
            )?;
        }
        f("timings.channel_bytes_per_sec", self.channel_bytes_per_sec, 1_000_000, 100_000_000_000, "1 MB/s..=100 GB/s")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timings(max: Option<Ns>, share: Option<f64>) -> Timings {
        Timings {
            read_ns: 60_000,
            program_ns: 1_500_000,
            upper_page_program_ns: None,
            erase_ns: 3_000_000,
            erase_max_ns: max,
            erase_slow_share: share,
            channel_bytes_per_sec: 200_000_000,
        }
    }

    #[test]
    fn slow_blocks_take_their_share_and_spread_up_to_the_maximum() {
        let t = timings(Some(10_000_000), Some(0.1));
        t.validate().unwrap();
        let n = 200_000u64;
        let times: Vec<Ns> = (0..n).map(|k| t.erase_ns_of(k)).collect();
        assert!(times.iter().all(|&e| (3_000_000..=10_000_000).contains(&e)), "every erase between typical and maximum");
        let slow: Vec<Ns> = times.iter().copied().filter(|&e| e > 3_000_000).collect();
        let share = slow.len() as f64 / n as f64;
        assert!((share - 0.1).abs() < 0.005, "a tenth of the blocks erase slowly: {share}");
        let mean = slow.iter().sum::<Ns>() as f64 / slow.len() as f64;
        assert!((mean - 6_500_000.0).abs() < 100_000.0, "uniformly up to the maximum: mean {mean}");
        assert!(slow.iter().any(|&e| e > 9_900_000), "the slowest reach the maximum");
        // A block's time is its own, whatever else was asked before.
        assert_eq!(t.erase_ns_of(12_345), times[12_345]);
        assert_eq!(t.erase_longest_ns(), 10_000_000);
    }

    #[test]
    fn without_a_maximum_every_erase_takes_the_typical_time() {
        let t = timings(None, None);
        assert!((0..1000).all(|k| t.erase_ns_of(k) == 3_000_000));
        assert_eq!(t.erase_longest_ns(), 3_000_000);
    }
}
