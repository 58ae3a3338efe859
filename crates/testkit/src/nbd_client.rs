//! A small NBD client, for the tests and the benchmark: the fixed newstyle
//! handshake with NBD_OPT_EXPORT_NAME, then requests sent and replies
//! read on one stream (several may be in flight; simple replies only).

use emu::nbd::{self, ProtoError};
use std::collections::HashMap;
use std::io::{BufReader, BufWriter, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

pub struct Client {
    reader: BufReader<UnixStream>,
    writer: BufWriter<UnixStream>,
    /// The export's size in bytes and transmission flags.
    pub size: u64,
    pub flags: u16,
    /// READs in flight: their lengths by handle (a reply's data length).
    reads: HashMap<u64, u32>,
}

/// One reply: its handle, its NBD error (0: success) and a READ's data.
#[derive(Debug)]
pub struct Reply {
    pub handle: u64,
    pub error: u32,
    pub data: Vec<u8>,
}

impl Client {
    /// Connects to `export` on a Unix socket.
    pub fn connect(socket: &Path, export: &str) -> Result<Client, ProtoError> {
        let s = UnixStream::connect(socket)?;
        let mut reader = BufReader::new(s.try_clone()?);
        let mut writer = BufWriter::new(s);
        let mut head = [0u8; 18];
        reader.read_exact(&mut head)?;
        if u64::from_be_bytes(head[0..8].try_into().expect("8")) != nbd::NBDMAGIC || u64::from_be_bytes(head[8..16].try_into().expect("8")) != nbd::IHAVEOPT {
            return Err(ProtoError::Violation("not an NBD newstyle server".into()));
        }
        writer.write_all(&(nbd::FLAG_C_FIXED_NEWSTYLE | nbd::FLAG_C_NO_ZEROES).to_be_bytes())?;
        writer.write_all(&nbd::IHAVEOPT.to_be_bytes())?;
        writer.write_all(&nbd::OPT_EXPORT_NAME.to_be_bytes())?;
        writer.write_all(&(export.len() as u32).to_be_bytes())?;
        writer.write_all(export.as_bytes())?;
        writer.flush()?;
        let mut info = [0u8; 10];
        reader.read_exact(&mut info)?;
        let size = u64::from_be_bytes(info[0..8].try_into().expect("8"));
        let flags = u16::from_be_bytes(info[8..10].try_into().expect("2"));
        Ok(Client { reader, writer, size, flags, reads: HashMap::new() })
    }

    /// Sends one request (buffered: [`Client::push`] sends what is buffered).
    pub fn send(&mut self, kind: u16, flags: u16, handle: u64, offset: u64, length: u32, data: &[u8]) -> Result<(), ProtoError> {
        if kind == nbd::CMD_READ {
            self.reads.insert(handle, length);
        }
        self.writer.write_all(&nbd::request_encode(kind, flags, handle, offset, length, data))?;
        Ok(())
    }

    /// Sends raw bytes (tests of a server's handling of broken clients).
    pub fn send_raw(&mut self, bytes: &[u8]) -> Result<(), ProtoError> {
        self.writer.write_all(bytes)?;
        Ok(self.writer.flush()?)
    }

    pub fn push(&mut self) -> Result<(), ProtoError> {
        Ok(self.writer.flush()?)
    }

    /// Reads the next reply.
    pub fn reply(&mut self) -> Result<Reply, ProtoError> {
        let mut head = [0u8; 16];
        self.reader.read_exact(&mut head)?;
        if u32::from_be_bytes(head[0..4].try_into().expect("4")) != nbd::SIMPLE_REPLY_MAGIC {
            return Err(ProtoError::Violation("reply magic".into()));
        }
        let error = u32::from_be_bytes(head[4..8].try_into().expect("4"));
        let handle = u64::from_be_bytes(head[8..16].try_into().expect("8"));
        let mut data = Vec::new();
        if let Some(len) = self.reads.remove(&handle) {
            if error == 0 {
                data = vec![0; len as usize];
                self.reader.read_exact(&mut data)?;
            }
        }
        Ok(Reply { handle, error, data })
    }

    /// One request and its reply, nothing else in flight.
    pub fn call(&mut self, kind: u16, flags: u16, offset: u64, length: u32, data: &[u8]) -> Result<Reply, ProtoError> {
        self.send(kind, flags, u64::MAX, offset, length, data)?;
        self.push()?;
        self.reply()
    }
}
