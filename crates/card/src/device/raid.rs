//! RAID 0 over a card's members: which member a byte lives on, and the
//! part of an I/O's payload each member takes.

use super::Device;

/// What an I/O moves besides its timing: nothing (the simulator), the
/// bytes to write, or the buffer to read into (a data-holding device).
pub enum Payload<'a> {
    Timing,
    Write(&'a [u8]),
    Read(&'a mut [u8]),
}

impl Payload<'_> {
    /// The part of the payload from byte `from` of the I/O, `len` long.
    pub(super) fn piece(&mut self, from: u64, len: u64) -> Payload<'_> {
        let r = from as usize..(from + len) as usize;
        match self {
            Payload::Timing => Payload::Timing,
            Payload::Write(d) => Payload::Write(&d[r]),
            Payload::Read(o) => Payload::Read(&mut o[r]),
        }
    }
}

impl Device {
    /// The member a byte offset lives on and the offset within it: RAID 0
    /// over the members in chunks of `stripe_bytes` (the one rule of the
    /// split; a single member is the identity).
    #[inline(always)]
    pub(crate) fn member_of(&self, offset: u64) -> (usize, u64) {
        if self.members.len() == 1 {
            return (0, offset);
        }
        let n = self.members.len() as u64;
        let stripe = offset / self.stripe_bytes;
        ((stripe % n) as usize, (stripe / n) * self.stripe_bytes + offset % self.stripe_bytes)
    }

    /// The device offset of a member's offset: [`Device::member_of`]
    /// undone.
    pub(crate) fn device_offset(&self, member: usize, offset: u64) -> u64 {
        let n = self.members.len() as u64;
        if n == 1 {
            return offset;
        }
        let chunk = offset / self.stripe_bytes;
        (chunk * n + member as u64) * self.stripe_bytes + offset % self.stripe_bytes
    }
}
