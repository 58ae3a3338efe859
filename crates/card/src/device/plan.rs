//! The plan of a card at a format and scale: its scaled geometry, the
//! FTL's configuration and its usable capacity, and the one formula of
//! its effective over-provisioning.

use super::{Device, DeviceError};
use crate::catalog::profile::Profile;
use crate::catalog::scale::Scaling;
use crate::recorder::Recorder;
use ftl::{Ftl, FtlConfig};
use units::SLOT_BYTES;

/// A capacity as vendors write it, with its bytes: "1500.0 GB
/// (1500000000000 bytes)".
pub(super) fn gb_and_bytes(bytes: u64) -> String {
    format!("{:.1} GB ({bytes} bytes)", bytes as f64 / 1e9)
}

/// A usable capacity written as bytes or with a decimal suffix (GB, TB), as
/// vendors state capacities: `1500GB`, `1.5TB`, `1500000000000`.
pub fn capacity_parse(s: &str) -> Option<u64> {
    let t = s.trim().to_ascii_uppercase();
    let (num, mult) = if let Some(n) = t.strip_suffix("TB") {
        (n, 1e12)
    } else if let Some(n) = t.strip_suffix("GB") {
        (n, 1e9)
    } else {
        (t.as_str(), 1.0)
    };
    let v: f64 = num.trim().parse().ok()?;
    (v.is_finite() && v > 0.0 && v * mult < 1e18).then_some((v * mult) as u64)
}

/// Superblocks' worth of spare that GC holds on average beyond its reserve:
/// the free pool hovers one above the reserve, and the two open writers are
/// part full (measured: 1.9 with the FTL alone, `ftl/tests/wa.rs`).
pub const HELD_BEYOND_RESERVE: f64 = 1.9;

/// Superblocks a scaled member must keep at least.
const MIN_SUPERBLOCKS: u32 = 16;

impl Device {
    /// The usable capacity a device would have at a format and scale,
    /// without building it.
    pub fn capacity_of(profile: &Profile, format: &str, scale: u32) -> Result<u64, DeviceError> {
        let (_, cfg, _) = Device::plan(profile, format, scale)?;
        Ok(cfg.user_slots * SLOT_BYTES * profile.members as u64)
    }

    /// Checks that a device can be built at a format and scale, without
    /// building it (a full-size card's maps take gigabytes).
    pub fn validate(profile: &Profile, format: &str, scale: u32) -> Result<(), DeviceError> {
        Device::plan(profile, format, scale).map(|_| ())
    }

    /// The bytes of the maps the device would allocate (every member's),
    /// without building it: most of a run's memory at full size.
    pub fn map_bytes(profile: &Profile, format: &str, scale: u32) -> Result<u64, DeviceError> {
        let (g, cfg, _) = Device::plan(profile, format, scale)?;
        let layout = ftl::Layout::new(&g, cfg.stripe_width);
        Ok(Ftl::<Recorder>::map_bytes(&layout, cfg.user_slots) * profile.members as u64)
    }

    /// Refuses, before allocating, a card whose maps cannot be had: more
    /// than the process's address-space limit (`ulimit -v`) leaves, or
    /// than this host's memory and swap together. (Less than that may
    /// still swap: the note `run` prints at full size says what it takes.)
    pub(super) fn memory_check(profile: &Profile, g: &nand::Geometry, cfg: &FtlConfig) -> Result<(), DeviceError> {
        let layout = ftl::Layout::new(g, cfg.stripe_width);
        let need = Ftl::<Recorder>::map_bytes(&layout, cfg.user_slots) * profile.members as u64;
        let refuse = |room: u64, what| Err(DeviceError::Memory { device: profile.id.clone(), need, room, what });
        if let Some(room) = address_space_left().filter(|&r| need > r) {
            return refuse(room, "the address space this process may still take (ulimit -v)");
        }
        if let Some(room) = memory_and_swap().filter(|&r| need > r) {
            return refuse(room, "this host's memory and swap together");
        }
        Ok(())
    }

