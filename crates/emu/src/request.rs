//! One NBD request run on the card: where on the card it lands (its
//! volume's offset, checked against the volume's end), the card's block
//! API call, the NBD error the specification names for what went wrong,
//! and its record in the write log.

use crate::nbd::{self, Request};
use crate::writelog::{self, WriteLog};
use card::{Device, DeviceError, Volume};

/// The card's byte offset of a request to a volume, or its NBD error when
/// it reaches past the volume's end (EINVAL; ENOSPC for a write, as for
/// the card's own end). A FLUSH has no range.
pub(crate) fn volume_offset(req: &Request, volume: Volume) -> Result<u64, u32> {
    if req.kind == nbd::CMD_FLUSH || req.offset.saturating_add(req.length as u64) <= volume.bytes {
        return Ok(volume.base + req.offset);
    }
    Err(if req.kind == nbd::CMD_WRITE { nbd::ENOSPC } else { nbd::EINVAL })
}

/// A request that changed the card, in the write log, at the card's byte
/// `offset` (a volume's base added).
pub(crate) fn log_record(l: &mut WriteLog, req: &Request, offset: u64) -> std::io::Result<()> {
    match req.kind {
        nbd::CMD_WRITE => {
            l.record(writelog::WRITE, offset, req.length, &req.data)?;
            if req.flags & nbd::CMD_FLAG_FUA != 0 {
                l.record(writelog::FLUSH, 0, 0, &[])?;
            }
            Ok(())
        }
        nbd::CMD_FLUSH => l.record(writelog::FLUSH, 0, 0, &[]),
        nbd::CMD_TRIM => l.record(writelog::TRIM, offset, req.length, &[]),
        nbd::CMD_WRITE_ZEROES => l.record(writelog::WRITE_ZEROES, offset, req.length, &[]),
        _ => Ok(()),
    }
}

/// Runs one request at the card's byte `offset`: its NBD error (0 for
/// success), its modelled completion, and a READ's data.
pub(crate) fn execute<'a>(device: &mut Device, now: u64, req: &Request, offset: u64, buf: &'a mut Vec<u8>) -> (u32, u64, &'a [u8]) {
    let len = req.length as u64;
    if req.flags & !nbd::flags_allowed(req.kind) != 0 {
        return (nbd::EINVAL, now, &[]);
    }
    let result = match req.kind {
        nbd::CMD_READ => {
            if req.length > nbd::PAYLOAD_BYTES_MAX {
                return (nbd::EINVAL, now, &[]);
            }
            buf.resize(req.length as usize, 0);
            device.read_at(now, offset, buf)
        }
        // A FUA write is answered once it is durable: written, then flushed.
        nbd::CMD_WRITE if req.flags & nbd::CMD_FLAG_FUA != 0 => device.write_at(now, offset, &req.data).and_then(|t| device.flush(t)),
        nbd::CMD_WRITE => device.write_at(now, offset, &req.data),
        nbd::CMD_FLUSH => device.flush(now),
        nbd::CMD_TRIM => device.trim_at(now, offset, len),
        nbd::CMD_WRITE_ZEROES => device.write_zeroes_at(now, offset, len),
        _ => return (nbd::EINVAL, now, &[]),
    };
    match result {
        Ok(done) if req.kind == nbd::CMD_READ => (0, done, &buf[..]),
        Ok(done) => (0, done, &[]),
        Err(e) => (error_code(&e, req.kind, device.store_full()), now, &[]),
    }
}

/// The NBD error for a device error: out of range is the client's
/// mistake (EINVAL, or ENOSPC for a write past the end); anything else is
/// the card's (EIO; for a card turned read-only, EPERM, or ENOSPC for a
/// write where its store's disk is full, `store_full`).
fn error_code(e: &DeviceError, kind: u16, store_full: bool) -> u32 {
    match e {
        e if e.is_read_only() && store_full && matches!(kind, nbd::CMD_WRITE | nbd::CMD_WRITE_ZEROES) => nbd::ENOSPC,
        e if e.is_read_only() => nbd::EPERM,
        DeviceError::OutOfRange { offset, len, capacity } if offset.saturating_add(*len) > *capacity && kind == nbd::CMD_WRITE => nbd::ENOSPC,
        DeviceError::OutOfRange { .. } => nbd::EINVAL,
        _ => nbd::EIO,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the card could not read is the client's I/O error, never
    /// bytes: EIO, as a real card's uncorrectable read.
    #[test]
    fn an_unreadable_page_is_eio_to_the_client() {
        let e = DeviceError::Unreadable { offset: 4096, len: 4096 };
        assert_eq!(error_code(&e, nbd::CMD_READ, false), nbd::EIO);
        let fault = DeviceError::AlreadyFailed { target: "channel 3 die 1".into(), die: 1 };
        assert_eq!(error_code(&fault, nbd::CMD_READ, false), nbd::EIO);
    }

    /// A card turned read-only refuses every change with EPERM; one whose
    /// store's disk is full refuses writes with ENOSPC (the NBD
    /// specification's "no space"), a trim still with EPERM.
    #[test]
    fn a_read_only_card_answers_eperm_and_a_full_store_enospc_for_writes() {
        let ro = DeviceError::read_only("worn out");
        for kind in [nbd::CMD_WRITE, nbd::CMD_TRIM, nbd::CMD_WRITE_ZEROES] {
            assert_eq!(error_code(&ro, kind, false), nbd::EPERM);
        }
        assert_eq!(error_code(&ro, nbd::CMD_WRITE, true), nbd::ENOSPC);
        assert_eq!(error_code(&ro, nbd::CMD_WRITE_ZEROES, true), nbd::ENOSPC);
        assert_eq!(error_code(&ro, nbd::CMD_TRIM, true), nbd::EPERM);
    }
}
