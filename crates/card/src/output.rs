//! Every file flashlab writes where a user pointed it: results, tables,
//! charts, reports, traces, logs and the store's small files. One rule per
//! kind of path, in one place:
//!
//! - `-`, `/dev/stdout` (and `/dev/fd/1`, `/proc/self/fd/1`) are standard
//!   output; `/dev/stderr` and its aliases standard error;
//! - a regular file, or a path where nothing is yet, is written whole: a
//!   temporary file beside it (created new, never through a link someone
//!   left there), synced, renamed over it with the old file's permissions,
//!   the directory synced, so a reader finds the old file or the new one;
//! - a symbolic link is followed: its target is what is written (replaced
//!   whole if it is a regular file or absent, written through otherwise),
//!   the link itself left as it was;
//! - a named pipe or a character device (`/dev/null`, a terminal) is
//!   written through, never replaced, and so is anything under `/dev/` or
//!   `/proc/` (a shell's redirection reached through `/dev/fd/N`);
//! - a directory, a block device (a disk) and a socket are refused, with
//!   the reason.

use std::io::{Error, ErrorKind, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// How a path is written, decided once from what the path names.
#[derive(Debug, PartialEq, Eq)]
pub enum Target {
    Stdout,
    Stderr,
    /// Opened and written as it is (a pipe, a terminal, `/dev/null`).
    Through(PathBuf),
    /// A regular file (or none yet) at this path, replaced whole; the
    /// path is a link's resolved target where the user named a link.
    Replace(PathBuf),
}

/// Symbolic links followed before a path is refused as a loop.
const LINKS_MAX: usize = 40;

impl Target {
    /// What `path` names, or why flashlab will not write there.
    pub fn of(path: &Path) -> std::io::Result<Target> {
        if let Some(std) = Target::standard(path) {
            return Ok(std);
        }
        let mut at = path.to_path_buf();
        for _ in 0..LINKS_MAX {
            let meta = match std::fs::symlink_metadata(&at) {
                Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Target::Replace(at)),
                r => r?,
            };
            let kind = meta.file_type();
            if !kind.is_symlink() {
                return Target::of_kind(at, kind);
            }
            if let Some(std) = Target::standard(&at) {
                return Ok(std);
            }
            if Target::system(&at) {
                // A magic link (/proc/self/fd/N) names an open file, pipe
                // or terminal: written through, whatever it resolves to.
                return match std::fs::metadata(&at) {
                    Ok(m) if m.is_file() => Ok(Target::Through(at)),
                    Ok(m) => Target::of_kind(at, m.file_type()),
                    Err(e) => Err(e),
                };
            }
            let link = std::fs::read_link(&at)?;
            at = match at.parent() {
                Some(dir) if link.is_relative() => dir.join(link),
                _ => link,
            };
        }
        Err(Error::other(format!("more than {LINKS_MAX} symbolic links to follow (a loop?)")))
    }

    fn standard(path: &Path) -> Option<Target> {
        let s = path.as_os_str();
        if s == "-" || s == "/dev/stdout" || s == "/dev/fd/1" || s == "/proc/self/fd/1" {
            Some(Target::Stdout)
        } else if s == "/dev/stderr" || s == "/dev/fd/2" || s == "/proc/self/fd/2" {
            Some(Target::Stderr)
        } else {
            None
        }
    }

    /// Under /dev or /proc: nothing there is ever replaced.
    fn system(path: &Path) -> bool {
        path.starts_with("/dev") || path.starts_with("/proc")
    }

    fn of_kind(path: PathBuf, kind: std::fs::FileType) -> std::io::Result<Target> {
        let refuse = |what: &str| Err(Error::new(ErrorKind::InvalidInput, what.to_string()));
        if kind.is_dir() {
            refuse("it is a directory")
        } else if kind.is_block_device() {
            refuse("it is a block device (a disk): flashlab writes its outputs to files, pipes, character devices or standard output, never over a disk")
        } else if kind.is_socket() {
            refuse("it is a socket")
        } else if kind.is_fifo() || kind.is_char_device() || Target::system(&path) {
            Ok(Target::Through(path))
        } else {
            Ok(Target::Replace(path))
        }
    }

    /// Whether writing here takes standard output (a command's console
    /// summary then goes to standard error).
    pub fn is_stdout(&self) -> bool {
        *self == Target::Stdout
    }
}

