//! Each format's lines, read one at a time into requests: every value
//! in checked arithmetic, a line that cannot be read refused with its
//! number.

use super::capture::{capture_line, CaptureLine};
use super::fields::{elide, number, Fields};
use super::{Format, Op, Record, TraceError, LEN_MAX};
use units::Ns;

/// What one line gives.
pub(super) enum Parsed {
    /// Up to two requests (blkparse's flush before a write).
    Records([Option<Record>; 2]),
    /// The trace's end (blkparse's summary).
    End,
}

impl Parsed {
    const NONE: Parsed = Parsed::Records([None, None]);

    fn one(r: Record) -> Parsed {
        Parsed::Records([Some(r), None])
    }
}

/// A format's reader, line by line, with what it keeps between lines.
pub(super) struct Parser {
    pub(super) format: Format,
    /// Whether the first line is a header rather than a request.
    pub(super) header: bool,
    pub(super) skipped: u64,
    /// fio v2: the time its waits have reached, us.
    pub(super) now_us: u64,
    /// MSR: the host and disk of the first line.
    pub(super) disk: Option<String>,
    /// A capture: the card it names, its requests' latency.
    pub(super) captured_on: Option<(String, String, u32)>,
    pub(super) latency_ns: u128,
    pub(super) latency_ios: u64,
}

impl Parser {
    pub(super) fn of(first: &str) -> Result<Parser, TraceError> {
        let first = first.trim();
        let (format, header) = match first {
            "fio version 2 iolog" => (Format::FioV2, true),
            "fio version 3 iolog" => (Format::FioV3, true),
            "flashlab trace v1" => (Format::Flashlab, true),
            l if l.split(',').count() == 7 => (Format::MsrCsv, false),
            l if blkparse_event(l) => (Format::Blkparse, false),
            "" => return Err(TraceError { line: 0, why: "the trace is empty".into() }),
            l => {
                return Err(TraceError {
                    line: 1,
                    why: format!("'{}' is not the start of a trace flashlab reads: a `flashlab serve --trace` capture, an fio iolog (version 2 or 3), an MSR Cambridge CSV or blkparse text", elide(l)),
                })
            }
        };
        Ok(Parser { format, header, skipped: 0, now_us: 0, disk: None, captured_on: None, latency_ns: 0, latency_ios: 0 })
    }

    pub(super) fn line(&mut self, line: usize, l: &str) -> Result<Parsed, TraceError> {
        if l.trim().is_empty() {
            return Ok(Parsed::NONE);
        }
        match self.format {
            Format::FioV2 | Format::FioV3 => self.fio(line, l),
            Format::Flashlab => self.flashlab(line, l),
            Format::Blkparse => self.blkparse(line, l),
            Format::MsrCsv => self.msr(line, l),
        }
    }
}

/// `a` times `b`, or the line refused naming `what` when it does not fit
/// (a value read from a file never wraps).
fn times(a: u64, b: u64, what: &str, line: usize) -> Result<u64, TraceError> {
    a.checked_mul(b).ok_or_else(|| TraceError { line, why: format!("{what} {a} is too large: times {b} it passes 2^64") })
}

/// An arrival time in ns from `value` in units of `unit_ns`, refused when
/// it does not fit.
fn arrival(value: u64, unit_ns: u64, what: &str, line: usize) -> Result<Ns, TraceError> {
    value.checked_mul(unit_ns).ok_or_else(|| TraceError { line, why: format!("{what} {value} is past the latest time a trace may give (2^64 ns)") })
}

fn record(at_ns: Ns, op: Op, offset: u64, len: u64, line: usize) -> Result<Record, TraceError> {
    if op == Op::Flush {
        return Ok(Record { at_ns, op, offset: 0, len: 0 });
    }
    let max = if op == Op::Trim { u32::MAX as u64 } else { LEN_MAX };
    if len == 0 || len > max {
        return Err(TraceError { line, why: format!("length {len} bytes: a read or write moves 1 byte to 64 MiB, a trim up to 4 GiB") });
    }
    if offset.checked_add(len).is_none() {
        return Err(TraceError { line, why: format!("offset {offset} and length {len} end past byte 2^64") });
    }
    Ok(Record { at_ns, op, offset, len: len as u32 })
}

impl Parser {
    /// fio's iolog, version 2 or 3 (after its header).
    fn fio(&mut self, line: usize, l: &str) -> Result<Parsed, TraceError> {
        let v3 = self.format == Format::FioV3;
        let fields = Fields::of(l.split_whitespace());
        let f = fields.kept();
        let (at, rest) = if v3 { (Some(number::<u64>(f[0], "timestamp", line)?), &f[1..]) } else { (None, f) };
        let action = rest.get(1).copied().unwrap_or("");
        let us = at.unwrap_or(self.now_us);
        Ok(match (action, rest.len()) {
            ("add" | "open" | "close", 2) => {
                self.skipped += 1;
                Parsed::NONE
            }
            ("read" | "write" | "trim", 4) => {
                let (offset, len) = (number::<u64>(rest[2], "offset", line)?, number::<u64>(rest[3], "length", line)?);
                let op = match action {
                    "read" => Op::Read,
                    "write" => Op::Write,
                    _ => Op::Trim,
                };
                Parsed::one(record(arrival(us, 1000, "timestamp (us)", line)?, op, offset, len, line)?)
            }
            ("sync" | "datasync", 2 | 4) => Parsed::one(record(arrival(us, 1000, "timestamp (us)", line)?, Op::Flush, 0, 0, line)?),
            ("wait", 4) if !v3 => {
                let wait = number::<u64>(rest[2], "wait", line)?;
                if wait >= 100 {
                    self.now_us =
                        self.now_us.checked_add(wait).ok_or_else(|| TraceError { line, why: format!("wait {wait} us takes the time past 2^64 us") })?;
                }
                Parsed::NONE
            }
            ("wait", _) if v3 => return Err(TraceError { line, why: "'wait' is not allowed in a version 3 iolog (its timestamps carry the time)".into() }),
            _ => {
                let expect = if v3 { "timestamp filename action [offset length]" } else { "filename action [offset length]" };
                return Err(TraceError { line, why: format!("'{}' is not an iolog line: expected {expect}", elide(l.trim())) });
            }
        })
    }

