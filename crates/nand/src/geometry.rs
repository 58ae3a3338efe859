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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    /// tBERS: one (multi-plane) block erase.
    pub erase_ns: Ns,
    /// Channel bus rate (ONFI/Toggle), bytes per second, shared by the dies
    /// of one channel.
    pub channel_bytes_per_sec: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GeometryError {
    #[error("{field} = {value}: must be in {range}")]
    Field { field: &'static str, value: u64, range: &'static str },
    #[error("geometry: {0}")]
    Inconsistent(String),
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
        let f = |field, value: u32, lo: u32, hi: u32, range| {
            if value < lo || value > hi {
                Err(GeometryError::Field { field, value: value as u64, range })
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
        f("geometry.oob_bytes", self.oob_bytes, 0, 1 << 16, "0..=65536")?;
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

impl Timings {
    /// tPROG of the lower and the upper page of a word line (both
    /// `program_ns` where the NAND does not tell them apart).
    pub fn page_program_ns(&self) -> [Ns; 2] {
        match self.upper_page_program_ns {
            Some(upper) => [2 * self.program_ns - upper, upper],
            None => [self.program_ns; 2],
        }
    }

    pub fn validate(&self) -> Result<(), GeometryError> {
        let f = |field, value: u64, lo: u64, hi: u64, range| {
            if value < lo || value > hi {
                Err(GeometryError::Field { field, value, range })
            } else {
                Ok(())
            }
        };
        f("timings.read_ns", self.read_ns, 1_000, 10_000_000, "1 us..=10 ms")?;
        f("timings.program_ns", self.program_ns, 10_000, 100_000_000, "10 us..=100 ms")?;
        f("timings.erase_ns", self.erase_ns, 100_000, 1_000_000_000, "100 us..=1 s")?;
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
