//! Writing a review's files: the errors that name the path, and the
//! output directory proven writable before any work goes into it.

use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot write {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("cannot write {path}: {msg}")]
    Csv { path: String, msg: String },
}

pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |source| ReportError::Io { path: path.display().to_string(), source }
}

/// Makes `dir` and proves it writable, before hours of work go into it;
/// nothing is left in it until there is something to write.
pub fn out_dir_prepare(dir: &Path) -> Result<(), ReportError> {
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    // Named by the process: several may prepare one directory at once
    // (a sweep's tasks).
    let probe = dir.join(format!(".flashlab-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(io_err(dir))?;
    std::fs::remove_file(&probe).map_err(io_err(dir))
}

/// Writes a results file, a table, a chart or a report whole, or leaves
/// the one it replaces as it was (`card::write_whole`).
pub fn file_write(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    card::write_whole(path, bytes).map_err(io_err(path))
}
