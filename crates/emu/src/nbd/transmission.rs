//! The transmission phase: a client's requests (read, and encoded as a
//! client writes them) and the server's simple replies.

use super::*;
use std::io::Read;

/// The command flags a request of `kind` may carry: FUA on the commands
/// that change the card, NO_HOLE on WRITE_ZEROES; any other (or any on a
/// READ or FLUSH) is the client's mistake (EINVAL).
pub fn flags_allowed(kind: u16) -> u16 {
    match kind {
        CMD_WRITE | CMD_TRIM => CMD_FLAG_FUA,
        CMD_WRITE_ZEROES => CMD_FLAG_FUA | CMD_FLAG_NO_HOLE,
        _ => 0,
    }
}

/// A transmission-phase request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub flags: u16,
    pub kind: u16,
    pub handle: u64,
    pub offset: u64,
    pub length: u32,
    /// A WRITE's payload.
    pub data: Vec<u8>,
}

/// Whether `buf` begins with a whole request (its header, and a WRITE's
/// payload), so that reading it will not wait for the client.
pub fn request_whole(buf: &[u8]) -> bool {
    const HEAD: usize = 28;
    if buf.len() < HEAD {
        return false;
    }
    let kind = u16::from_be_bytes([buf[6], buf[7]]);
    let length = u32::from_be_bytes(buf[24..28].try_into().expect("4 bytes")) as usize;
    kind != CMD_WRITE || buf.len() - HEAD >= length
}

/// Reads one request; `Ok(None)` at a clean end of stream between requests.
pub fn request_read(r: &mut impl Read) -> Result<Option<Request>, ProtoError> {
    let mut head = [0u8; 28];
    match r.read(&mut head[..1])? {
        0 => return Ok(None),
        _ => r.read_exact(&mut head[1..])?,
    }
    let magic = u32::from_be_bytes(head[0..4].try_into().expect("4 bytes"));
    if magic != REQUEST_MAGIC {
        return Err(ProtoError::Violation(format!("request magic {magic:#x}, expected {REQUEST_MAGIC:#x}")));
    }
    let flags = u16::from_be_bytes(head[4..6].try_into().expect("2 bytes"));
    let kind = u16::from_be_bytes(head[6..8].try_into().expect("2 bytes"));
    let handle = u64::from_be_bytes(head[8..16].try_into().expect("8 bytes"));
    let offset = u64::from_be_bytes(head[16..24].try_into().expect("8 bytes"));
    let length = u32::from_be_bytes(head[24..28].try_into().expect("4 bytes"));
    let mut data = Vec::new();
    if kind == CMD_WRITE {
        if length > PAYLOAD_BYTES_MAX {
            // The payload cannot be skipped safely: the connection ends.
            return Err(ProtoError::Violation(format!("WRITE of {length} bytes: at most {PAYLOAD_BYTES_MAX}")));
        }
        data = vec![0; length as usize];
        r.read_exact(&mut data)?;
    }
    Ok(Some(Request { flags, kind, handle, offset, length, data }))
}

/// A simple reply: error 0 and, for a READ, its data.
pub fn reply_encode(error: u32, handle: u64, data: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(16 + data.len());
    m.extend_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
    m.extend_from_slice(&error.to_be_bytes());
    m.extend_from_slice(&handle.to_be_bytes());
    m.extend_from_slice(data);
    m
}

/// A request as a client writes it (tests and tools).
pub fn request_encode(kind: u16, flags: u16, handle: u64, offset: u64, length: u32, data: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(28 + data.len());
    m.extend_from_slice(&REQUEST_MAGIC.to_be_bytes());
    m.extend_from_slice(&flags.to_be_bytes());
    m.extend_from_slice(&kind.to_be_bytes());
    m.extend_from_slice(&handle.to_be_bytes());
    m.extend_from_slice(&offset.to_be_bytes());
    m.extend_from_slice(&length.to_be_bytes());
    m.extend_from_slice(data);
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn only_the_flags_a_command_takes_are_allowed() {
        assert_eq!(flags_allowed(CMD_READ), 0);
        assert_eq!(flags_allowed(CMD_FLUSH), 0);
        assert_eq!(flags_allowed(CMD_WRITE), CMD_FLAG_FUA);
        assert_eq!(flags_allowed(CMD_WRITE_ZEROES), CMD_FLAG_FUA | CMD_FLAG_NO_HOLE);
    }

    #[test]
    fn requests_round_trip_and_oversized_writes_are_refused() {
        let m = request_encode(CMD_WRITE, CMD_FLAG_FUA, 7, 4096, 3, b"abc");
        let r = request_read(&mut Cursor::new(m)).unwrap().unwrap();
        assert_eq!((r.kind, r.flags, r.handle, r.offset, r.data.as_slice()), (CMD_WRITE, CMD_FLAG_FUA, 7, 4096, &b"abc"[..]));
        let big = request_encode(CMD_WRITE, 0, 1, 0, PAYLOAD_BYTES_MAX + 1, b"");
        assert!(request_read(&mut Cursor::new(big)).is_err());
        assert!(request_read(&mut Cursor::new(Vec::new())).unwrap().is_none());
    }
}
