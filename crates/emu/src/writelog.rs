//! The server's log of what changes the card, in the order the device ran
//! it: every WRITE (with its data), TRIM, WRITE_ZEROES and FLUSH that
//! succeeded, each with the time it ran (CLOCK_MONOTONIC, nanoseconds). A
//! FUA write is a WRITE then a FLUSH. Replaying the log up to a FLUSH onto
//! a fresh image gives what the card must hold after a power cut that came
//! just after that flush: a crash-consistency check for the file system or
//! database above, as dm-log-writes gives on a kernel with device-mapper.
//!
//! Record: kind (1 byte: 1 write, 2 flush, 3 trim, 4 write zeroes), time
//! (8), offset (8), length (4), then a write's data; little-endian. The
//! log is flushed to its file at every FLUSH record.

use std::io::{BufWriter, Read, Write};
use std::path::Path;

pub const WRITE: u8 = 1;
pub const FLUSH: u8 = 2;
pub const TRIM: u8 = 3;
pub const WRITE_ZEROES: u8 = 4;

pub struct WriteLog {
    out: BufWriter<Box<dyn Write + Send>>,
}

/// One record read back.
#[derive(Debug, Clone)]
pub struct Record {
    pub kind: u8,
    pub time_ns: u64,
    pub offset: u64,
    pub length: u32,
    pub data: Vec<u8>,
}

/// CLOCK_MONOTONIC in nanoseconds: comparable with other processes' reads.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime fills the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl WriteLog {
    pub fn create(path: &Path) -> std::io::Result<WriteLog> {
        Ok(WriteLog { out: BufWriter::with_capacity(1 << 20, card::output::stream(path)?) })
    }

    pub fn record(&mut self, kind: u8, offset: u64, length: u32, data: &[u8]) -> std::io::Result<()> {
        self.out.write_all(&[kind])?;
        self.out.write_all(&monotonic_ns().to_le_bytes())?;
        self.out.write_all(&offset.to_le_bytes())?;
        self.out.write_all(&length.to_le_bytes())?;
        self.out.write_all(data)?;
        if kind == FLUSH {
            self.out.flush()?;
        }
        Ok(())
    }

    pub fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }

    /// Every whole record of a log (a record cut short at its end, by a
    /// kill, is left out).
    pub fn read(path: &Path) -> std::io::Result<Vec<Record>> {
        let mut bytes = Vec::new();
        std::fs::File::open(path)?.read_to_end(&mut bytes)?;
        let mut out = Vec::new();
        let mut at = 0;
        while at + 21 <= bytes.len() {
            let kind = bytes[at];
            let time_ns = u64::from_le_bytes(bytes[at + 1..at + 9].try_into().expect("8"));
            let offset = u64::from_le_bytes(bytes[at + 9..at + 17].try_into().expect("8"));
            let length = u32::from_le_bytes(bytes[at + 17..at + 21].try_into().expect("4"));
            let data_len = if kind == WRITE { length as usize } else { 0 };
            if at + 21 + data_len > bytes.len() {
                break;
            }
            out.push(Record { kind, time_ns, offset, length, data: bytes[at + 21..at + 21 + data_len].to_vec() });
            at += 21 + data_len;
        }
        Ok(out)
    }
}
