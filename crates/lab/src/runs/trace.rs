//! I/O traces: the reads and writes a host issued, each with its arrival
//! time, read from the public formats researchers share, for replay on a
//! simulated card (`procedures::replay`).
//!
//! Formats, told apart by the first line:
//! - fio's iolog, version 2 (`fio version 2 iolog`; `filename action
//!   offset length`, time advanced only by `wait` actions of microseconds,
//!   under 100 discarded as fio does) and version 3 (`fio version 3
//!   iolog`; `timestamp filename action offset length`, timestamps in
//!   microseconds from the start). File actions (add, open, close) and
//!   sync, datasync and trim are skipped and counted.
//! - SNIA IOTTA's MSR Cambridge CSV (Narayanan, Donnelly and Rowstron,
//!   "Write off-loading", FAST 2008): `Timestamp,Hostname,DiskNumber,
//!   Type,Offset,Size,ResponseTime`, the timestamp in Windows file-time
//!   units of 100 ns, `Type` Read or Write, offset and size in bytes; one
//!   disk a file.
//!
//! - blkparse's default text (blktrace, Linux): its queue (`Q`) events,
//!   `DEV CPU SEQ SECONDS PID Q RWBS SECTOR + COUNT [PROCESS]`, sectors of
//!   512 B; RWBS `R` read, `W` write, `D` discard (a trim), `F` a flush
//!   (alone, `FN`, or before a write); the summary after the events is
//!   ignored.
//! - flashlab's own capture (`flashlab trace v1`, written by `flashlab
//!   serve --trace`; format in `emu::trace`): reads and writes that
//!   succeeded, with the latency the served card modelled for each.
//!
//! A line that is none of these is refused with its number.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::io::Write;
use units::Ns;

/// One request of a trace: when it arrived (ns from the trace's first),
/// what it did and where (a flush has no range).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Record {
    pub at_ns: Ns,
    pub op: Op,
    pub offset: u64,
    pub len: u32,
}

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Op {
    Read,
    Write,
    /// Everything written before is made durable (fsync, NBD FLUSH).
    Flush,
    /// The range's data is no longer wanted (discard, NBD TRIM).
    Trim,
}

impl Record {
    /// A read or a write (the requests whose latency is measured).
    pub fn is_io(&self) -> bool {
        matches!(self.op, Op::Read | Op::Write)
    }
}

/// The formats read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    FioV2,
    FioV3,
    MsrCsv,
    Blkparse,
    Flashlab,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::FioV2 => "fio iolog v2",
            Format::FioV3 => "fio iolog v3",
            Format::MsrCsv => "MSR Cambridge CSV",
            Format::Blkparse => "blkparse text",
            Format::Flashlab => "flashlab trace",
        }
    }
}

/// A trace, checked whole and read as a stream: its I/Os are read again
/// from the file each time they are wanted (`records`), so what is held is
/// bounded (the lines out of order a window reorders, below), whatever the
/// trace's length or span.
#[derive(Debug, Clone)]
pub struct Trace {
    pub format: Format,
    spill: Spill,
    /// Reads and writes, flushes and trims.
    pub ios: u64,
    pub reads: u64,
    pub flushes: u64,
    pub trims: u64,
    /// Lines that are not requests (file actions, write-zeroes, failed
    /// requests).
    pub skipped: u64,
    /// The highest byte the trace touches, plus one.
    pub end_bytes: u64,
    /// The first arrival to the last, ns.
    pub span_ns: Ns,
    /// The reads' and writes' average latency where the trace records it
    /// (a served card's capture), ms.
    pub recorded_avg_ms: Option<f64>,
    /// The card a capture was made on: id, format and scale.
    pub captured_on: Option<(String, String, u32)>,
}

/// A checked trace's requests, in arrival order, in a file of their own
/// (removed as soon as it is made: it goes when the trace does): 24 bytes
/// a request, read back as a stream for each replay.
#[derive(Debug, Clone)]
struct Spill(std::sync::Arc<std::fs::File>);

/// A request in the spill: arrival, offset, length, operation.
const SPILLED_BYTES: usize = 24;