    /// The scaled geometry and the FTL configuration of a format.
    pub(super) fn plan(profile: &Profile, format: &str, scale: u32) -> Result<(nand::Geometry, FtlConfig, u64), DeviceError> {
        let usable = match profile.formats.get(format) {
            Some(&u) => u,
            None => match capacity_parse(format) {
                Some(u) if u >= 1 << 30 && u <= profile.usable_bytes_max() => u,
                Some(u) => {
                    return Err(DeviceError::Capacity { device: profile.id.clone(), bytes: u, max: profile.usable_bytes_max() });
                }
                None => {
                    return Err(DeviceError::UnknownFormat { device: profile.id.clone(), format: format.into(), expected: profile.format_names().join(", ") })
                }
            },
        };
        let full = profile.nand.geometry();
        let reserve = profile.ftl.reserve_superblocks;
        let min_sb = MIN_SUPERBLOCKS.max(reserve + 8);
        let members_n = profile.members as u64;
        let full_slots = usable / members_n / SLOT_BYTES;
        let held = reserve as f64 + HELD_BEYOND_RESERVE;
        // Physical data slots less what GC holds on average.
        let t_eff = |l: &ftl::Layout| (l.superblocks as f64 - held) * l.data_slots_per_superblock as f64;
        let full_layout = ftl::Layout::new(&full, profile.ftl.stripe_width);
        // The usable slots of one member at a scale, if the format fits it:
        // the same effective over-provisioning as the full-size card.
        let scaled_slots = |scale: u32| -> Option<u64> {
            let g = Scaling::new(&full, scale).geometry(&full);
            if g.blocks_per_plane < min_sb {
                return None;
            }
            let layout = ftl::Layout::new(&g, profile.ftl.stripe_width);
            let mut slots = if scale == 1 { full_slots } else { (full_slots as f64 * t_eff(&layout) / t_eff(&full_layout)) as u64 };
            if members_n > 1 {
                // RAID 0 needs every member to end on a whole chunk.
                let chunk_slots = (profile.member_stripe_bytes() / SLOT_BYTES).max(1);
                slots -= slots % chunk_slots;
            }
            (slots >= 1 && slots <= Ftl::<Recorder>::user_slots_max(&layout, reserve)).then_some(slots)
        };
        let user_slots = match (scale > 0).then(|| scaled_slots(scale)).flatten() {
            Some(s) => s,
            None => {
                let most = full.pages_per_block * (full.blocks_per_plane / min_sb).max(1);
                let max = (1..=most).rev().find(|&s| scaled_slots(s).is_some()).unwrap_or(1);
                return Err(DeviceError::Scale { device: profile.id.clone(), scale, max, blocks: full.blocks_per_plane, min_superblocks: min_sb });
            }
        };
        let scaling = Scaling::new(&full, scale);
        let g = scaling.geometry(&full);
        let cfg = FtlConfig {
            stripe_width: profile.ftl.stripe_width,
            user_slots,
            reserve_superblocks: reserve,
            gc_policy: profile.ftl.gc_policy,
            // The FTL's 0: no static wear leveling.
            wear_spread_max: profile.ftl.wear_spread_max.unwrap_or(0),
            power_loss_protection: profile.ftl.power_loss_protection,
        };
        Ok((g, cfg, usable))
    }

    /// The effective over-provisioning: physical data slots (parity
    /// excluded) less what the GC reserve and the open superblocks hold on
    /// average, over the usable slots, minus one.
    /// The one over-provisioning figure of the card, shown by `run`,
    /// `review` and `status` alike: the data slots of its good blocks
    /// less what GC holds on average (its reserve and the open
    /// superblocks), over the format's slots, less one. The scaling keeps
    /// it the full-size card's; bad blocks and dead dies lower it.
    pub fn effective_op(&self) -> f64 {
        let held = self.profile.ftl.reserve_superblocks as f64 + HELD_BEYOND_RESERVE;
        let (mut t, mut user) = (0.0, 0u64);
        for m in &self.members {
            t += m.ftl.data_slots_good() as f64 - held * m.ftl.layout().data_slots_per_superblock as f64;
            user += m.ftl.user_slots();
        }
        t / user as f64 - 1.0
    }
}

/// What the address-space limit leaves this process, bytes; none where
/// there is no limit.
fn address_space_left() -> Option<u64> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit fills the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } != 0 || lim.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let used_kb: u64 = status.lines().find_map(|l| l.strip_prefix("VmSize:"))?.split_whitespace().next()?.parse().ok()?;
    Some(lim.rlim_cur.saturating_sub(used_kb * 1024))
}

/// This host's memory and swap, bytes (from /proc/meminfo).
fn memory_and_swap() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb = |key: &str| info.lines().find_map(|l| l.strip_prefix(key)).and_then(|r| r.split_whitespace().next()?.parse::<u64>().ok());
    Some((kb("MemTotal:")? + kb("SwapTotal:").unwrap_or(0)) * 1024)
}
