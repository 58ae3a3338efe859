//! The block API of a data-holding device: read, write, trim and write
//! zeroes on byte ranges in whole 512-byte sectors, each returning its
//! modelled completion time. It goes through the same path as the
//! simulator's I/Os (`Device::io`), so a served card is timed exactly as
//! a simulated one, and its bytes land in the FTL and the media.

use crate::device::{Device, DeviceError, Payload};
use nand::Persist;
use units::{Ns, SLOT_BYTES};

impl Device {
    /// Whether the device keeps the bytes written to it.
    pub fn holds_data(&self) -> bool {
        self.member_ftls().all(|f| f.media().holds_data())
    }

    /// Reads `out.len()` bytes from byte `offset` into `out`; unwritten and
    /// trimmed sectors read as zeros.
    pub fn read_at(&mut self, now: Ns, offset: u64, out: &mut [u8]) -> Result<Ns, DeviceError> {
        assert!(self.holds_data(), "read_at on a device that keeps no data");
        let done = self.io(now, offset, out.len() as u64, false, Payload::Read(out));
        self.smart_keep();
        completes_after(now, done)
    }

    /// Writes `data` at byte `offset`; a partial 4 KiB slot is merged with
    /// the rest of the slot as the device holds it.
    pub fn write_at(&mut self, now: Ns, offset: u64, data: &[u8]) -> Result<Ns, DeviceError> {
        assert!(self.holds_data(), "write_at on a device that keeps no data");
        let done = self.io(now, offset, data.len() as u64, true, Payload::Write(data));
        self.smart_keep();
        completes_after(now, done)
    }

    /// Makes every write acknowledged so far durable on the media: the open
    /// pages are padded and programmed (a simulated card's too: its flush
    /// costs what a served card's does). Returns when the last program
    /// ends.
    pub fn flush(&mut self, now: Ns) -> Result<Ns, DeviceError> {
        let done = self.members_flush(now);
        self.smart_keep();
        completes_after(now, done)
    }

    /// Forgets the whole 4 KiB slots inside the range (they read as zeros
    /// until written); the sectors of partial slots at its ends are kept, as
    /// a trim is only advice.
    pub fn trim_at(&mut self, now: Ns, offset: u64, len: u64) -> Result<Ns, DeviceError> {
        self.range_check(offset, len)?;
        // A read-only card trims nothing (no member's part of the range).
        if let Some(why) = self.read_only() {
            return Err(DeviceError::read_only(why));
        }
        let (first, end) = (offset.div_ceil(SLOT_BYTES), (offset + len) / SLOT_BYTES);
        for slot in first..end {
            let (member, member_off) = self.member_of(slot * SLOT_BYTES);
            self.member_ftl_mut(member).trim((member_off / SLOT_BYTES) as u32)?;
        }
        self.smart_keep();
        Ok(now)
    }

    /// Makes the range read as zeros: whole slots trimmed, the sectors of
    /// partial slots at its ends written with zeros.
    pub fn write_zeroes_at(&mut self, now: Ns, offset: u64, len: u64) -> Result<Ns, DeviceError> {
        self.range_check(offset, len)?;
        let (first, end) = (offset.div_ceil(SLOT_BYTES) * SLOT_BYTES, (offset + len) / SLOT_BYTES * SLOT_BYTES);
        if first >= end {
            return self.write_at(now, offset, &vec![0; len as usize]);
        }
        let mut done = self.trim_at(now, first, end - first)?;
        for (at, n) in [(offset, first - offset), (end, offset + len - end)] {
            if n > 0 {
                done = done.max(self.write_at(now, at, &vec![0; n as usize])?);
            }
        }
        Ok(done)
    }
}

/// A request's completion, which never comes before its arrival (the
/// timing model reserves resources from `now` on).
#[inline]
fn completes_after(now: Ns, done: Result<Ns, DeviceError>) -> Result<Ns, DeviceError> {
    debug_assert!(done.as_ref().map_or(true, |&t| t >= now), "a request completes before it arrives: {done:?} < {now}");
    done
}

#[cfg(test)]
mod tests {
    use crate::device::{Backing, Device, DeviceError};

    /// A small data-holding card: the P420m at its largest scale.
    fn card() -> Device {
        let p = crate::profile_load("p420m").unwrap();
        let scale = (1..=4096).rev().find(|&s| Device::validate(&p, "stock", s).is_ok()).unwrap();
        Device::with_backing(&p, "stock", scale, &Backing::Memory).unwrap()
    }