impl Spill {
    fn new() -> Result<Spill, TraceError> {
        use std::os::unix::fs::OpenOptionsExt;
        let failed =
            |e: std::io::Error| TraceError { line: 0, why: format!("cannot make a file for the trace's requests in {}: {e}", std::env::temp_dir().display()) };
        for n in 0u32.. {
            let p = std::env::temp_dir().join(format!("flashlab-trace-{}-{n}", std::process::id()));
            match std::fs::OpenOptions::new().read(true).write(true).create_new(true).mode(0o600).open(&p) {
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(failed(e)),
                Ok(f) => {
                    std::fs::remove_file(&p).map_err(failed)?;
                    return Ok(Spill(std::sync::Arc::new(f)));
                }
            }
        }
        unreachable!("a free name is found")
    }

    fn encode(r: &Record) -> [u8; SPILLED_BYTES] {
        let mut b = [0u8; SPILLED_BYTES];
        b[..8].copy_from_slice(&r.at_ns.to_le_bytes());
        b[8..16].copy_from_slice(&r.offset.to_le_bytes());
        b[16..20].copy_from_slice(&r.len.to_le_bytes());
        b[20] = r.op as u8;
        b
    }

    fn decode(b: &[u8]) -> Record {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let op = [Op::Read, Op::Write, Op::Flush, Op::Trim][b[20] as usize];
        Record { at_ns: u64_at(0), offset: u64_at(8), len: u32::from_le_bytes(b[16..20].try_into().expect("4 bytes")), op }
    }

    /// The requests, read from the start with a buffer of their own (any
    /// number of readers at once).
    fn read(&self) -> impl Iterator<Item = Result<Record, TraceError>> + '_ {
        use std::os::unix::fs::FileExt;
        let (mut buf, mut at, mut pos, mut len) = (vec![0u8; SPILLED_BYTES << 12], 0u64, 0usize, 0usize);
        std::iter::from_fn(move || {
            if pos == len {
                match self.0.read_at(&mut buf, at) {
                    Ok(0) => return None,
                    Ok(n) if n % SPILLED_BYTES == 0 => (pos, len, at) = (0, n, at + n as u64),
                    Ok(_) => return Some(Err(TraceError { line: 0, why: "the trace's requests were cut short in their temporary file".into() })),
                    Err(e) => return Some(Err(TraceError { line: 0, why: format!("cannot read the trace's requests back: {e}") })),
                }
            }
            let r = Spill::decode(&buf[pos..pos + SPILLED_BYTES]);
            pos += SPILLED_BYTES;
            Some(Ok(r))
        })
    }
}

/// A trace's text: a file, standard output's counterpart `-` (standard
/// input), or text in memory.
fn lines_of(path: &std::path::Path) -> Result<Lines, TraceError> {
    if path.as_os_str() == "-" {
        return Ok(Lines::new(Box::new(std::io::BufReader::with_capacity(1 << 16, std::io::stdin()))));
    }
    let f = std::fs::File::open(path).map_err(|e| TraceError { line: 0, why: format!("cannot read {}: {e}", path.display()) })?;
    if f.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(TraceError { line: 0, why: format!("{} is a directory", path.display()) });
    }
    Ok(Lines::new(Box::new(std::io::BufReader::with_capacity(1 << 16, f))))
}

/// A line of a trace that cannot be read, by its number (from 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    pub line: usize,
    pub why: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.why)
        } else {
            write!(f, "line {}: {}", self.line, self.why)
        }
    }
}

impl std::error::Error for TraceError {}

/// The most I/O a record may ask for (fio and the block layer split larger
/// requests long before).
const LEN_MAX: u64 = 64 << 20;

/// The longest line read: a trace's lines are tens of bytes, so a longer
/// one is not a trace (`/dev/zero`, a binary file).
pub const LINE_BYTES_MAX: usize = 64 << 10;

/// How far out of arrival order a trace's requests may be (a trace merged
/// from several threads' is out of it by a little): the window of lines
/// held and reordered.
pub const REORDER_WINDOW: usize = 1 << 16;

/// The longest span a trace may have, first arrival to last, ns: about
/// 146 years, so that every time derived from it fits virtual time.
pub const ARRIVAL_NS_MAX: Ns = 1 << 62;

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

impl Trace {
    /// Reads the trace at `path` (`-`: standard input, or a pipe) once,
    /// checking every line, its format told by its first line. What it
    /// holds in memory is bounded (`LINE_BYTES_MAX`, `REORDER_WINDOW`);
    /// its requests go to a temporary file, 24 bytes each.
    pub fn open(path: &std::path::Path) -> Result<Trace, TraceError> {
        Trace::check(lines_of(path)?)
    }