/// Proves `path` can be written before any work goes into it: what it
/// names is accepted, and for a file replaced whole its directory takes a
/// new file. A pipe is not opened (that would wait for its reader).
pub fn check(path: &Path) -> std::io::Result<()> {
    match Target::of(path)? {
        Target::Stdout | Target::Stderr => Ok(()),
        Target::Through(p) => match std::fs::metadata(&p) {
            Ok(m) if m.permissions().readonly() => Err(Error::new(ErrorKind::PermissionDenied, "it is not writable")),
            r => r.map(|_| ()),
        },
        Target::Replace(p) => {
            let (probe, f) = temporary_beside(&p)?;
            drop(f);
            std::fs::remove_file(probe)
        }
    }
}

/// Makes the directory `dir` (and its parents) and proves it takes a new
/// file, before hours of work go into it; refuses a path that names
/// something else. Nothing is left in it.
pub fn dir_prepare(dir: &Path) -> std::io::Result<()> {
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => return Err(Error::new(ErrorKind::InvalidInput, "it is not a directory")),
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::NotFound => std::fs::create_dir_all(dir)?,
        Err(e) => return Err(e),
    }
    let (probe, f) = temporary_beside(&dir.join("flashlab-write-test"))?;
    drop(f);
    std::fs::remove_file(probe)
}

/// Writes `bytes` to `path` as its kind says (the module's rules): whole
/// or not at all for a file, through for a pipe or a device. A write that
/// fails (a full disk) leaves no temporary file behind.
pub fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_with(path, |w| w.write_all(bytes))
}

/// Writes what `fill` writes to `path` as [`write_whole`] does, through a
/// buffer: an output too large to hold (a trace exported) is streamed, and
/// still replaces a file only when whole.
pub fn write_with(path: &Path, fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> std::io::Result<()> {
    let buffered = |w: &mut dyn Write| -> std::io::Result<()> {
        let mut b = std::io::BufWriter::with_capacity(1 << 16, w);
        fill(&mut b)?;
        b.flush()
    };
    match Target::of(path)? {
        Target::Stdout => buffered(&mut std::io::stdout().lock()),
        Target::Stderr => buffered(&mut std::io::stderr().lock()),
        Target::Through(p) => buffered(&mut through_open(&p)?),
        Target::Replace(p) => replace(&p, buffered),
    }
}

/// A stream to `path` for an output written as it goes (a served card's
/// trace, a write log, a tool's log): standard output, a pipe or a device
/// written through, or a regular file created (or truncated) at the path
/// or at its link's target.
pub fn stream(path: &Path) -> std::io::Result<Box<dyn Write + Send>> {
    Ok(match Target::of(path)? {
        Target::Stdout => Box::new(std::io::stdout()),
        Target::Stderr => Box::new(std::io::stderr()),
        Target::Through(p) => Box::new(through_open(&p)?),
        Target::Replace(p) => Box::new(std::fs::File::create(p)?),
    })
}

/// A pipe, a device or a shell's redirection, opened as it is: never
/// created, never truncated (a `>>` redirection keeps what it holds).
fn through_open(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new().append(true).open(path)
}

/// A new file beside `path`, created exclusively (a name already there,
/// a link left by someone else included, is never opened), owner-only
/// until its contents are whole.
fn temporary_beside(path: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| Error::new(ErrorKind::InvalidInput, "it names no file"))?;
    loop {
        let mut tmp = std::ffi::OsString::from(".");
        tmp.push(name);
        tmp.push(format!(".{}-{}.tmp", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
        let tmp = dir.join(tmp);
        match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp) {
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            r => return r.map(|f| (tmp, f)),
        }
    }
}

/// The permissions a new file gets: the replaced file's, or what the
/// process's umask gives a new file.
fn mode_for(path: &Path) -> std::io::Result<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(m) = std::fs::metadata(path) {
        return Ok(m.permissions());
    }
    // The umask, read by setting it back at once (there is no other way).
    // SAFETY: umask only sets the process's mask and cannot fail.
    let mask = unsafe {
        let m = libc::umask(0o077);
        libc::umask(m);
        m
    };
    Ok(std::fs::Permissions::from_mode(0o666 & !(mask as u32)))
}

