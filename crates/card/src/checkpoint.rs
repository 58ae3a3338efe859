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

use std::io::Write;
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
pub(crate) fn member_split(bytes: &[u8]) -> Result<(Option<Vec<u16>>, &[u8]), String> {
    if !bytes.starts_with(PAGES_MAGIC) {
        return Ok((None, bytes));
    }
    let u32_at = |at: usize| bytes.get(at..at + 4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")));
    let (Some(version), Some(n)) = (u32_at(8), u32_at(12)) else { return Err("the blocks' pages are cut short".into()) };
    if version != PAGES_VERSION {
        return Err(format!("the blocks' pages are of version {version}; this flashlab reads version {PAGES_VERSION}"));
    }
    let end = 16 + n as usize * 2;
    let Some(crc) = u32_at(end) else { return Err("the blocks' pages are cut short".into()) };
    if crc32fast::hash(&bytes[..end]) != crc {
        return Err("the blocks' pages do not match their checksum (torn or altered)".into());
    }
    let pages = bytes[16..end].chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
    Ok((Some(pages), &bytes[end + 4..]))
}

/// Writes a member's checkpoint whole.
pub(crate) fn write(dir: &Path, member: usize, bytes: &[u8]) -> std::io::Result<()> {
    write_whole(&path_of(dir, member), bytes)
}

/// Writes a file whole, or leaves it as it was: a temporary file beside
/// it, synced, renamed over it, the directory synced. The one way
/// flashlab writes a file a reader must never find half written (the
/// store's small files, results files, reports).
pub fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::File::open(dir)?.sync_all()
}

/// Whether a member's checkpoint is there.
pub(crate) fn exists(dir: &Path, member: usize) -> bool {
    path_of(dir, member).exists()
}

/// A member's checkpoint, left in place (a card looked at, not started).
pub(crate) fn peek(dir: &Path, member: usize) -> std::io::Result<Option<Vec<u8>>> {
    match std::fs::read(path_of(dir, member)) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
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

/// A versioned TOML file of the store's directory (`what` names its kind
/// in errors): none where there is no file; one that does not parse, or
/// whose `version` is not `expected`, is refused by name.
pub(crate) fn toml_load<T: serde::de::DeserializeOwned>(
    dir: &Path,
    name: &str,
    what: &str,
    version: impl Fn(&T) -> u32,
    expected: u32,
) -> Result<Option<T>, String> {
    let path = dir.join(name);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let v: T = toml::from_str(&text).map_err(|e| format!("{}: not a {what} this flashlab reads ({})", path.display(), e.message()))?;
    let found = version(&v);
    if found != expected {
        return Err(format!("{}: {what} version {found}; this flashlab reads version {expected}", path.display()));
    }
    Ok(Some(v))
}
