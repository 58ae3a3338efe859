//! Units shared by every flashlab crate, the one cache hint the FTL and
//! the NAND array share, and the seeded PRNG (`Rng`) that the simulator's
//! engine and the NAND's bit errors draw from. Depends only on `rand`.
//!
//! Virtual time is an integer count of nanoseconds (`Ns`), so that a seeded
//! simulation is byte-identical on every machine: no floating point ever
//! decides an event's time.

/// Nanoseconds of virtual (or, in `emu`, wall) time.
pub type Ns = u64;

pub const NS_PER_US: Ns = 1_000;
pub const NS_PER_MS: Ns = 1_000_000;
pub const NS_PER_SEC: Ns = 1_000_000_000;

pub const KIB: u64 = 1024;
pub const MIB: u64 = 1024 * KIB;
pub const GIB: u64 = 1024 * MIB;
/// Decimal units, as vendors quote capacities.
pub const GB: u64 = 1_000_000_000;

/// The mapping unit of every FTL here: one logical slot is 4 KiB.
pub const SLOT_BYTES: u64 = 4 * KIB;
/// The host sector size.
pub const SECTOR_BYTES: u64 = 512;

/// A logical slot number (LBA in 4 KiB units). `u32` bounds a member device at
/// 16 TiB, enough for every card in the catalog; `Lba::MAX` is "unmapped".
pub type SlotLba = u32;
/// A physical slot address inside one member device (superblock-major, in
/// write order; see `ftl::layout`).
pub type Ppa = u32;

pub const LBA_UNMAPPED: SlotLba = u32::MAX;
pub const PPA_INVALID: Ppa = u32::MAX;

/// Time to move `bytes` at `bytes_per_sec`, rounded up to whole nanoseconds.
/// A zero rate means "not a limit" and costs nothing.
#[inline]
pub fn transfer_ns(bytes: u64, bytes_per_sec: u64) -> Ns {
    if bytes_per_sec == 0 {
        return 0;
    }
    match bytes.checked_mul(NS_PER_SEC) {
        // The common case in 64 bits (a 128-bit division is a library call).
        Some(n) => n.div_ceil(bytes_per_sec),
        None => ((bytes as u128 * NS_PER_SEC as u128).div_ceil(bytes_per_sec as u128)) as Ns,
    }
}

/// Service time of one operation at `ops_per_sec` (0 means unlimited).
#[inline]
pub fn per_op_ns(ops_per_sec: u64) -> Ns {
    if ops_per_sec == 0 {
        0
    } else {
        NS_PER_SEC.div_ceil(ops_per_sec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfer_rounds_up_and_zero_rate_is_free() {
        assert_eq!(transfer_ns(4096, 4096 * NS_PER_SEC), 1);
        assert_eq!(transfer_ns(4096, 200_000_000), 20_480);
        assert_eq!(transfer_ns(1, 3), 333_333_334);
        assert_eq!(transfer_ns(4096, 0), 0);
        assert_eq!(per_op_ns(0), 0);
        assert_eq!(per_op_ns(350_000), 2858);
    }
}

mod memory;
mod rng;
pub use memory::{prefetch_read, vec_huge};
pub use rng::{keyed, keyed_unit, unit_of, Rng};
