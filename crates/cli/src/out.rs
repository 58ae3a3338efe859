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

/// Where a `--json` result goes, proven writable before the run so that a
/// bad path is refused before any work; `-` (or `/dev/stdout`) is standard output (the
/// console summary then goes to standard error). The file is written whole
/// at the end (`card::write_whole`): until then, and if the run fails or
/// is stopped, a file already there is left as it was.
pub enum JsonSink {
    Stdout,
    File(std::path::PathBuf),
}

impl JsonSink {
    pub fn open(path: &std::path::Path) -> anyhow::Result<JsonSink> {
        use anyhow::Context;
        let target = card::output::Target::of(path).with_context(|| format!("cannot write --json {}", path.display()))?;
        if target.is_stdout() {
            SUMMARY_TO_STDERR.store(true, std::sync::atomic::Ordering::Relaxed);
            return Ok(JsonSink::Stdout);
        }
        card::output::check(path).with_context(|| format!("cannot write --json {}", path.display()))?;
        Ok(JsonSink::File(path.to_path_buf()))
    }

    /// A stream of lines, each written as it comes (`monitor --json`): a
    /// file is written through, not replaced whole.
    pub fn stream(self) -> anyhow::Result<Box<dyn Write + Send>> {
        use anyhow::Context;
        Ok(match self {
            JsonSink::Stdout => Box::new(std::io::stdout()),
            JsonSink::File(path) => card::output::stream(&path).with_context(|| format!("cannot write --json {}", path.display()))?,
        })
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
            JsonSink::File(path) => {
                use anyhow::Context;
                card::write_whole(&path, text.as_bytes()).with_context(|| format!("cannot write --json {}", path.display()))?;
                if !quiet {
                    eprintln!("results written to {}", path.display());
                }
            }
        }
        Ok(())
    }
}

/// Ctrl-C during a run, a review, a calibration or a life: the first asks
/// the lab to stop at the close of the round under way and keep what was
/// measured, marked incomplete (`lab::interrupt`); a second ends the
/// program at once. Files are written whole or not at all, so neither
/// leaves one half written.
pub fn sigint_stops_the_lab() {
    extern "C" fn on_sigint(_: libc::c_int) {
        if lab::interrupt::asked() {
            // SAFETY: _exit is async-signal-safe.
            unsafe { libc::_exit(130) };
        }
        lab::interrupt::ask();
        let msg = b"\nflashlab: interrupted: stopping at the close of this round and keeping what was measured, marked incomplete (Ctrl-C again quits at once, writing nothing)\n";
        // SAFETY: write(2) is async-signal-safe; the buffer is static.
        unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
    }
    // SAFETY: installs a handler that only touches an atomic and calls
    // async-signal-safe functions.
    unsafe { libc::signal(libc::SIGINT, on_sigint as *const () as libc::sighandler_t) };
}

/// The end of a command a stop cut short, once it has written what it
/// measured: said, and exit status 130 (as a shell reports Ctrl-C).
pub fn interrupted_exit(what: &str) -> ! {
    eprintln!("flashlab: {what}");
    std::process::exit(130);
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

/// A word of a command line as a shell reads it back: as it is where it
/// holds nothing a shell treats specially, else single-quoted.
pub fn shell_word(w: &str) -> String {
    let plain = !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || "_./:=,@+-%".contains(c));
    match plain {
        true => w.to_string(),
        false => format!("'{}'", w.replace('\'', "'\\''")),
    }
}

#[cfg(test)]
mod tests {
    /// The echoed command line was once pasted back into a shell and cut
    /// at the workload's `;`.
    #[test]
    fn words_a_shell_would_split_are_quoted() {
        assert_eq!(super::shell_word("4k-write"), "4k-write");
        assert_eq!(super::shell_word("read=70;bs=4k/60:64k/40"), "'read=70;bs=4k/60:64k/40'");
        assert_eq!(super::shell_word("it's"), "'it'\\''s'");
        assert_eq!(super::shell_word(""), "''");
    }
}
