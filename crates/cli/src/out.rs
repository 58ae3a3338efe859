//! Standard output for a pipeline: a reader that goes away (`flashlab
//! devices | head -1`) ends the program quietly, with exit status 0, rather
//! than with a panic. Whatever a command writes to files it writes before
//! its summary, so nothing is lost when this happens.

use std::io::{ErrorKind, Write};

/// Writes one line to standard output (see [`outln!`]).
pub fn line(args: std::fmt::Arguments) {
    if SUMMARY_TO_STDERR.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!("{args}");
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
        if e.kind() == ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("flashlab: error: writing to standard output: {e}");
        std::process::exit(2);
    }
}

/// `println!` that ends the program quietly when standard output is closed.
macro_rules! outln {
    () => {
        $crate::out::line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::out::line(format_args!($($arg)*))
    };
}

static SUMMARY_TO_STDERR: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Where a `--json` result goes, opened before the run so that a bad path
/// is refused before any work; `-` is standard output (the console summary
/// then goes to standard error).
pub enum JsonSink {
    Stdout,
    File(std::path::PathBuf, std::fs::File),
}

impl JsonSink {
    pub fn open(path: &std::path::Path) -> anyhow::Result<JsonSink> {
        use anyhow::Context;
        if path.as_os_str() == "-" {
            SUMMARY_TO_STDERR.store(true, std::sync::atomic::Ordering::Relaxed);
            return Ok(JsonSink::Stdout);
        }
        let f = std::fs::File::create(path).with_context(|| format!("cannot write --json {}", path.display()))?;
        Ok(JsonSink::File(path.to_path_buf(), f))
    }

    /// Writes `value` as pretty JSON and a newline; says where on standard
    /// error unless `quiet` (standard output needs no saying).
    pub fn write<T: serde::Serialize>(self, value: &T, quiet: bool) -> anyhow::Result<()> {
        let text = serde_json::to_string_pretty(value)? + "\n";
        match self {
            JsonSink::Stdout => {
                let mut out = std::io::stdout().lock();
                match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                    Err(e) if e.kind() == ErrorKind::BrokenPipe => std::process::exit(0),
                    r => r?,
                }
            }
            JsonSink::File(path, mut f) => {
                use anyhow::Context;
                f.write_all(text.as_bytes()).with_context(|| format!("cannot write --json {}", path.display()))?;
                if !quiet {
                    eprintln!("results written to {}", path.display());
                }
            }
        }
        Ok(())
    }

    /// Removes a file opened for a run that failed.
    pub fn discard(self) {
        if let JsonSink::File(path, f) = self {
            drop(f);
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Said before a full-size run (even with `-q`): one easily forgets
/// `--scale`, and a full-size card takes gigabytes and up to an hour.
/// `map_bytes` is the largest card's maps; `at_once` how many run together.
pub fn full_size_note(map_bytes: u64, at_once: usize) {
    let gb = |b: u64| b as f64 / 1e9;
    let together = if at_once > 1 { format!(", {at_once} at once: {:.1} GB", gb(map_bytes * at_once as u64)) } else { String::new() };
    eprintln!(
        "flashlab: note: full size (no --scale): the maps alone take {:.1} GB a card{together}, and preconditioning takes minutes to an hour a card; --scale 64 settles where full size does, about 64 times sooner",
        gb(map_bytes)
    );
}
