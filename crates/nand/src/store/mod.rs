//! Where a data-holding array keeps its pages' bytes and out-of-band
//! LBAs: in memory (tests), or in a sparse file (a served card: a scaled
//! card's raw flash is gigabytes, of which only what has been programmed
//! takes disk). An erase of a large block gives its bytes back to the file
//! system (a hole), so a full-size card's file holds about what the card
//! holds.
//!
//! A file store's pages are written with positioned writes and read
//! through a read-only mapping; its out-of-band areas, erase counts and
//! trims (dense, allocated when the file is made) are read and written
//! through a shared mapping. Pages written through a shared mapping took
//! far more disk than they held: ext4's writeback of dirty mapped pages
//! allocated large extents across the holes between them (a scaled
//! P420m's 270 MB store was 230 MB on disk after 4 MB of random writes).
//!
//! Each slot's out-of-band area holds its LBA, its state (erased, staged
//! in the power-loss-protected buffer, programmed), the write sequence
//! number of its data (the FTL's, for recovery) and a CRC-32 of its bytes;
//! each die block's erase count is kept beside them, and each LBA's last
//! trim (its sequence number: the card's trim journal). So the media alone
//! tell, after a restart, what every page holds, in what order it was
//! written, and what was trimmed since.
//!
//! A slot's state is written last, after its bytes and the rest of its
//! out-of-band area: a process killed at any instruction leaves each slot
//! whole or not there (the page cache keeps what a killed process wrote,
//! by a write or to its mapping, and a write has returned before the
//! state is set).
//!
//! Each die block also has a mark, set before the first slot of the block
//! is staged or programmed and cleared only once an erase has cleared
//! every slot of the block: a block unmarked holds nothing, so a mount
//! after a cut reads the out-of-band areas of the blocks written since
//! their erase, not of the whole card (a full-size card's are 17.6 GB).
//!
//! A file starts with a header that names what it holds (magic, layout
//! version, geometry, and the owner's own description: device, format,
//! scale); opening a file made for anything else is refused with both
//! descriptions.

mod file;
mod oob;

use crate::Geometry;
use file::{allocate, describe, header_check, header_write, kept_parse, punch_hole, Pages, HEADER_BYTES, KEPT_MARK, KEPT_OFFSET};
pub use file::{kept_counters_read, KEPT_COUNTERS, STORE_MAGIC, STORE_VERSION};
pub use oob::OOB_BYTES;
use std::fs::{File, OpenOptions};
use std::path::Path;
use units::SLOT_BYTES as SLOT;

/// The smallest erased range given back to the file system as a hole.
const HOLE_BYTES_MIN: usize = 2 << 20;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageStoreError {
    /// The OS's text of the I/O error (in the message, not a source:
    /// printed once).
    #[error("store {path}: {err}")]
    Io { path: String, err: String },
    #[error("store {path} is not a flashlab store (no header)")]
    NotAStore { path: String },
    #[error("store {path} has layout version {found}; this flashlab reads version {expected}")]
    Version { path: String, found: u32, expected: u32 },
    #[error("store {path} was made for {found}; asked for {expected}")]
    Mismatch { path: String, found: String, expected: String },
    #[error("store {path} is open in another process (a live server, whatever its lock file says): one process at a time owns a store; stop it first")]
    InUse { path: String },
}

/// How a process holds a store file: owning it (to serve or change it:
/// no other process may hold it in any way) or looking at it (with other
/// lookers, while no one owns it). Held on the file itself (`flock`), so
/// that no lock file removed or store moved lets a second owner in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Own,
    Look,
}

/// Bytes that live in memory or in a mapped file.
enum Bytes {
    Memory(Vec<u8>),
    Mapped { map: memmap2::MmapMut, offset: usize, len: usize },
}

impl Bytes {
    fn get(&self) -> &[u8] {
        match self {
            Bytes::Memory(v) => v,
            Bytes::Mapped { map, offset, len } => &map[*offset..*offset + *len],
        }
    }
    fn get_mut(&mut self) -> &mut [u8] {
        match self {
            Bytes::Memory(v) => v,
            Bytes::Mapped { map, offset, len } => &mut map[*offset..*offset + *len],
        }
    }
}

