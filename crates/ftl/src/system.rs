//! The system area: the card's own metadata on the media, written whole
//! whenever it changes (data-holding media only): the dead dies in order,
//! the bad-block table, each superblock's narrowing, the lost LBAs and the
//! rows in which dead dies' blocks failed a program, a CRC-32 last. A mount (or a checkpoint mount) loads it before anything
//! else, so that a card knows its failures after a restart or a power cut.

use crate::layout::Narrowing;
use crate::{Ftl, FtlError};
use nand::Media;

const SYSTEM_MAGIC: &[u8; 8] = b"FLSYS\0\0\0";
const SYSTEM_VERSION: u32 = 4;

/// Reads little-endian fields off a byte slice, naming a short read.
struct Fields<'a> {
    b: &'a [u8],
    at: usize,
}

impl Fields<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], FtlError> {
        let v = self.b.get(self.at..self.at + n).ok_or_else(|| bad("truncated"))?;
        self.at += n;
        Ok(v)
    }
    fn u16(&mut self) -> Result<u16, FtlError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2 bytes")))
    }
    fn u32(&mut self) -> Result<u32, FtlError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    fn u64(&mut self) -> Result<u64, FtlError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
}

fn bad(why: &str) -> FtlError {
    FtlError::Config(format!("system area: {why}"))
}

impl<M: Media> Ftl<M> {
    fn system_bytes(&self) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(SYSTEM_MAGIC);
        b.extend_from_slice(&SYSTEM_VERSION.to_le_bytes());
        b.extend_from_slice(&self.layout.dies.to_le_bytes());
        b.extend_from_slice(&self.layout.superblocks.to_le_bytes());
        b.extend_from_slice(&(self.faults.dead.len() as u32).to_le_bytes());
        self.faults.dead.iter().for_each(|d| b.extend_from_slice(&d.to_le_bytes()));
        b.extend_from_slice(&self.sbs.bad_counts.factory.to_le_bytes());
        b.extend_from_slice(&self.sbs.bad_counts.grown.to_le_bytes());
        b.extend_from_slice(&self.sbs.bad_counts.grown_program.to_le_bytes());
        self.sbs.bad.iter().for_each(|w| b.extend_from_slice(&w.to_le_bytes()));
        for n in &self.sbs.narrows {
            let out = n.as_ref().map(|n| n.dies_out()).unwrap_or_default();
            b.extend_from_slice(&(out.len() as u16).to_le_bytes());
            out.iter().for_each(|d| b.extend_from_slice(&d.to_le_bytes()));
        }
        b.extend_from_slice(&(self.faults.lost.len() as u32).to_le_bytes());
        for lba in self.lbas_lost() {
            b.extend_from_slice(&lba.to_le_bytes());
            b.extend_from_slice(&self.faults.lost[&lba].to_le_bytes());
        }
        let dead_failed = self.dead_failed_rows();
        b.extend_from_slice(&(dead_failed.len() as u32).to_le_bytes());
        for (die, sb, row) in dead_failed {
            [die, sb, row].iter().for_each(|v| b.extend_from_slice(&v.to_le_bytes()));
        }
        let crc = crc32fast::hash(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        b
    }

    /// Writes the system area (data-holding media; nothing to keep on a
    /// card with no failure, no bad block and no loss).
    pub(crate) fn system_save(&mut self) -> Result<(), FtlError> {
        if self.data && (self.faults.faulted || self.sbs.bad_counts.total() > 0) {
            let b = self.system_bytes();
            self.media.system_write(&b)?;
        }
        Ok(())
    }

    /// The rows dead dies' retired blocks failed in (die, superblock, row).
    fn dead_failed_read(&self, f: &mut Fields, dead: &[u32]) -> Result<Vec<(u32, u32, u32)>, FtlError> {
        let n = f.u32()?;
        let rows = (0..n).map(|_| Ok((f.u32()?, f.u32()?, f.u32()?))).collect::<Result<Vec<_>, FtlError>>()?;
        let l = &self.layout;
        if rows.iter().any(|&(die, sb, row)| !dead.contains(&die) || sb >= l.superblocks || row >= l.pages_per_block) {
            return Err(bad("a failed row names a die that is not dead, or is out of range"));
        }
        Ok(rows)
    }

    /// Loads what a card kept in its system area: the dead dies (failed
    /// again on the media), the bad blocks, each superblock's narrowing,
    /// the lost LBAs. Nothing where the area is empty.
    pub(crate) fn system_load(&mut self) -> Result<(), FtlError> {
        let Some(b) = self.media.system_read() else { return Ok(()) };
        if b.len() < 16 || &b[..8] != SYSTEM_MAGIC {
            return Err(bad("not a flashlab system area"));
        }
        let (body, crc) = b.split_at(b.len() - 4);
        if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().expect("4 bytes")) {
            return Err(bad("its checksum does not match (torn or altered)"));
        }
        let mut f = Fields { b: body, at: 8 };
        let version = f.u32()?;
        // Version 2 lacks the count of blocks retired by a failed program,
        // versions 2 and 3 the rows dead dies' blocks failed in.
        if !(2..=SYSTEM_VERSION).contains(&version) {
            return Err(bad(&format!("written by system area version {version}; this flashlab reads versions 2 to {SYSTEM_VERSION}")));
        }
        let (dies, sbs) = (self.layout.dies, self.layout.superblocks);
        if f.u32()? != dies || f.u32()? != sbs {
            return Err(bad("made for another geometry"));
        }
        let n = f.u32()?;
        let dead = (0..n).map(|_| f.u32()).collect::<Result<Vec<u32>, _>>()?;
        if dead.iter().any(|&d| d >= dies) {
            return Err(bad("a dead die out of range"));
        }
        self.sbs.bad_counts.factory = f.u32()?;
        self.sbs.bad_counts.grown = f.u32()?;
        self.sbs.bad_counts.grown_program = if version >= 3 { f.u32()? } else { 0 };
        if self.sbs.bad_counts.grown_program > self.sbs.bad_counts.grown {
            return Err(bad("more blocks retired by a failed program than grown bad"));
        }
        for w in self.sbs.bad.iter_mut() {
            *w = f.u64()?;
        }
        let marked: u32 = self.sbs.bad.iter().map(|w| w.count_ones()).sum();
        if marked != self.sbs.bad_counts.total() {
            return Err(bad("its bad-block table and counts do not agree"));
        }
        for sb in 0..sbs as usize {
            let k = f.u16()?;
            let out = (0..k).map(|_| f.u32()).collect::<Result<Vec<u32>, _>>()?;
            if out.iter().any(|&d| d >= dies) {
                return Err(bad("a narrowing names a die out of range"));
            }
            self.sbs.narrows[sb] = (!out.is_empty()).then(|| Narrowing::new(&self.layout, &out));
        }
        let lost_n = f.u32()?;
        for _ in 0..lost_n {
            let lba = f.u32()?;
            let seq = f.u64()?;
            self.faults.lost.insert(lba, seq);
        }
        let dead_failed = if version >= 4 { self.dead_failed_read(&mut f, &dead)? } else { Vec::new() };
        if f.at != body.len() {
            return Err(bad("its length does not add up"));
        }
        for &d in &dead {
            self.media.die_fail(d, false);
        }
        self.faults.dead = dead;
        self.faults.counters.dies_failed = self.faults.dead.len() as u32;
        if !self.faults.dead.is_empty() {
            self.faults.rebuild = Some(crate::faults::Rebuild::start());
        }
        self.capacity_check();
        self.faulted_update();
        self.row_narrows_derive(&dead_failed);
        Ok(())
    }
}
