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
use units::Ns;

/// One request of a trace: when it arrived (ns from the trace's first),
/// what it did and where (a flush has no range).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    pub at_ns: Ns,
    pub op: Op,
    pub offset: u64,
    pub len: u32,
}

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// A trace read: its I/Os in arrival order, and what was left out.
#[derive(Debug, Clone)]
pub struct Trace {
    pub format: Format,
    pub records: Vec<Record>,
    /// Lines that are not requests (file actions, write-zeroes, failed
    /// requests).
    pub skipped: u64,
    /// The reads' and writes' average latency where the trace records it
    /// (a served card's capture), ms.
    pub recorded_avg_ms: Option<f64>,
    /// The card a capture was made on: id, format and scale.
    pub captured_on: Option<(String, String, u32)>,
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

impl Trace {
    /// Reads a trace from its text, its format told by its first line.
    pub fn parse(text: &str) -> Result<Trace, TraceError> {
        let first = text.lines().next().unwrap_or("").trim();
        let mut t = match first {
            "fio version 2 iolog" => fio_parse(text, Format::FioV2)?,
            "fio version 3 iolog" => fio_parse(text, Format::FioV3)?,
            "flashlab trace v1" => flashlab_parse(text)?,
            l if l.split(',').count() == 7 => msr_parse(text)?,
            l if blkparse_event(l) => blkparse_parse(text)?,
            "" => return Err(TraceError { line: 0, why: "the trace is empty".into() }),
            l => {
                return Err(TraceError {
                    line: 1,
                    why: format!("'{}' is not the start of a trace flashlab reads: a `flashlab serve --trace` capture, an fio iolog (version 2 or 3), an MSR Cambridge CSV or blkparse text", elide(l)),
                })
            }
        };
        if !t.records.iter().any(Record::is_io) {
            return Err(TraceError { line: 0, why: format!("the {} holds no read or write", t.format.name()) });
        }
        // Replay needs arrival order; a trace merged from several threads
        // may be out of it by a little. The sort is stable: I/Os that
        // arrived together keep their order.
        t.records.sort_by_key(|r| r.at_ns);
        let t0 = t.records[0].at_ns;
        t.records.iter_mut().for_each(|r| r.at_ns -= t0);
        Ok(t)
    }

    /// The highest byte the trace touches, plus one.
    pub fn end_bytes(&self) -> u64 {
        self.records.iter().map(|r| r.offset + r.len as u64).max().unwrap_or(0)
    }

    /// Reads and writes (the requests whose latency is measured).
    pub fn ios(&self) -> usize {
        self.records.iter().filter(|r| r.is_io()).count()
    }