/// The pages, the per-slot out-of-band areas and the per-block erase
/// counts of a data-holding array.
pub struct PageStore {
    data: Pages,
    /// The file's header, through a shared mapping (none in memory).
    header: Option<memmap2::MmapMut>,
    oob: Bytes,
    erases: Bytes,
    /// Each LBA's last trim: its sequence number (0: never trimmed).
    trims: Bytes,
    /// Each page of `trims` (`TRIMS_PAGE_LBAS` LBAs): 1 from before its
    /// first entry is written; a page unmarked reads as no trim, untouched.
    trim_pages: Bytes,
    /// The newest trim's sequence number, set before its entry.
    trim_newest: Bytes,
    /// Each die block's mark (in the pages' order): 1 from before its first
    /// slot is staged or programmed until an erase has cleared it.
    used: Bytes,
    /// Slots of a die block.
    block_slots: usize,
    /// The file, kept open for the hole punching and the flush.
    file: Option<File>,
    /// The card's system area (its own metadata: failed dies and what
    /// they cost), and for a file store the file beside it that keeps it.
    system: Option<Vec<u8>>,
    system_path: Option<std::path::PathBuf>,
}

impl PageStore {
    /// A store in memory: pages erased (0xff), no LBAs.
    pub fn memory(g: &Geometry) -> PageStore {
        let (slots, blocks) = counts(g);
        let s = PageStore {
            data: Pages::Memory(vec![0xff; g.raw_bytes() as usize]),
            header: None,
            oob: Bytes::Memory(vec![0; slots * OOB_BYTES]),
            erases: Bytes::Memory(vec![0; blocks * 4]),
            trims: Bytes::Memory(vec![0; slots * 8]),
            trim_pages: Bytes::Memory(vec![0; trim_pages(slots)]),
            trim_newest: Bytes::Memory(vec![0; 8]),
            used: Bytes::Memory(vec![0; blocks]),
            block_slots: block_slots(g),
            file: None,
            system: None,
            system_path: None,
        };
        debug_assert!(s.oob_lba(0) == units::LBA_UNMAPPED && !s.oob_programmed(0), "zeros are an erased slot");
        s
    }

    /// The system area's bytes, if the card wrote any.
    pub fn system(&self) -> Option<&[u8]> {
        self.system.as_deref()
    }