fn replace(path: &Path, fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> std::io::Result<()> {
    let mode = mode_for(path)?;
    let (tmp, mut f) = temporary_beside(path)?;
    let written = fill(&mut f).and_then(|()| f.set_permissions(mode)).and_then(|()| f.sync_all());
    drop(f);
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory of the test's own, removed when the test ends.
    struct Dir(PathBuf);
    impl Dir {
        fn path(&self) -> &Path {
            &self.0
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn dir() -> Dir {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let d = std::env::temp_dir().join(format!("flashlab-output-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    #[test]
    fn a_regular_file_is_replaced_whole_keeping_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let d = dir();
        let p = d.path().join("r.json");
        std::fs::write(&p, "old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_whole(&p, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o640);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1, "no temporary file left");
    }

    #[test]
    fn a_symlink_is_followed_and_left_a_link() {
        let d = dir();
        let target = d.path().join("target.json");
        let link = d.path().join("link.json");
        std::fs::write(&target, "old").unwrap();
        std::os::unix::fs::symlink("target.json", &link).unwrap();
        write_whole(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        // A dangling link: its target is created.
        let dangling = d.path().join("dangling.json");
        std::os::unix::fs::symlink("made.json", &dangling).unwrap();
        write_whole(&dangling, b"made").unwrap();
        assert!(std::fs::symlink_metadata(&dangling).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(d.path().join("made.json")).unwrap(), "made");
    }

    #[test]
    fn an_output_directory_is_made_or_refused_when_it_is_not_one() {
        let d = dir();
        let out = d.path().join("a/b");
        dir_prepare(&out).unwrap();
        assert!(out.is_dir());
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0, "nothing left in it");
        let file = d.path().join("file");
        std::fs::write(&file, "x").unwrap();
        assert_eq!(dir_prepare(&file).unwrap_err().to_string(), "it is not a directory");
    }

    #[test]
    fn a_link_loop_is_refused() {
        let d = dir();
        std::os::unix::fs::symlink("b", d.path().join("a")).unwrap();
        std::os::unix::fs::symlink("a", d.path().join("b")).unwrap();
        let e = write_whole(&d.path().join("a"), b"x").unwrap_err();
        assert!(e.to_string().contains("symbolic links"), "{e}");
    }

    #[test]
    fn devices_are_written_through_and_their_errors_reported() {
        write_whole(Path::new("/dev/null"), b"gone").unwrap();
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
        let e = write_whole(Path::new("/dev/full"), b"no room").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{e}");
        assert!(std::fs::metadata("/dev/full").unwrap().file_type().is_char_device());
    }

    #[test]
    fn a_named_pipe_is_written_through() {
        let d = dir();
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        write_whole(&fifo, b"through the pipe").unwrap();
        assert_eq!(reader.join().unwrap(), "through the pipe");
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    }

    /// (A socket named as an output is refused too: `cli/tests/inputs.rs`,
    /// as no crate but `emu` opens one.)
    #[test]
    fn directories_and_disks_are_refused_with_the_reason() {
        let d = dir();
        assert!(Target::of(d.path()).unwrap_err().to_string().contains("directory"));
        if let Some(disk) = ["/dev/loop0", "/dev/sda", "/dev/vda", "/dev/nvme0n1"].iter().map(Path::new).find(|p| p.exists()) {
            let e = write_whole(disk, b"x").unwrap_err();
            assert!(e.to_string().contains("block device"), "{e}");
        }
    }

    #[test]
    fn standard_streams_are_named_as_users_name_them() {
        for p in ["-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"] {
            assert_eq!(Target::of(Path::new(p)).unwrap(), Target::Stdout, "{p}");
        }
        assert_eq!(Target::of(Path::new("/dev/stderr")).unwrap(), Target::Stderr);
    }

    #[test]
    fn a_temporary_name_someone_left_is_never_written_through() {
        let d = dir();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let p = d.path().join("r.json");
        // The name the old writer used, planted as a link.
        std::os::unix::fs::symlink(&victim, d.path().join("r.json.tmp")).unwrap();
        write_whole(&p, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
    }
}
