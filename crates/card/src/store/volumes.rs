//! Volumes: the card's one pool presented as one volume, or split into two
//! (the FlashMAX II "presents one LUN, or two volumes"). A volume is a
//! contiguous part of the card's logical space; volumes share the card's
//! flash, spare and garbage collection. A card's split is kept beside its
//! store (`volumes.toml`, written whole), so that it comes back as it was
//! left.

use super::StoreError;
use serde::{Deserialize, Serialize};
use std::path::Path;
use units::SLOT_BYTES;

/// The most volumes a card is split into.
pub const VOLUMES_MAX: u32 = 2;

/// The version of `volumes.toml` this build reads and writes.
const FILE_VERSION: u32 = 1;

const FILE_NAME: &str = "volumes.toml";

/// Why volumes do not present a card: the count asked for or kept, or the
/// volume (numbered from 1) that does not tile the card's space.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VolumesError {
    #[error("{0} volumes: a card is served as 1 volume or split into {VOLUMES_MAX}")]
    Asked(u32),
    #[error("a card of {capacity} bytes is too small for {n} volumes")]
    TooSmall { capacity: u64, n: u32 },
    #[error("volumes file version {0}; this flashlab reads version {FILE_VERSION}")]
    Version(u32),
    #[error("{0} volumes: a card has 1 to {VOLUMES_MAX}")]
    Kept(usize),
    #[error("volume {} ({} bytes at byte {}) is empty: a volume holds at least one 4 KiB slot", .0 + 1, .1.bytes, .1.base)]
    Empty(usize, Volume),
    #[error("volume {} ({} bytes at byte {}) does not start on a 4 KiB slot", .0 + 1, .1.bytes, .1.base)]
    Unaligned(usize, Volume),
    #[error("volume {} ({} bytes at byte {}) does not start where the one before it ends, at byte {end}", .i + 1, .v.bytes, .v.base)]
    Gap { i: usize, v: Volume, end: u64 },
    #[error("volume {} ({} bytes at byte {}) ends past byte 2^64", .0 + 1, .1.bytes, .1.base)]
    Overflow(usize, Volume),
    #[error("the volumes end at byte {end}, the card at {capacity}")]
    End { end: u64, capacity: u64 },
}

/// A part of the card's logical space: bytes `base..base + bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Volume {
    pub base: u64,
    pub bytes: u64,
}

/// How a card's logical space is presented: volumes in order, tiling it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Volumes {
    version: u32,
    #[serde(rename = "volume")]
    list: Vec<Volume>,
}

impl Volumes {
    /// A card of `capacity` bytes as `n` volumes of whole 4 KiB slots, the
    /// first `n - 1` of equal size, the last taking what is left.
    pub fn split(capacity: u64, n: u32) -> Result<Volumes, VolumesError> {
        if !(1..=VOLUMES_MAX).contains(&n) {
            return Err(VolumesError::Asked(n));
        }
        let slots = capacity / SLOT_BYTES;
        let each = slots / n as u64 * SLOT_BYTES;
        if each == 0 {
            return Err(VolumesError::TooSmall { capacity, n });
        }
        let list = (0..n as u64).map(|i| Volume { base: i * each, bytes: if i + 1 == n as u64 { capacity - i * each } else { each } }).collect();
        let v = Volumes { version: FILE_VERSION, list };
        v.check(capacity)?;
        Ok(v)
    }

    pub fn list(&self) -> &[Volume] {
        &self.list
    }

    pub fn count(&self) -> u32 {
        self.list.len() as u32
    }

    /// Whether the volumes tile `0..capacity`, each non-empty and starting
    /// on a slot.
    pub fn check(&self, capacity: u64) -> Result<(), VolumesError> {
        if self.version != FILE_VERSION {
            return Err(VolumesError::Version(self.version));
        }
        if self.list.is_empty() || self.list.len() > VOLUMES_MAX as usize {
            return Err(VolumesError::Kept(self.list.len()));
        }
        let mut end = 0;
        for (i, &v) in self.list.iter().enumerate() {
            if v.bytes == 0 {
                return Err(VolumesError::Empty(i, v));
            }
            if v.base % SLOT_BYTES != 0 {
                return Err(VolumesError::Unaligned(i, v));
            }
            if v.base != end {
                return Err(VolumesError::Gap { i, v, end });
            }
            end = v.base.checked_add(v.bytes).ok_or(VolumesError::Overflow(i, v))?;
        }
        if end != capacity {
            return Err(VolumesError::End { end, capacity });
        }
        Ok(())
    }

