//! A store's owner: one process at a time may change a card's store.
//!
//! A server (or a format at rest) takes the store's lock, an advisory
//! `flock` on `STORE/lock`, exclusively for its whole life, and writes its
//! pid and purpose in the file; the kernel lets go of it when the process
//! ends, however it ends (a `kill -9` included), so a lock is never stale.
//! Looking at a card at rest (`flashlab status`) takes it shared: it waits
//! for no one, and no server can start while the files are read.
//! A second owner is refused before it changes anything on disk, with the
//! holder named.

use super::StoreError;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const FILE_NAME: &str = "lock";

/// A held lock on a store; released when the last clone is dropped.
#[derive(Debug, Clone)]
pub struct StoreLock {
    dir: PathBuf,
    /// The open lock file: the lock lives as long as it is open.
    _file: Arc<File>,
    pub exclusive: bool,
}

impl PartialEq for StoreLock {
    fn eq(&self, other: &StoreLock) -> bool {
        self.dir == other.dir && self.exclusive == other.exclusive
    }
}

impl StoreLock {
    /// Takes the store in `dir` (which must exist) for `purpose` ("serve
    /// on unix:card.sock", "format at rest"): refused, naming the holder,
    /// while another process holds it in any way.
    pub fn take(dir: &Path, purpose: &str) -> Result<StoreLock, StoreError> {
        let mut f = open(dir)?;
        match f.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Err(refusal(dir, &mut f)),
            Err(TryLockError::Error(e)) => return Err(StoreError::io(&path_of(dir), format!("cannot lock: {e}"))),
        }
        let text = format!("pid {}\n{purpose}\n", std::process::id());
        f.set_len(0).and_then(|()| f.rewind()).and_then(|()| f.write_all(text.as_bytes())).map_err(|e| StoreError::io(&path_of(dir), e))?;
        Ok(StoreLock { dir: dir.to_path_buf(), _file: Arc::new(f), exclusive: true })
    }

    /// Shares the store in `dir` with other readers, to look at a card at
    /// rest: refused, naming the holder, while a process owns it.
    pub fn share(dir: &Path) -> Result<StoreLock, StoreError> {
        let mut f = open(dir)?;
        match f.try_lock_shared() {
            Ok(()) => Ok(StoreLock { dir: dir.to_path_buf(), _file: Arc::new(f), exclusive: false }),
            Err(TryLockError::WouldBlock) => Err(refusal(dir, &mut f)),
            Err(TryLockError::Error(e)) => Err(StoreError::io(&path_of(dir), format!("cannot lock: {e}"))),
        }
    }

    /// Who owns the store in `dir` now, as the refusal would name it;
    /// `None` when no process does (or there is no store).
    pub fn holder(dir: &Path) -> Option<String> {
        let mut f = OpenOptions::new().read(true).open(path_of(dir)).ok()?;
        match f.try_lock_shared() {
            Ok(()) => None,
            Err(_) => Some(holder_of(&mut f)),
        }
    }
}

fn path_of(dir: &Path) -> PathBuf {
    dir.join(FILE_NAME)
}

fn open(dir: &Path) -> Result<File, StoreError> {
    let path = path_of(dir);
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| StoreError::io(&path, format!("cannot open the store's lock: {e}")))
}

/// The holder as its lock file names it: "pid N (purpose)" while that
/// process lives; else another process reading the store at rest (a
/// shared holder writes nothing).
fn holder_of(f: &mut File) -> String {
    let mut text = String::new();
    let _ = f.rewind().and_then(|()| f.read_to_string(&mut text));
    let mut lines = text.lines();
    let pid = lines.next().and_then(|l| l.strip_prefix("pid ")).and_then(|p| p.trim().parse::<u32>().ok());
    let purpose = lines.next().unwrap_or("").trim();
    match pid {
        Some(pid) if Path::new(&format!("/proc/{pid}")).exists() => format!("pid {pid} ({purpose})"),
        _ => "another process reading the card at rest (flashlab status)".into(),
    }
}

fn refusal(dir: &Path, f: &mut File) -> StoreError {
    StoreError::InUse { dir: dir.to_path_buf(), holder: holder_of(f) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store once served twice at the same time lost data: the second
    /// owner must be refused, with the first one named, until the first
    /// lets go.
    #[test]
    fn one_owner_at_a_time_and_readers_only_without_one() {
        let d = std::env::temp_dir().join(format!("flashlab-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        assert_eq!(StoreLock::holder(&d), None);
        let a = StoreLock::take(&d, "serve on unix:a.sock").unwrap();
        let e = StoreLock::take(&d, "serve on unix:b.sock").unwrap_err();
        assert!(matches!(&e, StoreError::InUse { holder, .. } if holder.contains("serve on unix:a.sock")), "{e}");
        assert!(e.to_string().contains("in use") && e.to_string().contains("stop it first"), "{e}");
        assert!(StoreLock::share(&d).is_err(), "no reader while a server owns the store");
        assert!(StoreLock::holder(&d).is_some());
        drop(a);
        let r1 = StoreLock::share(&d).unwrap();
        let r2 = StoreLock::share(&d).unwrap();
        assert!(StoreLock::take(&d, "format at rest").is_err(), "no owner while a reader looks");
        drop((r1, r2));
        let b = StoreLock::take(&d, "format at rest").unwrap();
        assert!(std::fs::read_to_string(d.join(FILE_NAME)).unwrap().contains("format at rest"));
        drop(b);
        assert_eq!(StoreLock::holder(&d), None);
        let _ = std::fs::remove_dir_all(&d);
    }
}
