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

mod capture;
mod fields;
mod lines;
mod parse;
mod records;
mod spill;

pub use capture::{capture_for_each, CaptureLine, Captured};
pub use lines::Lines;

use lines::lines_of;
use records::Records;
use serde::{Deserialize, Serialize};
use spill::Spill;
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
pub(super) const LEN_MAX: u64 = 64 << 20;

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