    /// Replaces the system area. A file store writes it whole to the file
    /// beside it (a new file renamed over the old): a crash leaves the old
    /// area or the new one.
    pub fn system_set(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.system = Some(bytes.to_vec());
        let Some(path) = &self.system_path else { return Ok(()) };
        let tmp = path.with_extension("system.new");
        let written = File::create(&tmp).and_then(|mut f| {
            use std::io::Write;
            f.write_all(bytes)?;
            f.sync_all()
        });
        // A full disk leaves the old area and no new file.
        if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            File::open(dir)?.sync_all()?;
        }
        Ok(())
    }

    /// A store in a file: created (sparse) with `owner` in its header when
    /// it does not exist, else opened if its header names the same geometry
    /// and owner; held as `access` says for as long as the store lives
    /// (refused while another process holds it otherwise). Returns the
    /// store and whether it was created.
    pub fn file(path: &Path, g: &Geometry, owner: &str, access: Access) -> Result<(PageStore, bool), PageStoreError> {
        let p = path.display().to_string();
        let io = |err: std::io::Error| PageStoreError::Io { path: p.clone(), err: err.to_string() };
        let created = !path.exists();
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path).map_err(io)?;
        lock(&file, access, &p)?;
        let described = describe(g, owner);
        let (slots, blocks) = counts(g);
        let FileLayout { oob_bytes, erases_offset, trims_offset, used_offset, trim_pages_offset, trim_newest_offset, data_offset, total } = FileLayout::of(g);
        if created {
            file.set_len(total as u64).map_err(io)?;
            // The dense areas written through the mapping get their disk
            // now: a write to a mapped hole on a full disk would be a
            // SIGBUS, not an error.
            allocate(&file, data_offset as u64).map_err(io)?;
        } else {
            header_check(&file, &p, &described)?;
        }
        let found = file.metadata().map_err(io)?.len();
        if found != total as u64 {
            return Err(PageStoreError::Mismatch { path: p, found: format!("{found} bytes"), expected: format!("{total} bytes for {described}") });
        }
        // SAFETY: the file is this process's own store (its lock file says
        // so); nothing else maps or truncates it while the store lives.
        let meta = |offset: usize, len: usize| unsafe { memmap2::MmapOptions::new().offset(offset as u64).len(len).map_mut(&file) };
        let mut header = meta(0, HEADER_BYTES).map_err(io)?;
        if created {
            header_write(&mut header, &described);
        }
        // The dense areas share the header's page-aligned start: a mapping
        // of the file from 0 up to the pages, each area a range of it.
        let areas = || meta(0, data_offset).map_err(io);
        // SAFETY: as above, the pages of this process's own store.
        let pages = unsafe { memmap2::MmapOptions::new().offset(data_offset as u64).len(g.raw_bytes() as usize).map(&file) }.map_err(io)?;
        let mut store = PageStore {
            data: Pages::File { map: pages, file: file.try_clone().map_err(io)?, offset: data_offset, len: g.raw_bytes() as usize },
            header: Some(header),
            oob: Bytes::Mapped { map: areas()?, offset: HEADER_BYTES, len: oob_bytes },
            erases: Bytes::Mapped { map: areas()?, offset: erases_offset, len: blocks * 4 },
            trims: Bytes::Mapped { map: areas()?, offset: trims_offset, len: slots * 8 },
            used: Bytes::Mapped { map: areas()?, offset: used_offset, len: blocks },
            trim_pages: Bytes::Mapped { map: areas()?, offset: trim_pages_offset, len: trim_pages(slots) },
            trim_newest: Bytes::Mapped { map: areas()?, offset: trim_newest_offset, len: 8 },
            block_slots: block_slots(g),
            file: Some(file),
            system: None,
            system_path: Some(path.with_extension("system")),
        };
        let system_path = store.system_path.clone().expect("a file store's system area");
        if created {
            // The allocated areas read as zeros: every slot erased, no
            // block marked, nothing to write.
            debug_assert!(store.oob_lba(0) == units::LBA_UNMAPPED && !store.block_used(0));
            // A new card: a system area left by an earlier one is not its.
            match std::fs::remove_file(&system_path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
                _ => {}
            }
        } else if system_path.exists() {
            store.system = Some(std::fs::read(&system_path).map_err(|e| PageStoreError::Io { path: system_path.display().to_string(), err: e.to_string() })?);
        }
        Ok((store, created))
    }

    /// Writes a file store's pages and mapped areas to the disk (a clean
    /// shutdown; a killed process's writes reach the page cache without
    /// it).
    pub fn sync(&self) -> std::io::Result<()> {
        let Some(file) = &self.file else { return Ok(()) };
        // The mapped areas are ranges of one mapping's file: syncing the
        // file writes them with the pages.
        file.sync_data()
    }

    /// Every page's bytes, in the array's order.
    pub fn data(&self) -> &[u8] {
        self.data.get()
    }

    /// Writes pages' bytes at byte `at` (a program, whole pages, or a
    /// slot staged). A file store that cannot write them (its disk full)
    /// says so; what was written before stays.
    pub fn data_write(&mut self, at: usize, bytes: &[u8]) -> std::io::Result<()> {
        self.data.write(at, bytes)
    }

    fn slot_data(&self, slot: usize) -> &[u8] {
        let s = SLOT as usize;
        &self.data.get()[slot * s..(slot + 1) * s]
    }

    /// Writes a page's bytes, its first slot `first`: the slots staged in
    /// the power-loss-protected buffer hold those bytes already (a user
    /// page's every slot, on a card with protection), so only the others
    /// are written.
    pub fn page_write(&mut self, first: usize, data: &[u8]) -> std::io::Result<()> {
        let s = SLOT as usize;
        assert!(data.len().is_multiple_of(s), "a page is whole slots");
        let (n, mut i) = (data.len() / s, 0);
        while i < n {
            if self.oob_staged(first + i) {
                debug_assert!(self.slot_data(first + i) == &data[i * s..(i + 1) * s], "a staged slot holds its page's bytes");
                i += 1;
                continue;
            }
            let j = (i + 1..n).find(|&k| self.oob_staged(first + k)).unwrap_or(n);
            self.data.write((first + i) * s, &data[i * s..j * s])?;
            i = j;
        }
        Ok(())
    }

    /// An LBA's last trim (its sequence number; 0: never trimmed). An
    /// unmarked page of the journal is not read (a mount after a crash
    /// asks for each LBA it finds on the media, not for the whole card).
    pub fn trim_seq(&self, lba: u32) -> u64 {
        let lba = lba as usize;
        if self.trim_pages.get()[lba / TRIMS_PAGE_LBAS] == 0 {
            return 0;
        }
        u64_at(self.trims.get(), lba * 8)
    }

    /// Records a trim: the newest sequence number and the entry's page
    /// mark first, then the entry, so that a process killed between them
    /// leaves no entry that a mount would not find, nor a sequence number
    /// newer than the store says.
    pub fn trim_seq_set(&mut self, lba: u32, seq: u64) {
        let lba = lba as usize;
        if seq > self.trim_seq_newest() {
            self.trim_newest.get_mut().copy_from_slice(&seq.to_le_bytes());
        }
        self.trim_pages.get_mut()[lba / TRIMS_PAGE_LBAS] = 1;
        self.trims.get_mut()[lba * 8..lba * 8 + 8].copy_from_slice(&seq.to_le_bytes());
    }

    /// The newest trim's sequence number (0: none).
    pub fn trim_seq_newest(&self) -> u64 {
        u64_at(self.trim_newest.get(), 0)
    }

    /// A die block's erase count (`block` counts die blocks in the array's
    /// own order).
    pub fn erase_count(&self, block: usize) -> u32 {
        let b = &self.erases.get()[block * 4..block * 4 + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
    pub fn erase_count_set(&mut self, block: usize, count: u32) {
        self.erases.get_mut()[block * 4..block * 4 + 4].copy_from_slice(&count.to_le_bytes());
    }

    /// Forgets `len` bytes of pages from `offset` (an erase): in memory they
    /// read 0xff again; in a file a range of `HOLE_BYTES_MIN` or more
    /// becomes a hole, a smaller one keeps its stale bytes (the erased
    /// OOB says the pages hold nothing). Punching small holes costs more
    /// than it saves: each page punched out of the mapping faults back in
    /// at its next program (a served scaled card's 16 KiB blocks ran 9x
    /// slower on random writes).
    pub fn discard(&mut self, offset: usize, len: usize) {
        match &mut self.data {
            Pages::Memory(v) => v[offset..offset + len].fill(0xff),
            Pages::File { .. } if len < HOLE_BYTES_MIN => {}
            Pages::File { file, offset: start, .. } => {
                // Without hole punching the stale bytes stay, as for a
                // small range: the erased OOB says the pages hold nothing.
                let _ = punch_hole(file, (*start + offset) as u64, len as u64);
            }
        }
    }

    /// The counters the card keeps beside its pages (a file store's
    /// header; none in memory, or where none were ever written): written
    /// through the mapping at every request, they outlive a killed process
    /// as the pages do, so that a cut loses none of them.
    pub fn kept_counters(&self) -> Option<[u64; KEPT_COUNTERS]> {
        kept_parse(&self.header.as_ref()?[KEPT_OFFSET..HEADER_BYTES])
    }

    /// Writes the kept counters (nothing for a store in memory). Each is
    /// one aligned 8-byte store: a process killed at any instruction
    /// leaves every counter old or new, never torn.
    pub fn kept_counters_set(&mut self, counters: &[u64; KEPT_COUNTERS]) {
        let Some(map) = &mut self.header else { return };
        let words = map[KEPT_OFFSET..HEADER_BYTES].as_mut_ptr().cast::<u64>();
        assert!(words.is_aligned(), "the kept counters are 8-byte aligned in the page-aligned map");
        for (i, &v) in std::iter::once(&KEPT_MARK).chain(counters).enumerate() {
            // SAFETY: in bounds of the map (KEPT_COUNTERS + 1 words up to
            // the header's end) and aligned, checked above; the map is
            // this store's own, borrowed mutably here.
            unsafe { std::ptr::write_volatile(words.add(i), v.to_le()) };
        }
    }

    /// Names a new owner in a file store's header (a card formatted anew:
    /// the header's description names the new format); nothing for a
    /// store in memory.
    pub fn owner_set(&mut self, g: &Geometry, owner: &str) {
        if let Some(map) = &mut self.header {
            header_write(map, &describe(g, owner));
        }
    }

    /// Overwrites every page's bytes, whatever its block's state (a
    /// sanitize: retired blocks and dead dies included), so that nothing
    /// written before is left in the store; in a file the pages become
    /// one hole, else (no hole punching) erased bytes. The out-of-band
    /// areas are not touched: the FTL's erase decides what a page holds.
    pub fn purge(&mut self) -> std::io::Result<()> {
        let len = self.data.get().len();
        if let Pages::File { file, offset, map, .. } = &self.data {
            if punch_hole(file, *offset as u64, len as u64).is_ok() {
                debug_assert!(map[..len.min(4096)].iter().all(|&b| b == 0), "a hole reads zeros");
                return Ok(());
            }
        }
        self.data.fill_erased(0, len)
    }
}

/// Slots of a die block.
fn block_slots(g: &Geometry) -> usize {
    g.pages_per_block as usize * g.slots_per_mpage() as usize
}

/// LBAs whose trims share a 4 KiB page of the journal (and a mark).
const TRIMS_PAGE_LBAS: usize = 4096 / 8;

/// Marks of the trim journal's pages for `slots` LBAs.
fn trim_pages(slots: usize) -> usize {
    slots.div_ceil(TRIMS_PAGE_LBAS)
}

/// The little-endian u64 at byte `at`.
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Slots and die blocks of a geometry.
fn counts(g: &Geometry) -> (usize, usize) {
    ((g.raw_bytes() / units::SLOT_BYTES) as usize, g.dies() as usize * g.blocks_per_plane as usize)
}

/// Where each area of a store file lies, for a geometry: the header,
/// the out-of-band records, the erase counts, the trims, the used marks,
/// the trimmed pages and the newest trim, then the pages (page-aligned).
struct FileLayout {
    oob_bytes: usize,
    erases_offset: usize,
    trims_offset: usize,
    used_offset: usize,
    trim_pages_offset: usize,
    trim_newest_offset: usize,
    data_offset: usize,
    total: usize,
}

impl FileLayout {
    fn of(g: &Geometry) -> FileLayout {
        let (slots, blocks) = counts(g);
        let oob_bytes = slots * OOB_BYTES;
        let erases_offset = HEADER_BYTES + oob_bytes;
        let trims_offset = erases_offset + blocks * 4;
        let used_offset = trims_offset + slots * 8;
        let trim_pages_offset = used_offset + blocks;
        let trim_newest_offset = (trim_pages_offset + trim_pages(slots)).div_ceil(8) * 8;
        let data_offset = (trim_newest_offset + 8).div_ceil(4096) * 4096;
        let total = data_offset + g.raw_bytes() as usize;
        FileLayout { oob_bytes, erases_offset, trims_offset, used_offset, trim_pages_offset, trim_newest_offset, data_offset, total }
    }
}

/// Takes the store file's lock for `access` (`path` names it).
fn lock(file: &std::fs::File, access: Access, path: &str) -> Result<(), PageStoreError> {
    let held = match access {
        Access::Own => file.try_lock(),
        Access::Look => file.try_lock_shared(),
    };
    match held {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(PageStoreError::InUse { path: path.to_string() }),
        Err(std::fs::TryLockError::Error(err)) => Err(PageStoreError::Io { path: path.to_string(), err: err.to_string() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store is held on its file: a second owner is refused whatever
    /// became of the store's lock file, lookers share it while no one owns
    /// it, and the hold goes with the store.
    #[test]
    fn a_store_file_has_one_owner_or_lookers() {
        let (g, p) = (geo(), tmp("held"));
        let (owner, _) = PageStore::file(&p, &g, "card", Access::Own).unwrap();
        let e = PageStore::file(&p, &g, "card", Access::Own).err().unwrap();
        assert!(matches!(e, PageStoreError::InUse { .. }), "{e}");
        assert!(e.to_string().contains("open in another process"), "{e}");
        assert!(matches!(PageStore::file(&p, &g, "card", Access::Look).err().unwrap(), PageStoreError::InUse { .. }));
        drop(owner);
        let (a, _) = PageStore::file(&p, &g, "card", Access::Look).unwrap();
        let (b, _) = PageStore::file(&p, &g, "card", Access::Look).unwrap();
        assert!(matches!(PageStore::file(&p, &g, "card", Access::Own).err().unwrap(), PageStoreError::InUse { .. }));
        drop((a, b));
        assert!(PageStore::file(&p, &g, "card", Access::Own).is_ok());
        let _ = std::fs::remove_file(&p);
        let _ = std::fs::remove_file(p.with_extension("system"));
    }

    fn geo() -> Geometry {
        Geometry { channels: 2, dies_per_channel: 1, planes_per_die: 2, blocks_per_plane: 4, pages_per_block: 4, page_size_bytes: 8192, oob_bytes: 448 }
    }

    fn tmp(name: &str) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("flashlab-store-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&p);
        p
    }

    /// The trim journal across a reopen: each trim's entry, its page's
    /// mark, and the newest sequence number; a page with no trim stays
    /// unmarked and reads as none.
    #[test]
    fn the_trim_journal_marks_its_pages_and_keeps_the_newest_trim() {
        let g = Geometry { blocks_per_plane: 16, pages_per_block: 64, ..geo() };
        let p = tmp("trims");
        let (mut s, _) = PageStore::file(&p, &g, "card T", Access::Own).unwrap();
        assert_eq!((s.trim_seq_newest(), s.trim_seq(700)), (0, 0));
        s.trim_seq_set(700, 5);
        s.trim_seq_set(3, 9);
        s.trim_seq_set(701, 7);
        drop(s);
        let (s, created) = PageStore::file(&p, &g, "card T", Access::Own).unwrap();
        assert!(!created);
        assert_eq!((s.trim_seq(700), s.trim_seq(701), s.trim_seq(3), s.trim_seq(4), s.trim_seq(1500)), (5, 7, 9, 0, 0));
        assert_eq!(s.trim_seq_newest(), 9);
        let marks: Vec<u8> = s.trim_pages.get().to_vec();
        assert_eq!(marks.len(), 8192 / TRIMS_PAGE_LBAS);
        assert_eq!(marks.iter().enumerate().filter(|(_, &m)| m != 0).map(|(k, _)| k).collect::<Vec<_>>(), vec![0, 1], "pages of LBAs 3 and 700-701 only");
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn a_file_store_keeps_bytes_and_lbas_across_opens_and_refuses_another_owner() {
        let (g, p) = (geo(), tmp("reopen"));
        let (mut s, created) = PageStore::file(&p, &g, "card A", Access::Own).unwrap();
        assert!(created);
        s.data_write(100, &[7]).unwrap();
        s.oob_seq_set(3, 9);
        s.oob_program(3, 42);
        s.trim_seq_set(6, 77);
        s.erase_count_set(5, 11);
        drop(s);
        let (s, created) = PageStore::file(&p, &g, "card A", Access::Own).unwrap();
        assert!(!created && s.data()[100] == 7 && s.oob_lba(3) == 42 && s.oob_seq(3) == 9 && s.oob_programmed(3) && s.slot_intact(3));
        assert_eq!((s.trim_seq(6), s.trim_seq(5)), (77, 0));
        assert!(s.oob_lba(4) == units::LBA_UNMAPPED && !s.oob_programmed(4) && s.erase_count(5) == 11);
        drop(s);
        let e = PageStore::file(&p, &g, "card B", Access::Own).err().unwrap().to_string();
        assert!(e.contains("card A") && e.contains("card B"), "{e}");
        std::fs::write(&p, b"not a store at all, just text").unwrap();
        assert!(PageStore::file(&p, &g, "card A", Access::Own).err().unwrap().to_string().contains("not a flashlab store"));
        let _ = std::fs::remove_file(&p);
    }

    /// An erased slot's out-of-band area is all zeros (the LBA kept
    /// inverted: LBA 0 is an LBA), which is what a new file reads: a
    /// clear (a format) leaves the blocks without their mark as they are
    /// and clears the others.
    #[test]
    fn zeros_are_an_erased_slot_and_a_clear_skips_unmarked_blocks() {
        let (g, p) = (geo(), tmp("zeros"));
        let (mut s, _) = PageStore::file(&p, &g, "card", Access::Own).unwrap();
        let slots = counts(&g).0;
        assert!((0..slots).all(|i| s.oob_lba(i) == units::LBA_UNMAPPED && !s.oob_programmed(i) && !s.block_used(i)), "a new store is erased");
        s.oob_program(0, 0);
        assert!(s.oob_lba(0) == 0 && s.oob_programmed(0) && s.block_used(0), "LBA 0 is an LBA, not an erased slot");
        let far = slots - 1;
        assert!(!s.block_used(far));
        // A sequence number is written before its slot commits (and
        // marks its block): a cut between them leaves it in a slot still
        // erased, which a clear need not touch.
        s.oob_seq_set(far, 9);
        s.oob_clear(0, slots);
        assert!(s.oob_lba(0) == units::LBA_UNMAPPED && !s.oob_programmed(0) && s.oob_seq(0) == 0 && !s.block_used(0), "a marked block is cleared");
        assert_eq!(s.oob_seq(far), 9, "a block without its mark is not touched");
        let _ = std::fs::remove_file(&p);
    }

    #[test]
    fn a_discarded_range_is_a_hole_in_the_file() {
        use std::os::unix::fs::MetadataExt;
        let (g, p) = (Geometry { blocks_per_plane: 64, ..geo() }, tmp("hole"));
        let (mut s, _) = PageStore::file(&p, &g, "card", Access::Own).unwrap();
        let len = s.data().len();
        s.data_write(0, &vec![1; len]).unwrap();
        let full = std::fs::metadata(&p).unwrap().blocks();
        s.discard(0, HOLE_BYTES_MIN - 4096);
        assert_eq!(std::fs::metadata(&p).unwrap().blocks(), full, "a small range is left as it is");
        s.discard(0, len);
        let after = std::fs::metadata(&p).unwrap().blocks();
        assert!(after < full, "blocks {full} -> {after}");
        let _ = std::fs::remove_file(&p);
    }

    #[test]
    fn a_purge_leaves_no_byte_written_before_and_a_new_owner_is_the_one_checked() {
        let (g, p) = (geo(), tmp("purge"));
        let (mut s, _) = PageStore::file(&p, &g, "card A", Access::Own).unwrap();
        let marker = b"flashlab purge marker";
        s.data_write(8192, marker).unwrap();
        s.sync().unwrap();
        let has_marker = || std::fs::read(&p).unwrap().windows(marker.len()).any(|w| w == marker);
        assert!(has_marker());
        s.purge().unwrap();
        s.owner_set(&g, "card B");
        s.sync().unwrap();
        assert!(!has_marker(), "the marker is gone from the file");
        drop(s);
        assert!(PageStore::file(&p, &g, "card A", Access::Own).is_err());
        assert!(!PageStore::file(&p, &g, "card B", Access::Own).unwrap().1);
        let mut m = PageStore::memory(&g);
        m.data_write(0, &[7]).unwrap();
        m.purge().unwrap();
        assert!(m.data().iter().all(|&b| b == 0xff));
        let _ = std::fs::remove_file(&p);
    }
}
