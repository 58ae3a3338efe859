//! A trace's text as numbered lines, each bounded in length and UTF-8.

use super::{TraceError, LINE_BYTES_MAX};

/// A trace's text: a file, standard output's counterpart `-` (standard
/// input), or text in memory.
pub(super) fn lines_of(path: &std::path::Path) -> Result<Lines, TraceError> {
    if path.as_os_str() == "-" {
        return Ok(Lines::new(Box::new(std::io::BufReader::with_capacity(1 << 16, std::io::stdin()))));
    }
    let f = std::fs::File::open(path).map_err(|e| TraceError { line: 0, why: format!("cannot read {}: {e}", path.display()) })?;
    if f.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(TraceError { line: 0, why: format!("{} is a directory", path.display()) });
    }
    Ok(Lines::new(Box::new(std::io::BufReader::with_capacity(1 << 16, f))))
}

/// The lines of a text stream, numbered from 1, each at most
/// `LINE_BYTES_MAX` bytes and UTF-8, or the first that is not.
pub struct Lines {
    read: Box<dyn std::io::BufRead + Send>,
    buf: Vec<u8>,
    number: usize,
}

impl Lines {
    pub fn new(read: Box<dyn std::io::BufRead + Send>) -> Lines {
        Lines { read, buf: Vec::new(), number: 0 }
    }

    /// The next line (without its end), or none at the end.
    pub fn next_line(&mut self) -> Option<Result<(usize, &str), TraceError>> {
        use std::io::Read;
        self.buf.clear();
        self.number += 1;
        let line = self.number;
        let mut limited = (&mut self.read).take(LINE_BYTES_MAX as u64 + 1);
        match std::io::BufRead::read_until(&mut limited, b'\n', &mut self.buf) {
            Err(e) => return Some(Err(TraceError { line, why: format!("cannot read: {e}") })),
            Ok(0) => return None,
            Ok(_) => {}
        }
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        } else if self.buf.len() > LINE_BYTES_MAX {
            return Some(Err(TraceError { line, why: format!("longer than {LINE_BYTES_MAX} bytes: not a line of a trace") }));
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        Some(std::str::from_utf8(&self.buf).map(|l| (line, l)).map_err(|_| TraceError { line, why: "not UTF-8 text".into() }))
    }
}