    /// A trace from its text (tests, small traces made in memory).
    pub fn parse(text: &str) -> Result<Trace, TraceError> {
        Trace::check(Lines::new(Box::new(std::io::Cursor::new(text.as_bytes().to_vec()))))
    }

    /// Reads every line once: the format, the counts, the span, the
    /// requests in arrival order, or the first bad line.
    fn check(lines: Lines) -> Result<Trace, TraceError> {
        let mut t = Trace {
            format: Format::FioV3,
            spill: Spill::new()?,
            ios: 0,
            reads: 0,
            flushes: 0,
            trims: 0,
            skipped: 0,
            end_bytes: 0,
            span_ns: 0,
            recorded_avg_ms: None,
            captured_on: None,
        };
        let mut records = Records::open(lines)?;
        let mut spill = std::io::BufWriter::with_capacity(1 << 16, &*t.spill.0);
        let spilled = |e: std::io::Error| TraceError { line: 0, why: format!("cannot keep the trace's requests in {}: {e}", std::env::temp_dir().display()) };
        for r in records.by_ref() {
            let r = r?;
            spill.write_all(&Spill::encode(&r)).map_err(spilled)?;
            t.span_ns = r.at_ns;
            match r.op {
                Op::Read => (t.ios, t.reads) = (t.ios + 1, t.reads + 1),
                Op::Write => t.ios += 1,
                Op::Flush => t.flushes += 1,
                Op::Trim => t.trims += 1,
            }
            t.end_bytes = t.end_bytes.max(r.offset + r.len as u64);
        }
        spill.flush().map_err(spilled)?;
        drop(spill);
        let p = records.parser;
        t.format = p.format;
        t.skipped = p.skipped;
        t.recorded_avg_ms = (p.latency_ios > 0).then(|| p.latency_ns as f64 / p.latency_ios as f64 / 1e6);
        t.captured_on = p.captured_on;
        if t.ios == 0 {
            return Err(TraceError { line: 0, why: format!("the {} holds no read or write", t.format.name()) });
        }
        Ok(t)
    }

    /// The trace's requests in arrival order, times from its first.
    pub fn records(&self) -> impl Iterator<Item = Result<Record, TraceError>> + '_ {
        self.spill.read()
    }

    /// Writes the trace as fio's iolog version 3 for `filename`
    /// (timestamps in microseconds, as fio writes them).
    pub fn write_fio_v3(&self, filename: &str, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        writeln!(w, "fio version 3 iolog\n0 {filename} add\n0 {filename} open")?;
        let mut end = 0;
        for r in self.records() {
            let r = r.map_err(std::io::Error::other)?;
            let us = r.at_ns / 1000;
            end = us;
            match r.op {
                Op::Read => writeln!(w, "{us} {filename} read {} {}", r.offset, r.len)?,
                Op::Write => writeln!(w, "{us} {filename} write {} {}", r.offset, r.len)?,
                Op::Trim => writeln!(w, "{us} {filename} trim {} {}", r.offset, r.len)?,
                Op::Flush => writeln!(w, "{us} {filename} sync")?,
            }
        }
        writeln!(w, "{end} {filename} close")
    }

    /// Writes the trace as blkparse's default text on device 8,0: one
    /// queue (Q) event an I/O, its time in seconds, its sector and sector
    /// count (512 B; an I/O not on sector bounds is widened to them), `R`
    /// or `W`. Completions are not in a trace read from a file, so none
    /// are written.
    pub fn write_blkparse(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        for (i, r) in self.records().enumerate() {
            let r = r.map_err(std::io::Error::other)?;
            let (first, end) = (r.offset / 512, (r.offset + r.len as u64).div_ceil(512));
            let rw = match r.op {
                Op::Read => "R",
                Op::Write => "W",
                Op::Flush => "FN",
                Op::Trim => "D",
            };
            writeln!(
                w,
                "  8,0    0 {:>8} {:>5}.{:09}     0  Q   {rw} {first} + {} [flashlab]",
                i + 1,
                r.at_ns / 1_000_000_000,
                r.at_ns % 1_000_000_000,
                end - first
            )?;
        }
        Ok(())
    }

    /// The trace as fio's iolog version 3, in memory (tests).
    pub fn to_fio_v3(&self, filename: &str) -> String {
        let mut v = Vec::new();
        self.write_fio_v3(filename, &mut v).expect("a checked trace in memory");
        String::from_utf8(v).expect("written as text")
    }

    /// The trace as blkparse's text, in memory (tests).
    pub fn to_blkparse(&self) -> String {
        let mut v = Vec::new();
        self.write_blkparse(&mut v).expect("a checked trace in memory");
        String::from_utf8(v).expect("written as text")
    }
}

