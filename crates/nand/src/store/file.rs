//! A store's file: its header (what the file holds, the layout's
//! version, the kept counters), its pages written with positioned writes
//! and read through a read-only mapping, and the file system's calls it
//! makes (allocating the dense areas, punching holes).

use super::PageStoreError;
use crate::Geometry;
use std::fs::File;
use std::path::Path;

/// The header's magic and the file layout's version.
pub const STORE_MAGIC: &[u8; 8] = b"FLASHLAB";
/// Version 4: a slot's out-of-band LBA is kept inverted (an erased area
/// is all zeros). Version 5: the trim journal's pages are marked and its
/// newest sequence number kept, so that a mount reads only what it needs.
pub const STORE_VERSION: u32 = 5;
/// The header occupies the file's first 4 KiB.
pub(super) const HEADER_BYTES: usize = 4096;
/// Counters the card keeps in the header's last bytes (see
/// [`PageStore::kept_counters`]): a mark, then the counters.
pub const KEPT_COUNTERS: usize = 15;
pub(super) const KEPT_OFFSET: usize = HEADER_BYTES - (KEPT_COUNTERS + 1) * 8;
/// The mark of kept counters written by this layout (a header from before
/// them holds zeros there).
pub(super) const KEPT_MARK: u64 = u64::from_le_bytes(*b"KEPTCNT1");

/// A store's pages: in memory, or in a file written with positioned
/// writes and read through a read-only mapping of it.
pub(super) enum Pages {
    Memory(Vec<u8>),
    File { map: memmap2::Mmap, file: File, offset: usize, len: usize },
}

impl Pages {
    pub(super) fn get(&self) -> &[u8] {
        match self {
            Pages::Memory(v) => v,
            Pages::File { map, .. } => map,
        }
    }

    /// Writes `bytes` at `at` (from the pages' start).
    pub(super) fn write(&mut self, at: usize, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Pages::Memory(v) => {
                v[at..at + bytes.len()].copy_from_slice(bytes);
                Ok(())
            }
            Pages::File { file, offset, len, .. } => {
                use std::os::unix::fs::FileExt;
                assert!(at + bytes.len() <= *len, "a write within the pages");
                file.write_all_at(bytes, (*offset + at) as u64)
            }
        }
    }

    /// `len` bytes from `at` erased (0xff).
    pub(super) fn fill_erased(&mut self, at: usize, len: usize) -> std::io::Result<()> {
        let ff = vec![0xffu8; len.min(1 << 20)];
        let mut done = 0;
        while done < len {
            let n = ff.len().min(len - done);
            self.write(at + done, &ff[..n])?;
            done += n;
        }
        Ok(())
    }
}

/// What a store's header says it holds.
pub(super) fn describe(g: &Geometry, owner: &str) -> String {
    format!(
        "{owner}; geometry {}ch x {}dies x {}planes x {}blocks x {}pages x {}B",
        g.channels, g.dies_per_channel, g.planes_per_die, g.blocks_per_plane, g.pages_per_block, g.page_size_bytes
    )
}

/// Kept counters from a header's last bytes, where the mark says there
/// are some.
pub(super) fn kept_parse(b: &[u8]) -> Option<[u64; KEPT_COUNTERS]> {
    let word = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    (word(0) == KEPT_MARK).then(|| std::array::from_fn(|i| word(i + 1)))
}

/// The kept counters of the store file at `path`, read without opening
/// it as a store (a card at rest looked at): none where it holds none.
pub fn kept_counters_read(path: &Path) -> std::io::Result<Option<[u64; KEPT_COUNTERS]>> {
    use std::os::unix::fs::FileExt;
    let mut b = vec![0u8; HEADER_BYTES - KEPT_OFFSET];
    File::open(path)?.read_exact_at(&mut b, KEPT_OFFSET as u64)?;
    Ok(kept_parse(&b))
}

pub(super) fn header_write(h: &mut [u8], described: &str) {
    h[..8].copy_from_slice(STORE_MAGIC);
    h[8..12].copy_from_slice(&STORE_VERSION.to_le_bytes());
    let d = described.as_bytes();
    // The description never reaches the kept counters.
    let n = d.len().min(KEPT_OFFSET - 16);
    h[12..16].copy_from_slice(&(n as u32).to_le_bytes());
    h[16..16 + n].copy_from_slice(&d[..n]);
}

pub(super) fn header_check(file: &File, path: &str, expected: &str) -> Result<(), PageStoreError> {
    use std::os::unix::fs::FileExt;
    let mut h = vec![0u8; HEADER_BYTES];
    let n = file.read_at(&mut h, 0).map_err(|err| PageStoreError::Io { path: path.into(), err: err.to_string() })?;
    if n < 16 || &h[..8] != STORE_MAGIC {
        return Err(PageStoreError::NotAStore { path: path.into() });
    }
    let version = u32::from_le_bytes([h[8], h[9], h[10], h[11]]);
    if version != STORE_VERSION {
        return Err(PageStoreError::Version { path: path.into(), found: version, expected: STORE_VERSION });
    }
    let len = (u32::from_le_bytes([h[12], h[13], h[14], h[15]]) as usize).min(KEPT_OFFSET - 16);
    let found = String::from_utf8_lossy(&h[16..16 + len]).to_string();
    if found != expected {
        return Err(PageStoreError::Mismatch { path: path.into(), found, expected: expected.into() });
    }
    Ok(())
}

/// Gives the file's first `len` bytes their disk.
pub(super) fn allocate(f: &File, len: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: posix_fallocate on our own open file descriptor; no memory
    // is passed.
    match unsafe { libc::posix_fallocate(f.as_raw_fd(), 0, len as libc::off_t) } {
        0 => Ok(()),
        e => Err(std::io::Error::from_raw_os_error(e)),
    }
}

#[cfg(target_os = "linux")]
pub(super) fn punch_hole(f: &File, offset: u64, len: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: fallocate on our own open file descriptor; no memory is passed.
    let r = unsafe { libc::fallocate(f.as_raw_fd(), libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, offset as i64, len as i64) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
pub(super) fn punch_hole(_f: &File, _offset: u64, _len: u64) -> std::io::Result<()> {
    Err(std::io::Error::other("no hole punching here"))
}