    /// The trace as fio's iolog version 3 for `filename` (timestamps in
    /// microseconds, as fio writes them).
    pub fn to_fio_v3(&self, filename: &str) -> String {
        let mut s = format!("fio version 3 iolog\n0 {filename} add\n0 {filename} open\n");
        for r in &self.records {
            let us = r.at_ns / 1000;
            match r.op {
                Op::Read => s.push_str(&format!("{us} {filename} read {} {}\n", r.offset, r.len)),
                Op::Write => s.push_str(&format!("{us} {filename} write {} {}\n", r.offset, r.len)),
                Op::Trim => s.push_str(&format!("{us} {filename} trim {} {}\n", r.offset, r.len)),
                Op::Flush => s.push_str(&format!("{us} {filename} sync\n")),
            }
        }
        let end = self.records.last().map_or(0, |r| r.at_ns / 1000);
        s.push_str(&format!("{end} {filename} close\n"));
        s
    }
}

impl Trace {
    /// The trace as blkparse's default text on device 8,0: one queue (Q)
    /// event an I/O, its time in seconds, its sector and sector count
    /// (512 B; an I/O not on sector bounds is widened to them), `R` or `W`.
    /// Completions are not in a trace read from a file, so none are
    /// written.
    pub fn to_blkparse(&self) -> String {
        let mut s = String::with_capacity(self.records.len() * 64);
        for (i, r) in self.records.iter().enumerate() {
            let (first, end) = (r.offset / 512, (r.offset + r.len as u64).div_ceil(512));
            let rw = match r.op {
                Op::Read => "R",
                Op::Write => "W",
                Op::Flush => "FN",
                Op::Trim => "D",
            };
            s.push_str(&format!(
                "  8,0    0 {:>8} {:>5}.{:09}     0  Q   {rw} {first} + {} [flashlab]\n",
                i + 1,
                r.at_ns / 1_000_000_000,
                r.at_ns % 1_000_000_000,
                end - first
            ));
        }
        s
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

fn record(at_ns: Ns, op: Op, offset: u64, len: u64, line: usize) -> Result<Record, TraceError> {
    if op == Op::Flush {
        return Ok(Record { at_ns, op, offset: 0, len: 0 });
    }
    let max = if op == Op::Trim { u32::MAX as u64 } else { LEN_MAX };
    if len == 0 || len > max {
        return Err(TraceError { line, why: format!("length {len} bytes: a read or write moves 1 byte to 64 MiB, a trim up to 4 GiB") });
    }
    Ok(Record { at_ns, op, offset, len: len as u32 })
}

/// fio's iolog, version 2 or 3 (the header line checked by the caller).
fn fio_parse(text: &str, format: Format) -> Result<Trace, TraceError> {
    let v3 = format == Format::FioV3;
    let (mut records, mut skipped, mut now_us) = (Vec::new(), 0u64, 0u64);
    for (i, l) in text.lines().enumerate().skip(1) {
        let line = i + 1;
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        let (at, rest) = if v3 { (Some(number::<u64>(f[0], "timestamp", line)?), &f[1..]) } else { (None, &f[..]) };
        let action = rest.get(1).copied().unwrap_or("");
        let us = at.unwrap_or(now_us);
        match (action, rest.len()) {
            ("add" | "open" | "close", 2) => skipped += 1,
            ("read" | "write" | "trim", 4) => {
                let (offset, len) = (number::<u64>(rest[2], "offset", line)?, number::<u64>(rest[3], "length", line)?);
                let op = match action {
                    "read" => Op::Read,
                    "write" => Op::Write,
                    _ => Op::Trim,
                };
                records.push(record(us.saturating_mul(1000), op, offset, len, line)?);
            }
            ("sync" | "datasync", 2 | 4) => records.push(record(us.saturating_mul(1000), Op::Flush, 0, 0, line)?),
            ("wait", 4) if !v3 => {
                let us = number::<u64>(rest[2], "wait", line)?;
                if us >= 100 {
                    now_us += us;
                }
            }
            ("wait", _) if v3 => return Err(TraceError { line, why: "'wait' is not allowed in a version 3 iolog (its timestamps carry the time)".into() }),
            _ => {
                let expect = if v3 { "timestamp filename action [offset length]" } else { "filename action [offset length]" };
                return Err(TraceError { line, why: format!("'{}' is not an iolog line: expected {expect}", elide(l.trim())) });
            }
        }
    }
    Ok(Trace { format, records, skipped, recorded_avg_ms: None, captured_on: None })
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

/// The lines of a flashlab capture (`ARRIVAL OP OFFSET LENGTH FLAGS
/// LATENCY ERROR`, after the header), each with its number, or the first
/// that cannot be read.
pub fn capture_lines(text: &str) -> impl Iterator<Item = Result<(usize, CaptureLine), TraceError>> + '_ {
    text.lines().enumerate().skip(1).filter(|(_, l)| !l.trim().is_empty()).map(|(i, l)| capture_line(i + 1, l).map(|c| (i + 1, c)))
}

fn capture_line(line: usize, l: &str) -> Result<CaptureLine, TraceError> {
    let f: Vec<&str> = l.split_whitespace().collect();
    if let ["#", "card", id, format, "scale", scale] = f[..] {
        return Ok(CaptureLine::Card { id: id.to_string(), format: format.to_string(), scale: number::<u32>(scale, "scale", line)? });
    }
    if f.len() != 7 {
        return Err(TraceError { line, why: format!("{} fields where a flashlab trace line has 7 (ARRIVAL OP OFFSET LENGTH FLAGS LATENCY ERROR)", f.len()) });
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

/// flashlab's capture: the requests that succeeded.
fn flashlab_parse(text: &str) -> Result<Trace, TraceError> {
    let (mut records, mut skipped, mut latency_ns, mut captured_on, mut ios) = (Vec::new(), 0u64, 0u128, None, 0u64);
    for l in capture_lines(text) {
        let c = match l? {
            (_, CaptureLine::Card { id, format, scale }) => {
                captured_on = Some((id, format, scale));
                continue;
            }
            (line, CaptureLine::Request(c)) if c.error == 0 && c.op != 'Z' => (line, c),
            _ => {
                skipped += 1;
                continue;
            }
        };
        let (line, c) = c;
        let op = match c.op {
            'R' => Op::Read,
            'W' => Op::Write,
            'F' => Op::Flush,
            _ => Op::Trim,
        };
        records.push(record(c.at_ns, op, c.offset, c.len, line)?);
        if matches!(op, Op::Read | Op::Write) {
            latency_ns += c.latency_ns as u128;
            ios += 1;
        }
    }
    let recorded_avg_ms = (ios > 0).then(|| latency_ns as f64 / ios as f64 / 1e6);
    Ok(Trace { format: Format::Flashlab, records, skipped, recorded_avg_ms, captured_on })
}

/// Whether a line is a blkparse event: `MAJOR,MINOR CPU SEQ SECONDS ...`.
fn blkparse_event(l: &str) -> bool {
    let f: Vec<&str> = l.split_whitespace().collect();
    f.len() >= 7
        && f[0].split_once(',').is_some_and(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok())
        && f[1].parse::<u32>().is_ok()
        && f[3].split_once('.').is_some_and(|(a, b)| a.parse::<u64>().is_ok() && b.parse::<u64>().is_ok())
}

/// blkparse's default text: its queue events (see the module's head).
fn blkparse_parse(text: &str) -> Result<Trace, TraceError> {
    let (mut records, mut skipped) = (Vec::new(), 0u64);
    for (i, l) in text.lines().enumerate() {
        let line = i + 1;
        if l.trim().is_empty() {
            continue;
        }
        // The per-CPU and total summary follows the events.
        if l.starts_with("CPU") || l.starts_with("Total") {
            break;
        }
        if !blkparse_event(l) {
            return Err(TraceError { line, why: format!("'{}' is not a blkparse event line (DEV CPU SEQ SECONDS PID ACTION RWBS ...)", elide(l.trim())) });
        }
        let f: Vec<&str> = l.split_whitespace().collect();
        if f[5] != "Q" {
            skipped += 1;
            continue;
        }
        let (secs, frac) = f[3].split_once('.').expect("checked as an event");
        let ns = number::<u64>(secs, "seconds", line)?.saturating_mul(1_000_000_000) + format!("{frac:0<9}")[..9].parse::<u64>().unwrap_or(0);
        let rwbs = f[6];
        let range = |f: &[&str]| -> Result<(u64, u64), TraceError> {
            match f {
                [sector, "+", count, ..] => Ok((number::<u64>(sector, "sector", line)? * 512, number::<u64>(count, "sector count", line)? * 512)),
                _ => Err(TraceError { line, why: format!("'{}': expected SECTOR + COUNT after {rwbs}", elide(l.trim())) }),
            }
        };
        if rwbs.starts_with('F') {
            records.push(record(ns, Op::Flush, 0, 0, line)?);
        }
        let op = if rwbs.contains('D') {
            Op::Trim
        } else if rwbs.contains('W') {
            Op::Write
        } else if rwbs.contains('R') {
            Op::Read
        } else {
            // A flush alone (FN) or an event with no data.
            continue;
        };
        let (offset, len) = range(&f[7..])?;
        records.push(record(ns, op, offset, len, line)?);
    }
    Ok(Trace { format: Format::Blkparse, records, skipped, recorded_avg_ms: None, captured_on: None })
}

/// MSR Cambridge CSV: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
fn msr_parse(text: &str) -> Result<Trace, TraceError> {
    let (mut records, mut disk) = (Vec::new(), None::<String>);
    for (i, l) in text.lines().enumerate() {
        let line = i + 1;
        if l.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = l.split(',').map(str::trim).collect();
        if f.len() != 7 {
            return Err(TraceError {
                line,
                why: format!("{} fields where an MSR Cambridge line has 7 (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime)", f.len()),
            });
        }
        let ticks = number::<u64>(f[0], "timestamp", line)?;
        let op = match f[3].to_ascii_lowercase().as_str() {
            "read" => Op::Read,
            "write" => Op::Write,
            t => return Err(TraceError { line, why: format!("type '{}': expected Read or Write", elide(t)) }),
        };
        let this = format!("{}/{}", f[1], f[2]);
        match &disk {
            None => disk = Some(this),
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
        records.push(record(ticks.saturating_mul(100), op, offset, len, line)?);
    }
    Ok(Trace { format: Format::MsrCsv, records, skipped: 0, recorded_avg_ms: None, captured_on: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_msr_csv_is_read_relative_to_its_first_io() {
        let t = Trace::parse("128166372003061629,hm,0,Write,3338740736,4096,3424\n128166372003069629,hm,0,Read,8192,512,1200\n").unwrap();
        assert_eq!(t.format, Format::MsrCsv);
        assert_eq!(t.records[0], Record { at_ns: 0, op: Op::Write, offset: 3338740736, len: 4096 });
        assert_eq!(t.records[1], Record { at_ns: 800_000, op: Op::Read, offset: 8192, len: 512 });
    }

    #[test]
    fn fio_iologs_keep_their_times_and_skip_file_actions() {
        let v3 = Trace::parse("fio version 3 iolog\n0 /dev/x add\n1 /dev/x open\n10 /dev/x write 0 4096\n25 /dev/x read 8192 8192\n30 /dev/x close\n").unwrap();
        assert_eq!((v3.format, v3.skipped, v3.records.len()), (Format::FioV3, 3, 2));
        let synced = Trace::parse("fio version 3 iolog\n10 /dev/x write 0 4096\n12 /dev/x sync\n14 /dev/x trim 0 1048576\n").unwrap();
        let ops: Vec<Op> = synced.records.iter().map(|r| r.op).collect();
        assert_eq!((ops, synced.ios()), (vec![Op::Write, Op::Flush, Op::Trim], 1));
        assert_eq!(Trace::parse(&synced.to_fio_v3("/dev/y")).unwrap().records, synced.records, "syncs and trims export too");
        assert_eq!(v3.records[1], Record { at_ns: 15_000, op: Op::Read, offset: 8192, len: 8192 });
        let v2 = Trace::parse("fio version 2 iolog\n/dev/x add\n/dev/x open\n/dev/x read 0 4096\n/dev/x wait 50 0\n/dev/x write 4096 4096\n/dev/x wait 2000 0\n/dev/x read 0 4096\n").unwrap();
        let at: Vec<Ns> = v2.records.iter().map(|r| r.at_ns).collect();
        assert_eq!(at, [0, 0, 2_000_000], "waits under 100 us are discarded, as fio does");
        let blk = v3.to_blkparse();
        assert_eq!(blk.lines().nth(1), Some("  8,0    0        2     0.000015000     0  Q   R 16 + 16 [flashlab]"), "{blk}");
        let b = Trace::parse(&blk).unwrap();
        assert_eq!((b.format, b.records.clone()), (Format::Blkparse, v3.records.clone()), "blkparse text reads back the same");
        let back = Trace::parse(&v3.to_fio_v3("/dev/y")).unwrap();
        assert_eq!(back.records, v3.records, "an export reads back the same");
    }

    #[test]
    fn blkparse_text_gives_its_queue_events() {
        let text = "  8,0    3        1     0.000000000  4162  Q  WS 3414112 + 8 [jbd2/sda1-8]\n  8,0    3        2     0.000002000  4162  G  WS 3414112 + 8 [jbd2/sda1-8]\n  8,0    1        3     0.000500000  4170  Q FWFS 3414120 + 16 [kworker]\n  8,0    1        4     0.001000000  4170  Q  FN [kworker]\n  8,0    0        5     0.002500000  4180  Q   R 128 + 256 [fio]\n  8,0    0        6     0.003000000  4180  Q   D 0 + 2048 [fstrim]\nCPU0 (8,0):\n Reads Queued:           1,      128KiB\n";
        let t = Trace::parse(text).unwrap();
        let got: Vec<(Ns, Op, u64, u32)> = t.records.iter().map(|r| (r.at_ns, r.op, r.offset, r.len)).collect();
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
        assert_eq!((t.format, t.skipped, t.records.len()), (Format::Flashlab, 1, 3));
        assert_eq!(t.records[1], Record { at_ns: 500, op: Op::Flush, offset: 0, len: 0 });
        assert_eq!(t.records[2], Record { at_ns: 2000, op: Op::Read, offset: 4096, len: 8192 });
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
}