/// A trace's requests as they are read, reordered by arrival within
/// `REORDER_WINDOW` lines, given from the first arrival.
struct Records {
    lines: Lines,
    parser: Parser,
    order: Order,
}

/// The requests read and not yet given, in arrival order.
#[derive(Default)]
struct Order {
    /// Line and request, in arrival order (equal arrivals in the file's):
    /// most traces are in order, so a request is almost always put last.
    window: std::collections::VecDeque<(usize, Record)>,
    /// The last arrival given: a later line arriving before it is further
    /// out of order than the window holds.
    given: Ns,
    /// The first arrival, on the trace's own clock.
    t0: Option<Ns>,
    /// The last line is read (or one failed).
    done: bool,
}

impl Records {
    fn open(mut lines: Lines) -> Result<Records, TraceError> {
        let (mut parser, mut order) = (None, Order::default());
        if let Some(first) = lines.next_line() {
            let (line, text) = first?;
            let p = parser.insert(Parser::of(text)?);
            // The formats whose first line is a request are read from it.
            if !p.header {
                order.take(p, line, text)?;
            }
        }
        let parser = parser.ok_or_else(|| TraceError { line: 0, why: "the trace is empty".into() })?;
        Ok(Records { lines, parser, order })
    }

    /// Reads lines until the window is full or the trace ends.
    fn fill(&mut self) -> Result<(), TraceError> {
        while !self.order.done && self.order.window.len() < REORDER_WINDOW {
            match self.lines.next_line() {
                None => self.order.done = true,
                Some(l) => {
                    let (line, text) = l?;
                    self.order.take(&mut self.parser, line, text)?;
                }
            }
        }
        Ok(())
    }
}

impl Order {
    /// One line's requests into the window.
    fn take(&mut self, parser: &mut Parser, line: usize, text: &str) -> Result<(), TraceError> {
        let rs = match parser.line(line, text)? {
            Parsed::End => {
                self.done = true;
                return Ok(());
            }
            Parsed::Records(rs) => rs,
        };
        for r in rs.into_iter().flatten() {
            if r.at_ns < self.given {
                return Err(TraceError {
                    line,
                    why: format!(
                        "arrives {} ns before a request {REORDER_WINDOW} or more lines above it: further out of arrival order than a replay reorders",
                        self.given - r.at_ns
                    ),
                });
            }
            if self.window.back().is_none_or(|(_, w)| w.at_ns <= r.at_ns) {
                self.window.push_back((line, r));
            } else {
                let at = self.window.partition_point(|(_, w)| w.at_ns <= r.at_ns);
                self.window.insert(at, (line, r));
            }
        }
        Ok(())
    }

    /// The earliest request held, its time from the trace's first.
    fn give(&mut self) -> Option<Result<Record, TraceError>> {
        let (line, mut r) = self.window.pop_front()?;
        self.given = r.at_ns;
        r.at_ns -= *self.t0.get_or_insert(r.at_ns);
        if r.at_ns > ARRIVAL_NS_MAX {
            return Some(Err(TraceError {
                line,
                why: format!("arrives {:.3e} s after the trace's first request: a trace spans at most 2^62 ns (about 146 years)", r.at_ns as f64 / 1e9),
            }));
        }
        Some(Ok(r))
    }
}

impl Iterator for Records {
    type Item = Result<Record, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        let given = self.fill().map_or_else(|e| Some(Err(e)), |()| self.order.give());
        if matches!(given, Some(Err(_))) {
            // The first error ends the trace.
            self.order.done = true;
            self.order.window.clear();
        }
        given
    }
}