    /// A card on files, stopped without warning (dropped) and opened again:
    /// it mounts from its media; what was flushed reads back; what was
    /// written after reads back whole or as the flushed data, never torn.
    #[test]
    fn a_file_backed_card_mounts_what_it_flushed() {
        let p = crate::profile_load("p420m").unwrap();
        let scale = (1..=65536).rev().find(|&s| Device::validate(&p, "stock", s).is_ok()).unwrap();
        let dir = std::env::temp_dir().join(format!("flashlab-mount-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let backing = Backing::files(&dir, "p420m test", "test").unwrap();
        let mut d = Device::with_backing(&p, "stock", scale, &backing).unwrap();
        assert!(d.mounted.is_none(), "a new store is formatted");
        let len = (d.capacity_bytes() / 2) as usize;
        let a: Vec<u8> = (0..len).map(|i| (i / 4096) as u8 ^ 0x5a).collect();
        let mut now = d.write_at(0, 0, &a).unwrap();
        now = d.flush(now).unwrap();
        now = d.write_at(now, 0, &vec![0xb7; 12 * 1024 + 512]).unwrap();
        drop(d);
        let mut m = Device::with_backing(&p, "stock", scale, &backing).unwrap();
        let r = m.mounted.clone().expect("mounted from the store");
        assert!(r.slots_mapped >= (len / 4096) as u64, "{r:?}");
        m.check().unwrap();
        let mut back = vec![0u8; len];
        m.read_at(now, 0, &mut back).unwrap();
        for (i, (x, y)) in back.chunks(512).zip(a.chunks(512)).enumerate() {
            assert!(x == y || (i < 25 && x.iter().all(|&b| b == 0xb7)), "sector {i}: neither the flushed data nor the later write");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The SMART-like log: a power cycle at each start, an unclean
    /// shutdown counted when the card stopped without its checkpoint, and
    /// the host's slots kept across a clean stop; a card not kept in files
    /// has none.
    #[test]
    fn the_smart_log_counts_power_cycles_unclean_stops_and_host_traffic() {
        let p = crate::profile_load("p420m").unwrap();
        let scale = (1..=65536).rev().find(|&s| Device::validate(&p, "stock", s).is_ok()).unwrap();
        assert!(Device::new(&p, "stock", scale).unwrap().smart().is_none());
        let dir = std::env::temp_dir().join(format!("flashlab-smart-dev-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let backing = Backing::files(&dir, "p420m test", "test").unwrap();
        let mut d = Device::with_backing(&p, "stock", scale, &backing).unwrap();
        let s = d.smart().unwrap();
        assert_eq!((s.power_cycles, s.unclean_shutdowns, s.host_slots_written), (1, 0, 0));
        let now = d.write_at(0, 0, &vec![7u8; 8 * 4096]).unwrap();
        d.read_at(now, 0, &mut vec![0u8; 4096]).unwrap();
        d.shutdown_clean().unwrap();
        drop(d);
        let mut d = Device::with_backing(&p, "stock", scale, &backing).unwrap();
        let s = d.smart().unwrap();
        assert_eq!((s.power_cycles, s.unclean_shutdowns, s.host_slots_written, s.host_slots_read), (2, 0, 8, 1));
        d.write_at(0, 0, &vec![8u8; 4096]).unwrap();
        // Dropped without a clean shutdown (a cut): the next start counts
        // it, and the write since the last save is kept all the same (the
        // counters kept beside the pages once lost it).
        drop(d);
        let d = Device::with_backing(&p, "stock", scale, &backing).unwrap();
        let s = d.smart().unwrap();
        assert_eq!((s.power_cycles, s.unclean_shutdowns, s.host_slots_written), (3, 1, 9));
        assert!(s.nand_slots_written >= 9, "NAND writes are counted at the NAND: {s:?}");
        drop(d);
        // A log of another version is refused by name, before serving.
        std::fs::write(
            dir.join("smart.toml"),
            "version = 2\npower_cycles = 1\nunclean_shutdowns = 0\nmedia_errors = 0\nhost_slots_read = 0\nhost_slots_written = 0\n",
        )
        .unwrap();
        let e = Device::with_backing(&p, "stock", scale, &backing).err().expect("refused");
        assert!(e.to_string().contains("SMART log version 2"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A card formatted anew: its capacity is the new format's, every
    /// LBA reads zeros, its wear (one more erase of every block) and SMART
    /// log are kept, and it opens again as the new format only.
    #[test]
    fn a_card_formatted_anew_keeps_its_wear_and_opens_as_its_new_format() {
        let p = crate::profile_load("flashmax2").unwrap();
        let scale = (1..=65536).rev().find(|&s| Device::validate(&p, "stock", s).is_ok() && Device::validate(&p, "hp", s).is_ok()).unwrap();
        let dir = std::env::temp_dir().join(format!("flashlab-reformat-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let card = |f: &str| crate::CardFile::new("flashmax2", f, scale);
        let backing = |f: &str| Backing::files(&dir, &card(f).owner(), "test").unwrap();
        let mut d = Device::with_backing(&p, "stock", scale, &backing("stock")).unwrap();
        let stock = d.capacity_bytes();
        let now = d.write_at(0, 0, &vec![0x5a; 64 * 4096]).unwrap();
        d.flush(now).unwrap();
        let before = d.health();
        assert!(d.reformat("9TB", false).unwrap_err().to_string().contains("9000000000000"));
        assert_eq!(d.capacity_bytes(), stock, "a refused format changes nothing");
        d.reformat("hp", false).unwrap();
        assert!(d.capacity_bytes() < stock && d.format == "hp");
        let mut back = vec![1u8; 64 * 4096];
        d.read_at(now, 0, &mut back).unwrap();
        assert!(back.iter().all(|&b| b == 0), "a formatted card reads zeros");
        let after = d.health();
        assert!(after.pe_cycles_mean > before.pe_cycles_mean, "every block erased: {} -> {}", before.pe_cycles_mean, after.pe_cycles_mean);
        assert_eq!(d.smart().unwrap().host_slots_written, 64, "the SMART log is kept");
        assert_eq!(crate::CardFile::load(&dir).unwrap(), Some(card("hp")));
        d.check().unwrap();
        d.shutdown_clean().unwrap();
        drop(d);
        assert!(Device::with_backing(&p, "stock", scale, &backing("stock")).is_err(), "the stores name the new format");
        let d = Device::with_backing(&p, "hp", scale, &backing("hp")).unwrap();
        assert!(d.mounted.as_ref().unwrap().from_checkpoint);
        assert_eq!(d.health().pe_cycles_mean, after.pe_cycles_mean);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_card_without_data_says_so() {
        let p = crate::profile_load("p420m").unwrap();
        assert!(!Device::new(&p, "stock", 256).unwrap().holds_data());
    }

    /// The rest of a slot a write covers in part is read from the media
    /// to merge with it: a media read, but not a host read (the SMART
    /// log's host reads count only what the host asked for).
    #[test]
    fn an_unaligned_writes_merge_read_is_not_a_host_read() {
        let mut d = card();
        let now = d.write_at(0, 0, &[7u8; 8192]).unwrap();
        let now = d.write_at(now, 512, &[9u8; 512]).unwrap();
        let now = d.write_at(now, 4096 + 1024, &[9u8; 1024]).unwrap();
        assert_eq!(d.counters().host_slots_read, 0, "two merges, no host read");
        let mut slot = [0u8; 4096];
        d.read_at(now, 0, &mut slot).unwrap();
        assert_eq!((slot[0], slot[512], slot[1024]), (7, 9, 7));
        assert_eq!(d.counters().host_slots_read, 1);
    }

    /// On a card without parity, a page its ECC cannot correct after every
    /// retry cannot be rebuilt: the read is an I/O error (EIO to an NBD
    /// client), counted as an uncorrectable read (a media error in the
    /// SMART log); a read that succeeds returns the bytes written.
    #[test]
    fn a_page_beyond_ecc_without_parity_is_an_io_error_never_bytes() {
        let (mut d, slots, mut now) = without_parity_with_random_errors();
        let (mut errors, mut reads) = (0u64, 0u64);
        let mut buf = [0u8; 4096];
        for i in 0..4000u64 {
            now += 50_000;
            let s = i * 7 % (slots - 256);
            match d.read_at(now, s * 4096, &mut buf) {
                Ok(_) => {
                    assert!(buf.iter().all(|&b| b == (s % 251) as u8), "slot {s}: a read that succeeds returns what was written");
                    reads += 1;
                }
                Err(DeviceError::Unreadable { .. }) => errors += 1,
                Err(e) => panic!("slot {s}: {e}"),
            }
        }
        let c = d.counters().read_errors;
        assert!(errors > 0 && reads > 0, "{errors} errors, {reads} reads");
        // Read reclaim's moves may meet some too (counted, not the host's).
        assert!(c.reads_uncorrectable >= errors && c.reads_rebuilt_from_parity == 0, "{c:?} against {errors} errors");
    }

    /// A P420m without parity, its first 2,048 slots written (slot `s`
    /// holds `s % 251`), about one page read in twenty then meeting a
    /// random error beyond ECC; the slots and the time.
    fn without_parity_with_random_errors() -> (Device, u64, units::Ns) {
        let mut p = crate::profile_load("p420m").unwrap();
        p.ftl.stripe_width = 1;
        p.nand.errors.as_mut().unwrap().field_die_failures_per_year = 0.0;
        let scale = (1..=4096).rev().find(|&s| Device::validate(&p, "stock", s).is_ok()).unwrap();
        let mut d = Device::with_backing(&p, "stock", scale, &Backing::Memory).unwrap();
        let slots = 2048u64;
        let mut now = 0;
        for s in 0..slots {
            now = d.write_at(now, s * 4096, &[(s % 251) as u8; 4096]).unwrap();
        }
        d.random_faults_set(2e10, 1, now).unwrap();
        (d, slots, now)
    }

    /// A write of part of a slot whose rest cannot be read (beyond ECC,
    /// no parity) fails as an I/O error and changes nothing: no guessed
    /// bytes are merged; one that succeeds merges what the slot held.
    #[test]
    fn a_partial_write_whose_merge_read_fails_is_an_io_error_and_changes_nothing() {
        let (mut d, slots, mut now) = without_parity_with_random_errors();
        let (mut failed, mut merged) = (vec![], vec![]);
        for i in 0..1500u64 {
            now += 50_000;
            // Each slot once (5 is prime to 1,792).
            let s = i * 5 % (slots - 256);
            match d.write_at(now, s * 4096 + 512, &[0xee; 512]) {
                Ok(_) => merged.push(s),
                Err(DeviceError::Unreadable { offset, len }) => {
                    assert_eq!((offset, len), (s * 4096, 4096), "the slot that could not be read");
                    failed.push(s);
                }
                Err(e) => panic!("slot {s}: {e}"),
            }
        }
        assert!(!failed.is_empty() && !merged.is_empty(), "{} failed, {} merged", failed.len(), merged.len());
        // Read back (a read the random errors refuse is skipped).
        let mut buf = [0u8; 4096];
        let v = |s: u64| (s % 251) as u8;
        let mut checked = [0u32; 2];
        for (s, was_merged) in failed.iter().map(|&s| (s, false)).chain(merged.iter().map(|&s| (s, true))) {
            now += 50_000;
            match d.read_at(now, s * 4096, &mut buf) {
                Ok(_) if was_merged => {
                    assert!(buf[..512].iter().chain(&buf[1024..]).all(|&b| b == v(s)) && buf[512..1024].iter().all(|&b| b == 0xee), "slot {s}: merged wrong")
                }
                Ok(_) => assert!(buf.iter().all(|&b| b == v(s)), "slot {s}: a failed write changed it"),
                Err(DeviceError::Unreadable { .. }) => continue,
                Err(e) => panic!("slot {s}: {e}"),
            }
            checked[was_merged as usize] += 1;
        }
        assert!(checked[0] > 0 && checked[1] > 0, "read back: {checked:?}");
    }

    /// Parity rebuilds a page beyond ECC only from the rest of its stripe:
    /// on a card worn far past any ECC every page is beyond it, so no
    /// stripe can rebuild one and every read is an I/O error; at the
    /// card's rating most reads succeed, none needing parity.
    #[test]
    fn a_stripe_whose_members_are_all_past_ecc_rebuilds_nothing() {
        let p = crate::profile_load("p420m").unwrap();
        let scale = (1..=4096).rev().find(|&s| Device::validate(&p, "stock", s).is_ok()).unwrap();
        let reads = |pe_cycles: u32, age_days: f64| {
            let mut d = Device::with_backing(&p, "stock", scale, &Backing::Memory).unwrap();
            let mut now = 0;
            for s in 0..512u64 {
                now = d.write_at(now, s * 4096, &[(s % 251) as u8; 4096]).unwrap();
            }
            d.wear_set(pe_cycles, age_days, 1);
            let (mut ok, mut errors) = (0, 0);
            let mut buf = [0u8; 4096];
            for s in 0..512u64 {
                now += 100_000;
                match d.read_at(now, s * 4096, &mut buf) {
                    Ok(_) => ok += 1,
                    Err(DeviceError::Unreadable { .. }) => errors += 1,
                    Err(e) => panic!("slot {s}: {e}"),
                }
            }
            (ok, errors, d.counters().read_errors)
        };
        let (ok, errors, c) = reads(100_000, 3650.0);
        assert!(ok == 0 && errors == 512 && c.reads_rebuilt_from_parity == 0 && c.reads_uncorrectable >= 512, "{ok} read, {errors} errors, {c:?}");
        let (ok, _, c) = reads(3000, 30.0);
        assert!(ok == 512 && c.reads_rebuilt_from_parity == 0, "at the rating: {ok} read, {c:?}");
    }
}
