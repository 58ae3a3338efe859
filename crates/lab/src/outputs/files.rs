//! Writing a review's files: the errors that name the path, and the
//! output directory proven writable before any work goes into it.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// (The I/O error is in the message, not a source: printed once.)
    #[error("cannot write {path}: {err}")]
    Io { path: String, err: std::io::Error },
    #[error("cannot write {path}: {msg}")]
    Csv { path: String, msg: String },
}

pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |err| ReportError::Io { path: path.display().to_string(), err }
}

/// Makes `dir` and proves it writable, before hours of work go into it;
/// nothing is left in it until there is something to write.
pub fn out_dir_prepare(dir: &Path) -> Result<(), ReportError> {
    card::output::dir_prepare(dir).map_err(io_err(dir))
}

/// Writes a results file, a table, a chart or a report whole, or leaves
/// the one it replaces as it was (`card::write_whole`).
pub fn file_write(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    card::write_whole(path, bytes).map_err(io_err(path))
}

/// `dir` with `.suffix` added to its name: a sibling.
pub fn sibling(dir: &Path, suffix: &str) -> PathBuf {
    let mut name = dir.file_name().map_or_else(|| std::ffi::OsString::from("out"), |n| n.to_owned());
    name.push(format!(".{suffix}"));
    dir.with_file_name(name)
}

/// Whether `dir` is absent, or holds nothing but entries named in `names`
/// (what flashlab writes there): only then may it be swapped whole.
pub fn holds_only(dir: &Path, names: &[&str]) -> std::io::Result<bool> {
    let entries = match std::fs::read_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(true),
        r => r?,
    };
    for e in entries {
        let name = e?.file_name();
        if !names.iter().any(|n| name == *n) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// A new, empty directory beside `dir` (same file system, so it can be
/// swapped in), named by the process.
pub fn stage_beside(dir: &Path) -> Result<PathBuf, ReportError> {
    let parent = dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(io_err(parent))?;
    let name = dir.file_name().map_or_else(|| "out".into(), |n| n.to_string_lossy().to_string());
    let stage = parent.join(format!(".{name}.flashlab-{}.partial", std::process::id()));
    let _ = std::fs::remove_dir_all(&stage);
    std::fs::create_dir(&stage).map_err(io_err(&stage))?;
    Ok(stage)
}

/// Puts the whole directory `stage` where `dir` is, at once: the two are
/// exchanged (`renameat2`'s `RENAME_EXCHANGE`), so a reader finds the old
/// whole directory or the new one, never a mix; the old is then removed.
/// Where there is none yet, `stage` is renamed to it. A file system that
/// cannot exchange gets two renames (a moment with no directory there,
/// never a mix).
pub fn dir_swap(stage: &Path, dir: &Path) -> Result<(), ReportError> {
    if std::fs::symlink_metadata(dir).is_err() {
        return std::fs::rename(stage, dir).map_err(io_err(dir));
    }
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).expect("a path has no NUL");
    let (from, to) = (c(stage), c(dir));
    // SAFETY: both are valid NUL-terminated paths; renameat2 only renames.
    let exchanged = unsafe { libc::renameat2(libc::AT_FDCWD, from.as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::RENAME_EXCHANGE) } == 0;
    if !exchanged {
        let old = sibling(stage, "old");
        std::fs::rename(dir, &old).map_err(io_err(dir))?;
        std::fs::rename(stage, dir).map_err(io_err(dir))?;
        let _ = std::fs::remove_dir_all(&old);
        return Ok(());
    }
    // The old review is at the stage's name now.
    std::fs::remove_dir_all(stage).map_err(io_err(stage))
}
