//! A served card's clean shutdown: each member's checkpoint in a file
//! beside its store (`member-<i>.checkpoint`), written whole (a temporary
//! file, synced, renamed) after the store is synced. The next start reads
//! it instead of scanning the media, and deletes it before serving, so
//! that a later power cut is never mounted from a stale one.
//!
//! A member's checkpoint (`member_bytes`): magic, version, the number of
//! die blocks and each one's programmed pages (what the array would learn
//! by reading every page's out-of-band area), a CRC-32 of those, then the
//! FTL's own checkpoint (with its own CRC). One an earlier flashlab wrote
//! (the FTL's alone) still mounts: its blocks' pages are read from the
//! media.

use std::io::{Read, Seek};
use std::path::{Path, PathBuf};

fn path_of(dir: &Path, member: usize) -> PathBuf {
    dir.join(format!("member-{member}.checkpoint"))
}

const PAGES_MAGIC: &[u8; 8] = b"FLPAGES\0";
const PAGES_VERSION: u32 = 1;

/// A member's checkpoint: its array's programmed pages per die block, then
/// its FTL's checkpoint.
pub(crate) fn member_bytes(next_pages: &[u16], ftl: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(20 + next_pages.len() * 2 + ftl.len());
    b.extend_from_slice(PAGES_MAGIC);
    b.extend_from_slice(&PAGES_VERSION.to_le_bytes());
    b.extend_from_slice(&(next_pages.len() as u32).to_le_bytes());
    for p in next_pages {
        b.extend_from_slice(&p.to_le_bytes());
    }
    let crc = crc32fast::hash(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    b.extend_from_slice(ftl);
    b
}

/// A member's checkpoint split: the blocks' programmed pages (none in an
/// earlier flashlab's checkpoint, which holds the FTL's alone) and the
/// FTL's checkpoint. A pages section that is torn or of another version is
/// refused by name.
#[cfg(test)]
pub(crate) fn member_split(bytes: &[u8]) -> Result<(Option<Vec<u16>>, &[u8]), PagesRefused> {
    let mut r = bytes;
    let pages = pages_read(&mut r, bytes.len() as u64)?;
    let at = if pages.is_some() { bytes.len() - r.len() } else { 0 };
    Ok((pages, &bytes[at..]))
}

/// The blocks' pages section at the start of a member's checkpoint of
/// `len` bytes: `None` when there is none (the reader, moved, is to be
/// rewound), else the pages, the reader left at the FTL's checkpoint.
fn pages_read(r: &mut impl Read, len: u64) -> Result<Option<Vec<u16>>, PagesRefused> {
    let torn = |e: std::io::Error| PagesRefused::Unreadable(e.to_string());
    let mut head = [0u8; 16];
    if len < 16 {
        return Ok(None);
    }
    r.read_exact(&mut head).map_err(torn)?;
    if !head.starts_with(PAGES_MAGIC) {
        return Ok(None);
    }
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"));
    let (version, n) = (u32_at(&head, 8), u32_at(&head, 12) as u64);
    if version != PAGES_VERSION {
        return Err(PagesRefused::Version(version));
    }
    if 16 + n * 2 + 4 > len {
        return Err(PagesRefused::Short);
    }
    let mut body = vec![0u8; n as usize * 2 + 4];
    r.read_exact(&mut body).map_err(torn)?;
    let (pages, crc) = body.split_at(n as usize * 2);
    let mut h = crc32fast::Hasher::new();
    h.update(&head);
    h.update(pages);
    if h.finalize() != u32_at(crc, 0) {
        return Err(PagesRefused::Checksum);
    }
    Ok(Some(pages.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect()))
}

/// Why a member checkpoint's pages section is not used (the media are
/// then scanned).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PagesRefused {
    #[error("the blocks' pages cannot be read ({0})")]
    Unreadable(String),
    #[error("the blocks' pages are of version {0}; this flashlab reads version {PAGES_VERSION}")]
    Version(u32),
    #[error("the blocks' pages are cut short")]
    Short,
    #[error("the blocks' pages do not match their checksum (torn or altered)")]
    Checksum,
    #[error("the checkpoint is older than its media (the store was written after it was)")]
    Stale,
}

/// A member's checkpoint file, opened: its blocks' pages (or why they
/// were refused), and a reader at the FTL's checkpoint with its length,
/// none when the pages section was refused.
pub(crate) struct Opened {
    pub pages: Result<Option<Vec<u16>>, PagesRefused>,
    pub ftl: Option<(std::io::BufReader<std::fs::File>, u64)>,
}

/// Writes a member's checkpoint whole.
pub(crate) fn write(dir: &Path, member: usize, bytes: &[u8]) -> std::io::Result<()> {
    crate::output::write_whole(&path_of(dir, member), bytes)
}

/// Whether a member's checkpoint is there.
pub(crate) fn exists(dir: &Path, member: usize) -> bool {
    path_of(dir, member).exists()
}

/// A member's checkpoint, left in place (a card looked at, not started):
/// its pages section read, its FTL's checkpoint left to be read as it is
/// mounted (a full-size card's is gigabytes). One older than the member's
/// store file (`media`: written after the checkpoint was, by a process
/// that had no right to, or restored from elsewhere) describes media that
/// are no longer there: refused (`pages` says why), so that the media
/// are scanned.
pub(crate) fn peek(dir: &Path, member: usize, media: &Path) -> std::io::Result<Option<Opened>> {
    let file = match std::fs::File::open(path_of(dir, member)) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if std::fs::metadata(media)?.modified()? > meta.modified()? {
        return Ok(Some(Opened { pages: Err(PagesRefused::Stale), ftl: None }));
    }
    let len = meta.len();
    let mut r = std::io::BufReader::new(file);
    let pages = pages_read(&mut r, len);
    let ftl = match &pages {
        Err(_) => None,
        Ok(found) => {
            if found.is_none() {
                r.seek(std::io::SeekFrom::Start(0))?;
            }
            let rest = len - r.stream_position()?;
            Some((r, rest))
        }
    };
    Ok(Some(Opened { pages, ftl }))
}

/// A member's checkpoint forgotten once its store is open to be served:
/// deleted (and the deletion synced) before the card serves, so that a
/// later power cut is never mounted from it.
pub(crate) fn forget(dir: &Path, member: usize) -> std::io::Result<()> {
    match std::fs::remove_file(path_of(dir, member)) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        r => r?,
    }
    std::fs::File::open(dir)?.sync_all()
}
