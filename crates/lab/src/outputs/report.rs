//! What a review leaves in its output directory: the results file
//! (`results.json`), CSV tables (`csv`), the charts as SVG files and a
//! self-contained HTML report with the same charts inlined (`html`).

use crate::procedures::review::ReviewResults;
use std::path::{Path, PathBuf};

pub use crate::outputs::files::{out_dir_prepare, ReportError};

/// Everything a review leaves: results file, CSV tables, charts, report.
pub fn write_all(r: &ReviewResults, dir: &Path, results_file: bool) -> Result<Vec<PathBuf>, ReportError> {
    out_dir_prepare(dir)?;
    let mut paths = Vec::new();
    if results_file {
        let p = dir.join("results.json");
        let text = serde_json::to_string_pretty(r).expect("results serialise");
        crate::outputs::files::file_write(&p, (text + "\n").as_bytes())?;
        paths.push(p);
    }
    paths.extend(crate::outputs::csv::csv_tables(r, dir)?);
    paths.push(crate::outputs::html::html_report(r, dir)?);
    Ok(paths)
}
