//! The generation oracle: every slot a test writes carries its own LBA and
//! a generation (a number that grows with every write the test sends), so
//! that a read tells which write it returned, or that it returned zeros,
//! another slot's data or torn bytes. What a slot may read is then a range
//! of generations: no older than the newest the card owes it
//! (acknowledged with power-loss protection; flushed, or written with FUA,
//! without), no newer than the newest sent, and never one from before a
//! trim or a loss.

use units::SLOT_BYTES;

/// A slot's bytes for write `generation` of `lba`: the LBA and the
/// generation in its first 16 bytes, the rest a byte of the generation.
pub fn stamp(lba: u64, generation: u64) -> Vec<u8> {
    let mut v = vec![(generation % 251) as u8; SLOT_BYTES as usize];
    v[..8].copy_from_slice(&lba.to_le_bytes());
    v[8..16].copy_from_slice(&generation.to_le_bytes());
    v
}

/// What a slot read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    Zeros,
    Generation(u64),
}

/// What is wrong with what a slot read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ReadWrong {
    #[error("slot {lba} holds slot {holder}'s data")]
    OtherSlot { lba: u64, holder: u64 },
    #[error("slot {lba} is torn or garbled")]
    Torn { lba: u64 },
    #[error("slot {lba} reads zeros, but generation {owed} was owed")]
    ZerosOwed { lba: u64, owed: u64 },
    #[error("slot {lba} reads generation {found}, {owed} was owed")]
    Older { lba: u64, found: u64, owed: u64 },
    #[error("slot {lba} reads generation {found}, newest sent {sent}")]
    Newer { lba: u64, found: u64, sent: u64 },
    #[error("slot {lba} reads generation {found}, from before its trim or loss at {floor}")]
    BeforeFloor { lba: u64, found: u64, floor: u64 },
}

/// Reads slot `lba`'s bytes: zeros, or one of its own stamps whole; else
/// what is wrong with them (another slot's data, torn or garbled bytes).
pub fn found(lba: u64, bytes: &[u8]) -> Result<Found, ReadWrong> {
    assert_eq!(bytes.len(), SLOT_BYTES as usize, "one slot");
    if bytes.iter().all(|&b| b == 0) {
        return Ok(Found::Zeros);
    }
    let holder = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
    if holder != lba {
        return Err(ReadWrong::OtherSlot { lba, holder });
    }
    let generation = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
    if bytes != stamp(lba, generation) {
        return Err(ReadWrong::Torn { lba });
    }
    Ok(Found::Generation(generation))
}

/// What one slot may read: the newest generation sent, the newest owed,
/// the generation counter at its last trim or loss (nothing at or before
/// it may return), and the generation of the newest trim or write of
/// zeros sent and not yet read back (`zeroed`; 0 for none): a TRIM or
/// WRITE_ZEROES takes a generation as a write does, and reads back as
/// zeros.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Owed {
    pub sent: u64,
    pub owed: u64,
    pub floor: u64,
    pub zeroed: u64,
}

impl Owed {
    /// Whether slot `lba` may have read `found`: zeros where nothing is
    /// owed or a trim at or after what is owed was sent; else a stamp no
    /// older than what is owed, no newer than what was sent, and newer
    /// than its floor.
    pub fn check(&self, lba: u64, found: Found) -> Result<(), ReadWrong> {
        let Owed { sent, owed, floor, zeroed } = *self;
        match found {
            Found::Zeros if owed > 0 && zeroed < owed => Err(ReadWrong::ZerosOwed { lba, owed }),
            Found::Zeros => Ok(()),
            Found::Generation(found) if found < owed => Err(ReadWrong::Older { lba, found, owed }),
            Found::Generation(found) if found > sent => Err(ReadWrong::Newer { lba, found, sent }),
            Found::Generation(found) if found <= floor => Err(ReadWrong::BeforeFloor { lba, found, floor }),
            Found::Generation(_) => Ok(()),
        }
    }

    /// After a read that passed [`Owed::check`]: the slot holds what it
    /// read, on the media (what is owed and sent from then on); zeros
    /// read, no write sent before may come back.
    pub fn settle(&mut self, found: Found) {
        *self = match found {
            Found::Zeros => Owed { sent: 0, owed: 0, floor: self.floor.max(self.sent), zeroed: 0 },
            Found::Generation(g) => Owed { sent: g, owed: g, floor: self.floor, zeroed: 0 },
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stamp reads back as its generation; another slot's, a torn one
    /// and zeros are told apart; the range check holds at its edges.
    #[test]
    fn stamps_read_back_and_the_range_holds() {
        assert_eq!(found(3, &stamp(3, 9)), Ok(Found::Generation(9)));
        assert_eq!(found(3, &vec![0; SLOT_BYTES as usize]), Ok(Found::Zeros));
        assert_eq!(found(3, &stamp(4, 9)), Err(ReadWrong::OtherSlot { lba: 3, holder: 4 }));
        assert_eq!(ReadWrong::OtherSlot { lba: 3, holder: 4 }.to_string(), "slot 3 holds slot 4's data");
        let mut torn = stamp(3, 9);
        torn[100] ^= 1;
        assert_eq!(found(3, &torn), Err(ReadWrong::Torn { lba: 3 }));
        let o = Owed { sent: 9, owed: 5, floor: 2, zeroed: 0 };
        assert!(o.check(3, Found::Generation(5)).is_ok() && o.check(3, Found::Generation(9)).is_ok());
        assert!(o.check(3, Found::Generation(4)).is_err() && o.check(3, Found::Generation(10)).is_err());
        assert!(o.check(3, Found::Zeros).is_err());
        assert!(Owed { sent: 9, owed: 0, floor: 4, zeroed: 0 }.check(3, Found::Generation(3)).is_err());
        // A trim at 7 owed: zeros, or a later write (9); not the write it
        // trimmed (5). A trim sent after what is owed may have landed.
        let t = Owed { sent: 9, owed: 7, floor: 0, zeroed: 7 };
        assert!(t.check(3, Found::Zeros).is_ok() && t.check(3, Found::Generation(9)).is_ok());
        assert!(t.check(3, Found::Generation(5)).is_err());
        assert!(Owed { sent: 8, owed: 5, floor: 0, zeroed: 8 }.check(3, Found::Zeros).is_ok());
        assert!(Owed { sent: 9, owed: 9, floor: 0, zeroed: 7 }.check(3, Found::Zeros).is_err(), "a write owed after the trim");
    }
}
