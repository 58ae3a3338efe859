//! Writing a review's files: the errors that name the path, and the
//! output directory proven writable before any work goes into it.

use std::path::Path;

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
