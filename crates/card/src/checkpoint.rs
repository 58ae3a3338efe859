//! A served card's clean shutdown: each member's FTL checkpoint in a file
//! beside its store (`member-<i>.checkpoint`), written whole (a temporary
//! file, synced, renamed) after the store is synced. The next start reads
//! it instead of scanning the media, and deletes it before serving, so
//! that a later power cut is never mounted from a stale one.

use std::io::Write;
use std::path::{Path, PathBuf};

fn path_of(dir: &Path, member: usize) -> PathBuf {
    dir.join(format!("member-{member}.checkpoint"))
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

/// A member's checkpoint, taken away: read, then deleted (and the deletion
/// synced) before the card serves. `None` where the card did not stop
/// cleanly.
pub(crate) fn take(dir: &Path, member: usize) -> std::io::Result<Option<Vec<u8>>> {
    let Some(bytes) = peek(dir, member)? else { return Ok(None) };
    std::fs::remove_file(path_of(dir, member))?;
    std::fs::File::open(dir)?.sync_all()?;
    Ok(Some(bytes))
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