    /// flashlab's capture: the requests that succeeded.
    fn flashlab(&mut self, line: usize, l: &str) -> Result<Parsed, TraceError> {
        let c = match capture_line(line, l)? {
            CaptureLine::Card { id, format, scale } => {
                self.captured_on = Some((id, format, scale));
                return Ok(Parsed::NONE);
            }
            CaptureLine::Request(c) if c.error == 0 && c.op != 'Z' => c,
            CaptureLine::Request(_) => {
                self.skipped += 1;
                return Ok(Parsed::NONE);
            }
        };
        let op = match c.op {
            'R' => Op::Read,
            'W' => Op::Write,
            'F' => Op::Flush,
            _ => Op::Trim,
        };
        let r = record(arrival(c.at_ns, 1, "arrival (ns)", line)?, op, c.offset, c.len, line)?;
        if r.is_io() {
            self.latency_ns += c.latency_ns as u128;
            self.latency_ios += 1;
        }
        Ok(Parsed::one(r))
    }

    /// blkparse's default text: its queue events (see the module's head).
    fn blkparse(&mut self, line: usize, l: &str) -> Result<Parsed, TraceError> {
        // The per-CPU and total summary follows the events.
        if l.starts_with("CPU") || l.starts_with("Total") {
            return Ok(Parsed::End);
        }
        if !blkparse_event(l) {
            return Err(TraceError { line, why: format!("'{}' is not a blkparse event line (DEV CPU SEQ SECONDS PID ACTION RWBS ...)", elide(l.trim())) });
        }
        let fields = Fields::of(l.split_whitespace());
        let f = fields.kept();
        if f[5] != "Q" {
            self.skipped += 1;
            return Ok(Parsed::NONE);
        }
        let (secs, frac) = f[3].split_once('.').expect("checked as an event");
        let frac_ns = format!("{frac:0<9}")[..9].parse::<u64>().unwrap_or(0);
        let ns = arrival(number::<u64>(secs, "seconds", line)?, 1_000_000_000, "seconds", line)?
            .checked_add(frac_ns)
            .ok_or_else(|| TraceError { line, why: format!("time {} s is past the latest time a trace may give (2^64 ns)", elide(f[3])) })?;
        let rwbs = f[6];
        let flush = rwbs.starts_with('F').then(|| record(ns, Op::Flush, 0, 0, line)).transpose()?;
        let op = if rwbs.contains('D') {
            Op::Trim
        } else if rwbs.contains('W') {
            Op::Write
        } else if rwbs.contains('R') {
            Op::Read
        } else {
            // A flush alone (FN) or an event with no data.
            return Ok(Parsed::Records([flush, None]));
        };
        let (offset, len) = match f[7..] {
            [sector, "+", count, ..] => (
                times(number::<u64>(sector, "sector", line)?, 512, "sector", line)?,
                times(number::<u64>(count, "sector count", line)?, 512, "sector count", line)?,
            ),
            _ => return Err(TraceError { line, why: format!("'{}': expected SECTOR + COUNT after {rwbs}", elide(l.trim())) }),
        };
        Ok(Parsed::Records([flush, Some(record(ns, op, offset, len, line)?)]))
    }

    /// MSR Cambridge CSV: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
    fn msr(&mut self, line: usize, l: &str) -> Result<Parsed, TraceError> {
        let fields = Fields::of(l.split(',').map(str::trim));
        let f = fields.kept();
        if fields.n != 7 {
            return Err(TraceError {
                line,
                why: format!("{} fields where an MSR Cambridge line has 7 (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime)", fields.n),
            });
        }
        let ticks = number::<u64>(f[0], "timestamp", line)?;
        let op = match f[3].to_ascii_lowercase().as_str() {
            "read" => Op::Read,
            "write" => Op::Write,
            t => return Err(TraceError { line, why: format!("type '{}': expected Read or Write", elide(t)) }),
        };
        let this = format!("{}/{}", f[1], f[2]);
        match &self.disk {
            None => self.disk = Some(this),
            Some(d) if *d != this => {
                return Err(TraceError {
                    line,
                    why: format!("disk {this} after {d}: a trace replays on one card, so give one disk's lines (MSR files hold one each)"),
                })
            }
            Some(_) => {}
        }
        let (offset, len) = (number::<u64>(f[4], "offset", line)?, number::<u64>(f[5], "size", line)?);
        // File time counts 100 ns ticks.
        Ok(Parsed::one(record(arrival(ticks, 100, "timestamp (100 ns ticks)", line)?, op, offset, len, line)?))
    }
}

/// Whether a line is a blkparse event: `MAJOR,MINOR CPU SEQ SECONDS ...`.
fn blkparse_event(l: &str) -> bool {
    let fields = Fields::of(l.split_whitespace());
    let f = fields.kept();
    f.len() >= 7
        && f[0].split_once(',').is_some_and(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok())
        && f[1].parse::<u32>().is_ok()
        && f[3].split_once('.').is_some_and(|(a, b)| a.parse::<u64>().is_ok() && b.parse::<u64>().is_ok())
}
