//! What a review leaves in its output directory: the results file
//! (`results.json`), CSV tables (`csv`), the charts as SVG files and a
//! self-contained HTML report with the same charts inlined (`html`).

use crate::procedures::review::ReviewResults;
use std::path::{Path, PathBuf};

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

/// Makes `dir` and proves it writable, before hours of work go into it.
pub fn out_dir_prepare(dir: &Path) -> Result<(), ReportError> {
    std::fs::create_dir_all(dir.join("charts")).map_err(io_err(dir))?;
    let probe = dir.join(".flashlab-write-test");
    std::fs::write(&probe, b"").map_err(io_err(dir))?;
    std::fs::remove_file(&probe).map_err(io_err(dir))
}

/// Everything a review leaves: results file, CSV tables, charts, report.
pub fn write_all(r: &ReviewResults, dir: &Path, results_file: bool) -> Result<Vec<PathBuf>, ReportError> {
    out_dir_prepare(dir)?;
    let mut paths = Vec::new();
    if results_file {
        let p = dir.join("results.json");
        let text = serde_json::to_string_pretty(r).expect("results serialise");
        std::fs::write(&p, text + "\n").map_err(io_err(&p))?;
        paths.push(p);
    }
    paths.extend(crate::outputs::csv::csv_tables(r, dir)?);
    paths.push(crate::outputs::html::html_report(r, dir)?);
    Ok(paths)
}
