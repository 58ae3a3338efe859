//! A checked trace's requests kept in an unlinked temporary file, 24
//! bytes each, read back as a stream for each replay.

use super::{Op, Record, TraceError};

/// A checked trace's requests, in arrival order, in a file of their own
/// (removed as soon as it is made: it goes when the trace does): 24 bytes
/// a request, read back as a stream for each replay.
#[derive(Debug, Clone)]
pub(super) struct Spill(pub(super) std::sync::Arc<std::fs::File>);

/// A request in the spill: arrival, offset, length, operation.
pub(super) const SPILLED_BYTES: usize = 24;

impl Spill {
    pub(super) fn new() -> Result<Spill, TraceError> {
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

    pub(super) fn encode(r: &Record) -> [u8; SPILLED_BYTES] {
        let mut b = [0u8; SPILLED_BYTES];
        b[..8].copy_from_slice(&r.at_ns.to_le_bytes());
        b[8..16].copy_from_slice(&r.offset.to_le_bytes());
        b[16..20].copy_from_slice(&r.len.to_le_bytes());
        b[20] = r.op as u8;
        b
    }

    pub(super) fn decode(b: &[u8]) -> Record {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let op = [Op::Read, Op::Write, Op::Flush, Op::Trim][b[20] as usize];
        Record { at_ns: u64_at(0), offset: u64_at(8), len: u32::from_le_bytes(b[16..20].try_into().expect("4 bytes")), op }
    }

    /// The requests, read from the start with a buffer of their own (any
    /// number of readers at once).
    pub(super) fn read(&self) -> impl Iterator<Item = Result<Record, TraceError>> + '_ {
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
