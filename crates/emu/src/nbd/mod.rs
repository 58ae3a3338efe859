//! The NBD protocol, server side, from its specification (the
//! NetworkBlockDevice project's `doc/proto.md`): the fixed newstyle
//! handshake with NBD_OPT_EXPORT_NAME, LIST, INFO, GO, ABORT and STARTTLS
//! (other options refused with NBD_REP_ERR_UNSUP; where the server
//! requires TLS, everything but STARTTLS and ABORT refused with
//! NBD_REP_ERR_TLS_REQD until the client starts it), and the transmission phase's
//! requests and simple replies. Pure parsing and encoding over `Read` and
//! `Write`: no sockets, no device.
//!
//! The handshake (`handshake`) and the transmission phase
//! (`transmission`) each in a module of their own; what both use (the
//! protocol's numbers, its limits, its errors) here.

use std::io;

mod handshake;
mod transmission;

pub use handshake::{negotiate, options};
pub use transmission::{flags_allowed, reply_encode, request_encode, request_read, request_whole, Request};

pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
pub const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
pub const REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;

pub const FLAG_FIXED_NEWSTYLE: u16 = 1;
pub const FLAG_NO_ZEROES: u16 = 2;
pub const FLAG_C_FIXED_NEWSTYLE: u32 = 1;
pub const FLAG_C_NO_ZEROES: u32 = 2;

pub const OPT_EXPORT_NAME: u32 = 1;
pub const OPT_ABORT: u32 = 2;
pub const OPT_LIST: u32 = 3;
pub const OPT_STARTTLS: u32 = 5;
pub const OPT_INFO: u32 = 6;
pub const OPT_GO: u32 = 7;

pub const REP_ACK: u32 = 1;
pub const REP_SERVER: u32 = 2;
pub const REP_INFO: u32 = 3;
pub const REP_ERR_UNSUP: u32 = (1 << 31) + 1;
pub const REP_ERR_INVALID: u32 = (1 << 31) + 3;
pub const REP_ERR_TLS_REQD: u32 = (1 << 31) + 5;
pub const REP_ERR_UNKNOWN: u32 = (1 << 31) + 6;

pub const INFO_EXPORT: u16 = 0;
pub const INFO_NAME: u16 = 1;
pub const INFO_DESCRIPTION: u16 = 2;
pub const INFO_BLOCK_SIZE: u16 = 3;

pub const TFLAG_HAS_FLAGS: u16 = 1;
pub const TFLAG_SEND_FLUSH: u16 = 4;
pub const TFLAG_SEND_FUA: u16 = 8;
pub const TFLAG_SEND_TRIM: u16 = 32;
pub const TFLAG_SEND_WRITE_ZEROES: u16 = 64;
pub const TFLAG_CAN_MULTI_CONN: u16 = 256;

pub const CMD_READ: u16 = 0;
pub const CMD_WRITE: u16 = 1;
pub const CMD_DISC: u16 = 2;
pub const CMD_FLUSH: u16 = 3;
pub const CMD_TRIM: u16 = 4;
pub const CMD_WRITE_ZEROES: u16 = 6;
pub const CMD_FLAG_FUA: u16 = 1;

pub const EPERM: u32 = 1;
pub const EIO: u32 = 5;
pub const EINVAL: u32 = 22;
pub const ENOSPC: u32 = 28;
pub const ENOTSUP: u32 = 95;

/// The largest option payload a client may send (a name and a few info
/// requests need far less).
pub const OPTION_BYTES_MAX: u32 = 64 * 1024;
/// The largest request payload: what NBD_INFO_BLOCK_SIZE announces, and
/// what qemu and the Linux client send at most.
pub const PAYLOAD_BYTES_MAX: u32 = 32 * 1024 * 1024;

/// The longest string the protocol allows (export names among them).
pub const NAME_BYTES_MAX: usize = 4096;

/// NBD_CMD_FLAG_NO_HOLE: a WRITE_ZEROES that must allocate.
pub const CMD_FLAG_NO_HOLE: u16 = 2;

pub const BLOCK_MIN: u32 = 512;
pub const BLOCK_PREFERRED: u32 = 4096;

/// An export as the handshake presents it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Export {
    pub name: String,
    pub description: String,
    pub size_bytes: u64,
    pub flags: u16,
}

/// How a handshake ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Negotiated {
    /// The client chose this export (its index); transmission follows.
    Export(usize),
    /// The client aborted, or ended the handshake.
    Abort,
    /// The client asked for TLS and was told to go ahead: the TLS
    /// handshake follows on the socket, then the options go on over it
    /// (`options`, with `Tls::Started`).
    StartTls,
}

/// TLS in a handshake: what the server offers and where the client is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tls {
    /// The server offers none: STARTTLS is not supported.
    Off,
    /// The server requires it and the client has not started it: only
    /// STARTTLS and ABORT are answered.
    Required,
    /// The client started it: the options go on over TLS.
    Started,
}

#[derive(Debug, thiserror::Error)]
pub enum ProtoError {
    #[error(transparent)]
    Io(#[from] io::Error),
    #[error("protocol violation: {0}")]
    Violation(String),
    /// The client let a time limit pass (what it did not do in time).
    #[error("{0}")]
    Late(String),
}

impl ProtoError {
    /// A read or write that waited past its socket's time limit, as
    /// `Late(what)`; any other error as it is.
    pub fn late(self, what: impl FnOnce() -> String) -> ProtoError {
        match &self {
            ProtoError::Io(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => ProtoError::Late(what()),
            _ => self,
        }
    }
}
