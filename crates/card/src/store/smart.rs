//! The card's SMART-like log: counters that outlive restarts, kept beside
//! a served card's store (`smart.toml`, written whole, versioned), saved at
//! every power-on (mount) and at every clean shutdown. The traffic
//! counters are also kept beside the pages at every request (`kept`), so
//! that a cut loses none of them; a power cycle or an unclean shutdown is
//! saved as it happens.

use super::StoreError;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The version of `smart.toml` this build reads and writes.
const FILE_VERSION: u32 = 1;

const FILE_NAME: &str = "smart.toml";

/// The counters, as persisted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmartLog {
    pub version: u32,
    /// Times the card was powered on (its store opened), the first
    /// included.
    pub power_cycles: u64,
    /// Power-ons that found no clean shutdown's checkpoint: the card had
    /// stopped without one (a crash, a kill, a power cut).
    pub unclean_shutdowns: u64,
    /// Reads that failed (beyond ECC and parity) and 4 KiB slots lost
    /// (to a second failure in a stripe, or to a cut the stripe could not
    /// repair).
    pub media_errors: u64,
    /// 4 KiB slots the host read and wrote.
    pub host_slots_read: u64,
    pub host_slots_written: u64,
    /// 4 KiB slots programmed to NAND: the host's, garbage collection's,
    /// a rebuild's, parity and padding (what wears the flash); over
    /// `host_slots_written`, the lifetime write amplification. (A log from
    /// before it was kept reads 0.)
    #[serde(default)]
    pub nand_slots_written: u64,
}

impl SmartLog {
    /// The log of the store in `dir`: a new one (all zero) where there is
    /// none; one of another version is refused by name.
    pub fn load(dir: &Path) -> Result<SmartLog, StoreError> {
        let log = super::toml_load(dir, FILE_NAME, "SMART log", |l: &SmartLog| l.version, FILE_VERSION)?;
        let log = log.unwrap_or(SmartLog { version: FILE_VERSION, ..SmartLog::default() });
        log.check(&dir.join(FILE_NAME))?;
        Ok(log)
    }

    /// Every counter below what any card reaches (2^60: a billion power
    /// cycles, 4 ZiB of 4 KiB slots), so that counting on never wraps.
    fn check(&self, path: &Path) -> Result<(), StoreError> {
        const MAX: u64 = 1 << 60;
        let counters = [
            ("power_cycles", self.power_cycles),
            ("unclean_shutdowns", self.unclean_shutdowns),
            ("media_errors", self.media_errors),
            ("host_slots_read", self.host_slots_read),
            ("host_slots_written", self.host_slots_written),
            ("nand_slots_written", self.nand_slots_written),
        ];
        match counters.iter().find(|(_, v)| *v > MAX) {
            Some((name, v)) => Err(StoreError::invalid(path, format!("{name} = {v}: more than any card counts (at most 2^60)"))),
            None => Ok(()),
        }
    }

    /// The log of a card at rest, changing nothing: the file, with the
    /// counters kept beside the pages of its first member's store (newer,
    /// where the card did not stop cleanly).
    pub fn at_rest(dir: &Path) -> Result<SmartLog, StoreError> {
        let mut log = SmartLog::load(dir)?;
        let store = super::member_path(dir, 0);
        if let Some(k) = nand::store::kept_counters_read(&store).map_err(|e| StoreError::io(&store, e))? {
            log.absorb(&k);
        }
        Ok(log)
    }

    /// Writes the log whole beside the store.
    pub(crate) fn save(&self, dir: &Path) -> Result<(), StoreError> {
        super::toml_save(dir, FILE_NAME, &toml::to_string(self).expect("a SMART log serialises"))
    }

    /// A power-on: one more cycle, an unclean shutdown counted where the
    /// card did not stop cleanly, and the slots the mount found lost.
    pub fn powered_on(&mut self, clean: bool, slots_lost: u64) {
        self.power_cycles = self.power_cycles.saturating_add(1);
        self.unclean_shutdowns = self.unclean_shutdowns.saturating_add(u64::from(!clean));
        self.media_errors = self.media_errors.saturating_add(slots_lost);
    }

    /// The lifetime counters the card keeps beside its pages
    /// (`nand::PageStore::kept_counters`), so that a cut loses none of them;
    /// the rest of the log changes only at a power-on.
    pub fn kept(&self) -> [u64; nand::store::KEPT_COUNTERS] {
        let mut k = [0; nand::store::KEPT_COUNTERS];
        k[..4].copy_from_slice(&[self.host_slots_read, self.host_slots_written, self.nand_slots_written, self.media_errors]);
        k
    }

    /// Takes in counters the card kept beside its pages: they are newer
    /// than this file's wherever they are larger (the card stopped without
    /// saving the file).
    pub fn absorb(&mut self, k: &[u64; nand::store::KEPT_COUNTERS]) {
        self.host_slots_read = self.host_slots_read.max(k[0]);
        self.host_slots_written = self.host_slots_written.max(k[1]);
        self.nand_slots_written = self.nand_slots_written.max(k[2]);
        self.media_errors = self.media_errors.max(k[3]);
    }

    /// This log with what happened since it was loaded added.
    pub fn with(&self, host_slots_read: u64, host_slots_written: u64, nand_slots_written: u64, media_errors: u64) -> SmartLog {
        SmartLog {
            host_slots_read: self.host_slots_read.saturating_add(host_slots_read),
            host_slots_written: self.host_slots_written.saturating_add(host_slots_written),
            nand_slots_written: self.nand_slots_written.saturating_add(nand_slots_written),
            media_errors: self.media_errors.saturating_add(media_errors),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("flashlab-smart-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_log_survives_a_save_and_refuses_another_version() {
        let d = dir("roundtrip");
        let mut log = SmartLog::load(&d).unwrap();
        assert_eq!((log.version, log.power_cycles), (FILE_VERSION, 0));
        log.powered_on(true, 0);
        log.powered_on(false, 3);
        let log = log.with(10, 20, 50, 1);
        log.save(&d).unwrap();
        let back = SmartLog::load(&d).unwrap();
        assert_eq!(back, log);
        assert_eq!((back.power_cycles, back.unclean_shutdowns, back.media_errors, back.host_slots_written), (2, 1, 4, 20));
        std::fs::write(
            d.join(FILE_NAME),
            "version = 9\npower_cycles = 1\nunclean_shutdowns = 0\nmedia_errors = 0\nhost_slots_read = 0\nhost_slots_written = 0\n",
        )
        .unwrap();
        assert!(SmartLog::load(&d).unwrap_err().to_string().contains("SMART log version 9"));
        std::fs::write(d.join(FILE_NAME), "garbage = [").unwrap();
        assert!(SmartLog::load(&d).unwrap_err().to_string().contains("not a SMART log"));
        std::fs::write(
            d.join(FILE_NAME),
            "version = 1\npower_cycles = 9223372036854775807\nunclean_shutdowns = 0\nmedia_errors = 0\nhost_slots_read = 0\nhost_slots_written = 0\n",
        )
        .unwrap();
        assert!(
            SmartLog::load(&d).unwrap_err().to_string().contains("power_cycles = 9223372036854775807: more than any card counts"),
            "a count that would wrap is refused"
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