/// What one line gives.
enum Parsed {
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
struct Parser {
    format: Format,
    /// Whether the first line is a header rather than a request.
    header: bool,
    skipped: u64,
    /// fio v2: the time its waits have reached, us.
    now_us: u64,
    /// MSR: the host and disk of the first line.
    disk: Option<String>,
    /// A capture: the card it names, its requests' latency.
    captured_on: Option<(String, String, u32)>,
    latency_ns: u128,
    latency_ios: u64,
}

impl Parser {
    fn of(first: &str) -> Result<Parser, TraceError> {
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

    fn line(&mut self, line: usize, l: &str) -> Result<Parsed, TraceError> {
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

fn elide(s: &str) -> String {
    if s.chars().count() > 60 {
        format!("{}...", s.chars().take(60).collect::<String>())
    } else {
        s.to_string()
    }
}

fn number<T: std::str::FromStr>(field: &str, what: &str, line: usize) -> Result<T, TraceError> {
    field.trim().parse().map_err(|_| TraceError { line, why: format!("{what} '{}' is not a whole number", elide(field.trim())) })
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

fn capture_line(line: usize, l: &str) -> Result<CaptureLine, TraceError> {
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

/// The most fields of a line kept: no line of a format read has more
/// that matter (a blkparse event's process name may add some).
const FIELDS_MAX: usize = 12;

/// A line's fields, the first `FIELDS_MAX` kept, without allocating, and
/// how many there were.
struct Fields<'a> {
    f: [&'a str; FIELDS_MAX],
    n: usize,
}

impl<'a> Fields<'a> {
    fn of(split: impl Iterator<Item = &'a str>) -> Fields<'a> {
        let mut fields = Fields { f: [""; FIELDS_MAX], n: 0 };
        for x in split {
            if fields.n < FIELDS_MAX {
                fields.f[fields.n] = x;
            }
            fields.n += 1;
        }
        fields
    }

    fn kept(&self) -> &[&'a str] {
        &self.f[..self.n.min(FIELDS_MAX)]
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

#[cfg(test)]
mod tests {
    use super::*;

    fn all(t: &Trace) -> Vec<Record> {
        t.records().collect::<Result<_, _>>().unwrap()
    }

    #[test]
    fn an_msr_csv_is_read_relative_to_its_first_io() {
        let t = Trace::parse("128166372003061629,hm,0,Write,3338740736,4096,3424\n128166372003069629,hm,0,Read,8192,512,1200\n").unwrap();
        assert_eq!(t.format, Format::MsrCsv);
        assert_eq!(all(&t)[0], Record { at_ns: 0, op: Op::Write, offset: 3338740736, len: 4096 });
        assert_eq!(all(&t)[1], Record { at_ns: 800_000, op: Op::Read, offset: 8192, len: 512 });
    }

    #[test]
    fn fio_iologs_keep_their_times_and_skip_file_actions() {
        let v3 = Trace::parse("fio version 3 iolog\n0 /dev/x add\n1 /dev/x open\n10 /dev/x write 0 4096\n25 /dev/x read 8192 8192\n30 /dev/x close\n").unwrap();
        assert_eq!((v3.format, v3.skipped, all(&v3).len()), (Format::FioV3, 3, 2));
        let synced = Trace::parse("fio version 3 iolog\n10 /dev/x write 0 4096\n12 /dev/x sync\n14 /dev/x trim 0 1048576\n").unwrap();
        let ops: Vec<Op> = all(&synced).iter().map(|r| r.op).collect();
        assert_eq!((ops, synced.ios), (vec![Op::Write, Op::Flush, Op::Trim], 1));
        assert_eq!(all(&Trace::parse(&synced.to_fio_v3("/dev/y")).unwrap()), all(&synced), "syncs and trims export too");
        assert_eq!(all(&v3)[1], Record { at_ns: 15_000, op: Op::Read, offset: 8192, len: 8192 });
        let v2 = Trace::parse("fio version 2 iolog\n/dev/x add\n/dev/x open\n/dev/x read 0 4096\n/dev/x wait 50 0\n/dev/x write 4096 4096\n/dev/x wait 2000 0\n/dev/x read 0 4096\n").unwrap();
        let at: Vec<Ns> = all(&v2).iter().map(|r| r.at_ns).collect();
        assert_eq!(at, [0, 0, 2_000_000], "waits under 100 us are discarded, as fio does");
        let blk = v3.to_blkparse();
        assert_eq!(blk.lines().nth(1), Some("  8,0    0        2     0.000015000     0  Q   R 16 + 16 [flashlab]"), "{blk}");
        let b = Trace::parse(&blk).unwrap();
        assert_eq!((b.format, all(&b)), (Format::Blkparse, all(&v3)), "blkparse text reads back the same");
        let back = Trace::parse(&v3.to_fio_v3("/dev/y")).unwrap();
        assert_eq!(all(&back), all(&v3), "an export reads back the same");
    }

    #[test]
    fn blkparse_text_gives_its_queue_events() {
        let text = "  8,0    3        1     0.000000000  4162  Q  WS 3414112 + 8 [jbd2/sda1-8]\n  8,0    3        2     0.000002000  4162  G  WS 3414112 + 8 [jbd2/sda1-8]\n  8,0    1        3     0.000500000  4170  Q FWFS 3414120 + 16 [kworker]\n  8,0    1        4     0.001000000  4170  Q  FN [kworker]\n  8,0    0        5     0.002500000  4180  Q   R 128 + 256 [fio]\n  8,0    0        6     0.003000000  4180  Q   D 0 + 2048 [fstrim]\nCPU0 (8,0):\n Reads Queued:           1,      128KiB\n";
        let t = Trace::parse(text).unwrap();
        let got: Vec<(Ns, Op, u64, u32)> = all(&t).iter().map(|r| (r.at_ns, r.op, r.offset, r.len)).collect();
        assert_eq!(
            got,
            [
                (0, Op::Write, 3414112 * 512, 4096),
                (500_000, Op::Flush, 0, 0),
                (500_000, Op::Write, 3414120 * 512, 8192),
                (1_000_000, Op::Flush, 0, 0),
                (2_500_000, Op::Read, 65536, 131072),
                (3_000_000, Op::Trim, 0, 1 << 20)
            ]
        );
        assert_eq!(t.skipped, 1, "the G event");
        let e =
            Trace::parse("  8,0    3        1     0.000000000  4162  Q  WS 3414112 + 8 [x]\n  8,0    3        2     0.000100000  4162  Q  WS 3414112 [x]\n")
                .unwrap_err();
        assert!(e.to_string().starts_with("line 2: "), "{e}");
    }

    #[test]
    fn a_flashlab_capture_keeps_its_reads_and_writes_and_their_latency() {
        let t = Trace::parse("flashlab trace v1\n# card p420m stock scale 8192\n1000 W 0 4096 0 20000 0\n1500 F 0 0 0 5000 0\n3000 R 4096 8192 0 100000 0\n4000 R 0 4096 0 0 5\n").unwrap();
        assert_eq!((t.format, t.skipped, all(&t).len()), (Format::Flashlab, 1, 3));
        assert_eq!(all(&t)[1], Record { at_ns: 500, op: Op::Flush, offset: 0, len: 0 });
        assert_eq!(all(&t)[2], Record { at_ns: 2000, op: Op::Read, offset: 4096, len: 8192 });
        assert_eq!(t.recorded_avg_ms, Some(0.06));
        assert_eq!(t.captured_on, Some(("p420m".to_string(), "stock".to_string(), 8192)));
        let e = Trace::parse("flashlab trace v1\n1000 W 0 4096 0 20000 0\n1000 X 0 4096 0 1 0\n").unwrap_err();
        assert_eq!(e.to_string(), "line 3: operation 'X': expected R, W, F, T or Z");
    }

    #[test]
    fn a_malformed_line_is_refused_by_its_number() {
        let e = Trace::parse("fio version 3 iolog\n0 /dev/x write 0 4096\n5 /dev/x write zero 4096\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.to_string().starts_with("line 3: offset 'zero'"), "{e}");
        let e = Trace::parse("1,hm,0,Write,0,4096,1\n2,hm,0,Erase,0,4096,1\n").unwrap_err();
        assert_eq!(e.to_string(), "line 2: type 'erase': expected Read or Write");
        let e = Trace::parse("1,hm,0,Write,0,4096,1\n2,hm,0,Write,0\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e = Trace::parse("1,hm,0,Write,0,4096,1\n2,hm,1,Write,0,4096,1\n").unwrap_err();
        assert!(e.to_string().contains("disk hm/1 after hm/0"), "{e}");
        let e = Trace::parse("fio version 3 iolog\n0 /dev/x write 0 0\n").unwrap_err();
        assert!(e.to_string().starts_with("line 2: length 0 bytes"), "{e}");
        assert!(Trace::parse("hello\n").unwrap_err().to_string().starts_with("line 1: 'hello' is not the start"));
        assert!(Trace::parse("fio version 3 iolog\n0 /dev/x add\n").unwrap_err().to_string().contains("holds no read or write"));
        assert!(Trace::parse("fio version 3 iolog\n0 /dev/x wait 10 0\n").unwrap_err().to_string().contains("not allowed"));
    }

    #[test]
    fn values_that_do_not_fit_are_refused_by_their_line_never_wrapped() {
        let refused = |text: &str, line: usize, why: &str| {
            let e = Trace::parse(text).unwrap_err();
            assert_eq!(e.line, line, "{e}");
            assert!(e.why.contains(why), "expected '{why}' in: {e}");
        };
        // 2^55 sectors of 512 B pass 2^64 bytes.
        refused(
            "  8,0    0        1     0.000000000  1  Q   W 0 + 8 [x]\n  8,0    0        2     0.000001000  1  Q   W 36028797018963968 + 8 [x]\n",
            2,
            "sector 36028797018963968 is too large",
        );
        refused("  8,0    0        1     18446744074.000000000  1  Q   W 0 + 8 [x]\n", 1, "past the latest time");
        refused("fio version 3 iolog\n0 /dev/x write 0 4096\n18446744073709552 /dev/x write 0 4096\n", 3, "timestamp (us) 18446744073709552");
        refused("fio version 2 iolog\n/dev/x write 0 4096\n/dev/x wait 18446744073709551615 0\n/dev/x wait 18446744073709551615 0\n", 4, "past 2^64 us");
        refused("184467440737095517,hm,0,Write,0,4096,1\n", 1, "timestamp (100 ns ticks)");
        refused("fio version 3 iolog\n0 /dev/x write 18446744073709551615 4096\n", 2, "end past byte 2^64");
        // A span past 146 years (the file-time clock itself is far later:
        // only the span counts).
        refused("fio version 3 iolog\n0 /dev/x write 0 4096\n4611686018427388 /dev/x write 0 4096\n", 3, "spans at most 2^62 ns");
        let msr = Trace::parse("128166372003061629,hm,0,Write,0,4096,1\n").unwrap();
        assert_eq!(msr.span_ns, 0);
    }

    #[test]
    fn lines_too_long_or_not_text_are_refused_by_number() {
        let long = format!("fio version 3 iolog\n0 /dev/x write 0 4096\n{}\n", "9".repeat(LINE_BYTES_MAX + 1));
        let e = Trace::parse(&long).unwrap_err();
        assert_eq!((e.line, e.why.contains("longer than 65536 bytes")), (3, true), "{e}");
        let e = Trace::parse(&"\0".repeat(1 << 20)).unwrap_err();
        assert_eq!(e.line, 1, "{e}");
        let mut bad = b"fio version 3 iolog\n0 /dev/x write 0 4096\n".to_vec();
        bad.extend_from_slice(b"1 /dev/\xff write 0 4096\n");
        let mut lines = Lines::new(Box::new(std::io::Cursor::new(bad)));
        let got: Vec<_> = std::iter::from_fn(|| lines.next_line().map(|r| r.map(|(n, l)| (n, l.to_string())))).collect();
        assert_eq!(got[2], Err(TraceError { line: 3, why: "not UTF-8 text".into() }));
    }

    #[test]
    fn out_of_order_lines_are_reordered_within_the_window_and_refused_beyond() {
        let t = Trace::parse("fio version 3 iolog\n20 /dev/x write 0 4096\n10 /dev/x read 0 4096\n10 /dev/x write 4096 4096\n").unwrap();
        let got: Vec<(Ns, Op)> = all(&t).iter().map(|r| (r.at_ns, r.op)).collect();
        assert_eq!(got, [(0, Op::Read), (0, Op::Write), (10_000, Op::Write)], "stable: equal arrivals keep their order");
        let mut text = String::from("fio version 3 iolog\n");
        for i in 0..REORDER_WINDOW + 1 {
            text.push_str(&format!("{} /dev/x write 0 4096\n", 10 + i));
        }
        text.push_str("1 /dev/x read 0 4096\n");
        let e = Trace::parse(&text).unwrap_err();
        assert_eq!(e.line, REORDER_WINDOW + 3, "{e}");
        assert!(e.why.contains("further out of arrival order"), "{e}");
    }
}
