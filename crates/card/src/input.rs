//! Every file flashlab reads whole where a user pointed it (a profile, a
//! sweep file, figures, a results file, a store's small files): read with
//! a bound on its size, so that a device that never ends (`/dev/zero`), a
//! huge file or a pipe cannot take the memory; text must be UTF-8. Traces
//! are not read whole: `lab::runs::trace` streams them.

use std::io::{Error, ErrorKind, Read};
use std::path::Path;

/// The largest small file read (a profile, a sweep, figures, a store's
/// TOML files).
pub const SMALL_BYTES_MAX: u64 = 4 << 20;

/// The largest results file read back (a full review's with every round
/// is a few megabytes).
pub const RESULTS_BYTES_MAX: u64 = 256 << 20;

/// The text of the file at `path`, at most `limit` bytes; else why not.
pub fn read_text(path: &Path, limit: u64) -> std::io::Result<String> {
    let f = std::fs::File::open(path)?;
    if f.metadata()?.is_dir() {
        return Err(Error::new(ErrorKind::InvalidInput, "it is a directory"));
    }
    let mut bytes = Vec::new();
    f.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(Error::new(ErrorKind::InvalidData, format!("larger than {limit} bytes, more than a file of this kind holds")));
    }
    String::from_utf8(bytes).map_err(|e| Error::new(ErrorKind::InvalidData, format!("not UTF-8 text (at byte {})", e.utf8_error().valid_up_to())))
}

/// Why a TOML file was refused, never empty: the parser's message (it has
/// none for some malformed files), where in the file, and whether the
/// file ends there (cut short).
pub fn toml_why(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ");
    let message = message.as_str();
    let Some(span) = e.span() else {
        return if message.is_empty() { "malformed".into() } else { message.into() };
    };
    let before = &text[..span.start.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    let cut =
        if text[span.start.min(text.len())..].trim().is_empty() || span.start >= text.trim_end().len() { ": the file ends there (cut short?)" } else { "" };
    let what = if message.is_empty() { "malformed" } else { message };
    format!("{what}, at line {line}, column {column}{cut}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endless_huge_binary_and_directory_inputs_are_refused_with_why() {
        let e = read_text(Path::new("/dev/zero"), 1 << 10).unwrap_err();
        assert!(e.to_string().contains("larger than 1024 bytes"), "{e}");
        assert!(read_text(Path::new("/tmp"), 1 << 10).unwrap_err().to_string().contains("directory"));
        let p = std::env::temp_dir().join(format!("flashlab-input-{}", std::process::id()));
        std::fs::write(&p, b"ok\xff").unwrap();
        assert!(read_text(&p, 1 << 10).unwrap_err().to_string().contains("not UTF-8 text (at byte 2)"));
        std::fs::write(&p, b"fine").unwrap();
        assert_eq!(read_text(&p, 4).unwrap(), "fine");
        let _ = std::fs::remove_file(&p);
    }
}
