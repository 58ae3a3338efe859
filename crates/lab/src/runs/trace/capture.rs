//! flashlab's own capture (`flashlab trace v1`, written by `flashlab
//! serve --trace`), line by line, with what the served card recorded.

use super::fields::{elide, number, Fields};
use super::lines::lines_of;
use super::TraceError;
use units::Ns;

/// A line of a flashlab capture, after its first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaptureLine {
    /// `# card ID FORMAT scale N`: the card it was captured on.
    Card {
        id: String,
        format: String,
        scale: u32,
    },
    Request(Captured),
}

/// A request of a flashlab capture as the served card recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Captured {
    /// Arrival on the card's clock, ns (not rebased).
    pub at_ns: Ns,
    /// `R`, `W`, `F`, `T` or `Z` (write zeroes).
    pub op: char,
    pub offset: u64,
    pub len: u64,
    /// The card's modelled service time, ns.
    pub latency_ns: u64,
    /// The NBD error returned, 0 for success.
    pub error: u32,
}

/// Each line of a flashlab capture at `path` (`ARRIVAL OP OFFSET LENGTH
/// FLAGS LATENCY ERROR`, after the header) given to `each` with its
/// number, read as a stream; the first that cannot be read ends it.
pub fn capture_for_each(path: &std::path::Path, mut each: impl FnMut(usize, CaptureLine) -> Result<(), TraceError>) -> Result<(), TraceError> {
    let mut lines = lines_of(path)?;
    while let Some(l) = lines.next_line() {
        let (line, text) = l?;
        if line == 1 || text.trim().is_empty() {
            continue;
        }
        each(line, capture_line(line, text)?)?;
    }
    Ok(())
}

pub(super) fn capture_line(line: usize, l: &str) -> Result<CaptureLine, TraceError> {
    let fields = Fields::of(l.split_whitespace());
    let f = fields.kept();
    if let ["#", "card", id, format, "scale", scale] = f[..] {
        return Ok(CaptureLine::Card { id: id.to_string(), format: format.to_string(), scale: number::<u32>(scale, "scale", line)? });
    }
    if fields.n != 7 {
        return Err(TraceError { line, why: format!("{} fields where a flashlab trace line has 7 (ARRIVAL OP OFFSET LENGTH FLAGS LATENCY ERROR)", fields.n) });
    }
    let op = match f[1] {
        o @ ("R" | "W" | "F" | "T" | "Z") => o.chars().next().expect("one letter"),
        op => return Err(TraceError { line, why: format!("operation '{}': expected R, W, F, T or Z", elide(op)) }),
    };
    u16::from_str_radix(f[4], 16).map_err(|_| TraceError { line, why: format!("flags '{}' are not hex", elide(f[4])) })?;
    Ok(CaptureLine::Request(Captured {
        at_ns: number(f[0], "arrival", line)?,
        op,
        offset: number(f[2], "offset", line)?,
        len: number(f[3], "length", line)?,
        latency_ns: number(f[5], "latency", line)?,
        error: number(f[6], "error", line)?,
    }))
}
