//! What a review leaves in its output directory: the results file
//! (`results.json`), CSV tables (`csv`), the charts as SVG files and a
//! self-contained HTML report with the same charts inlined (`html`).

use crate::procedures::review::ReviewResults;
use std::path::{Path, PathBuf};

pub use crate::outputs::files::{out_dir_prepare, ReportError};

/// The names a review's directory holds: what `write_into` writes.
pub const REVIEW_FILES: [&str; 11] = [
    "results.json",
    "precondition.csv",
    "tests.csv",
    "steady_state.csv",
    "published.csv",
    "failure_rounds.csv",
    "failures.csv",
    "pts.csv",
    "deltas.csv",
    "report.html",
    "charts",
];

/// Where a review's files went.
#[derive(Debug)]
pub struct Written {
    /// The directory that holds them: the one asked for, or (an
    /// interrupted review where a complete one was) `DIR.interrupted`.
    pub dir: PathBuf,
    pub paths: Vec<PathBuf>,
    /// The complete review the directory held, kept there.
    pub kept_complete: bool,
}

/// Everything a review leaves (results file, CSV tables, charts, report),
/// so that the directory only ever moves from one whole review to
/// another: the files are written into a new directory beside it and
/// swapped in at once (`files::dir_swap`). An incomplete review never
/// replaces a complete one: it goes to `DIR.interrupted` instead. A
/// directory that holds files of the user's own besides a review's is
/// written into file by file (each whole), never swapped.
pub fn write_all(r: &ReviewResults, dir: &Path, results_file: bool) -> Result<Written, ReportError> {
    let kept_complete = r.incomplete.is_some() && holds_complete_review(dir);
    let target = if kept_complete { crate::outputs::files::sibling(dir, "interrupted") } else { dir.to_path_buf() };
    // `.` or `/` cannot be swapped; nor can a directory of the user's own.
    let in_place =
        target.file_name().is_none() || !crate::outputs::files::holds_only(&target, &REVIEW_FILES).map_err(crate::outputs::files::io_err(&target))?;
    if in_place {
        out_dir_prepare(&target)?;
        let paths = write_into(r, &target, results_file)?;
        return Ok(Written { dir: target, paths, kept_complete });
    }
    let stage = crate::outputs::files::stage_beside(&target)?;
    let written = write_into(r, &stage, results_file).and_then(|paths| crate::outputs::files::dir_swap(&stage, &target).map(|()| paths));
    let paths = match written {
        Ok(paths) => paths,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&stage);
            return Err(e);
        }
    };
    let paths = paths.into_iter().map(|p| target.join(p.strip_prefix(&stage).expect("written into the stage"))).collect();
    Ok(Written { dir: target, paths, kept_complete })
}

/// Whether `dir` holds a review that ran to its end.
fn holds_complete_review(dir: &Path) -> bool {
    let file = dir.join("results.json");
    card::input::read_text(&file, card::input::RESULTS_BYTES_MAX)
        .ok()
        .and_then(|text| crate::procedures::review::results_parse(&text, &file.display().to_string()).ok())
        .is_some_and(|r| r.incomplete.is_none())
}

/// A review's files written into `dir`, each whole.
fn write_into(r: &ReviewResults, dir: &Path, results_file: bool) -> Result<Vec<PathBuf>, ReportError> {
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
