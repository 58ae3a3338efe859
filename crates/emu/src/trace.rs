//! The served card's I/O trace (`flashlab serve --trace FILE`): every
//! request the card ran, one line each, for replay on any card in virtual
//! time (`flashlab replay`, which also exports it as fio's iolog).
//!
//! The format, text: a first line `flashlab trace v1`, a second naming
//! the card the trace was captured on (`# card ID FORMAT scale N`), then
//! one line a request, fields separated by one space:
//!
//! `ARRIVAL OP OFFSET LENGTH FLAGS LATENCY ERROR`
//!
//! - ARRIVAL: the request's arrival on the card's clock, ns (the clock of
//!   `--timing`: virtual time scaled from the wall clock);
//! - OP: `R` read, `W` write, `F` flush, `T` trim, `Z` write zeroes;
//! - OFFSET, LENGTH: bytes, on the whole card (a volume's base added);
//! - FLAGS: the NBD command flags, hex (`1` FUA);
//! - LATENCY: the card's modelled service time, ns (0 for an error);
//! - ERROR: the NBD error returned, 0 for success.
//!
//! Lines are buffered; the file is flushed at every FLUSH request, at
//! least once a second while requests come, when the card falls idle and
//! when it stops, so a kill loses at most the last second.

use crate::nbd::{self, Request};
use std::io::{BufWriter, Write};
use std::path::Path;

/// The first line of a trace file.
pub const TRACE_HEADER: &str = "flashlab trace v1";

pub struct TraceLog {
    out: BufWriter<Box<dyn Write + Send>>,
    /// When the buffer was last written out, and whether lines wait in it.
    flushed: std::time::Instant,
    pending: bool,
}

/// The longest lines wait in the buffer while requests come.
const FLUSH_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

impl TraceLog {
    /// A new trace of the card `id` in `format` at `scale`.
    pub fn create(path: &Path, id: &str, format: &str, scale: u32) -> std::io::Result<TraceLog> {
        let mut out = BufWriter::with_capacity(1 << 20, card::output::stream(path)?);
        writeln!(out, "{TRACE_HEADER}\n# card {id} {format} scale {scale}")?;
        out.flush()?;
        Ok(TraceLog { out, flushed: std::time::Instant::now(), pending: false })
    }

    /// One request the card ran at `arrival_ns`, at the card's byte
    /// `offset`, its service `latency_ns` and its NBD `error`.
    pub fn record(&mut self, arrival_ns: u64, req: &Request, offset: u64, latency_ns: u64, error: u32) -> std::io::Result<()> {
        let op = match req.kind {
            nbd::CMD_READ => 'R',
            nbd::CMD_WRITE => 'W',
            nbd::CMD_FLUSH => 'F',
            nbd::CMD_TRIM => 'T',
            nbd::CMD_WRITE_ZEROES => 'Z',
            _ => '?',
        };
        writeln!(self.out, "{arrival_ns} {op} {offset} {} {:x} {latency_ns} {error}", req.length, req.flags)?;
        self.pending = true;
        if req.kind == nbd::CMD_FLUSH || self.flushed.elapsed() >= FLUSH_EVERY {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes out the lines waiting, if any.
    pub fn flush(&mut self) -> std::io::Result<()> {
        if self.pending {
            self.out.flush()?;
            self.pending = false;
        }
        self.flushed = std::time::Instant::now();
        Ok(())
    }
}