    /// The split kept in a store's directory; `None` where there is none
    /// (a new store, or one served before volumes were kept: one volume).
    pub fn load(dir: &Path) -> Result<Option<Volumes>, StoreError> {
        super::toml_load(dir, FILE_NAME, "volumes file", |v: &Volumes| v.version, FILE_VERSION)
    }

    /// Keeps the split in a store's directory, written whole.
    pub(crate) fn save(&self, dir: &Path) -> Result<(), StoreError> {
        super::toml_save(dir, FILE_NAME, &toml::to_string(self).expect("volumes serialise"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_split_tiles_the_card_in_whole_slots() {
        let cap = 1_000_003 * SLOT_BYTES;
        let two = Volumes::split(cap, 2).unwrap();
        assert_eq!(two.list()[0], Volume { base: 0, bytes: 500_001 * SLOT_BYTES });
        assert_eq!(two.list()[1], Volume { base: 500_001 * SLOT_BYTES, bytes: 500_002 * SLOT_BYTES });
        assert_eq!(Volumes::split(cap, 1).unwrap().list(), &[Volume { base: 0, bytes: cap }]);
        assert!(Volumes::split(cap, 3).unwrap_err().to_string().contains("1 volume or split into 2"));
        assert!(Volumes::split(cap, 0).is_err());
        assert!(Volumes::split(SLOT_BYTES, 2).unwrap_err().to_string().contains("too small"));
    }

    #[test]
    fn a_kept_split_comes_back_and_a_bad_file_is_named() {
        let dir = std::env::temp_dir().join(format!("flashlab-volumes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(Volumes::load(&dir).unwrap(), None);
        let v = Volumes::split(64 * SLOT_BYTES, 2).unwrap();
        v.save(&dir).unwrap();
        assert_eq!(Volumes::load(&dir).unwrap(), Some(v.clone()));
        assert!(v.check(65 * SLOT_BYTES).unwrap_err().to_string().contains("end at byte"));
        std::fs::write(dir.join(FILE_NAME), "version = 9\nvolume = []\n").unwrap();
        assert!(Volumes::load(&dir).unwrap_err().to_string().contains("version 9"));
        std::fs::write(dir.join(FILE_NAME), "volume = 3").unwrap();
        assert!(Volumes::load(&dir).unwrap_err().to_string().contains("volumes.toml"));
        std::fs::write(dir.join(FILE_NAME), "version = 1\n\n[[vol").unwrap();
        let e = Volumes::load(&dir).unwrap_err().to_string();
        assert!(e.ends_with("invalid table header; expected `.`, `]]`, at line 3, column 6: the file ends there (cut short?))"), "a cut file says so: {e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn each_check_on_a_volume_has_its_own_message() {
        let v = |list: &[(u64, u64)]| Volumes { version: FILE_VERSION, list: list.iter().map(|&(base, bytes)| Volume { base, bytes }).collect() };
        let cap = 8 * SLOT_BYTES;
        assert!(v(&[(0, 0), (0, cap)]).check(cap).unwrap_err().to_string().contains("volume 1 (0 bytes at byte 0) is empty"));
        assert!(v(&[(100, cap)]).check(cap).unwrap_err().to_string().contains("does not start on a 4 KiB slot"));
        assert!(v(&[(0, 4 * SLOT_BYTES), (5 * SLOT_BYTES, 3 * SLOT_BYTES)])
            .check(cap)
            .unwrap_err()
            .to_string()
            .contains("does not start where the one before it ends, at byte 16384"));
        assert!(v(&[(0, u64::MAX)]).check(cap).is_err());
    }
}
