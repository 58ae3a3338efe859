//! Where a card's flash is kept (`Backing`) and how a member comes up on
//! it: formatted, mounted from a clean stop's checkpoint, or mounted by a
//! scan of the media; and the clean stop that writes the checkpoint.

use super::{Device, DeviceError, MountFirst};
use crate::recorder::Recorder;
use crate::StoreLock;
use ftl::{Ftl, FtlConfig, MountReport};
use nand::{Array, Nand};
use units::Ns;

/// Where a device keeps the bytes written to it: nowhere (the simulator),
/// in memory (tests), or in files, one per member (a served card).
#[derive(Debug, Clone, PartialEq)]
pub enum Backing {
    None,
    Memory,
    /// A store file per member, `<dir>/member-<i>.flash`; `owner` is
    /// written in each file's header and checked when it is opened again.
    /// Built by `Backing::files`, which takes the store's lock.
    Files {
        dir: std::path::PathBuf,
        owner: String,
        lock: StoreLock,
    },
    /// The files of a card at rest, to be looked at and changed in
    /// nothing: mounted from its clean shutdown's checkpoint (kept), its
    /// SMART log read (no power cycle counted), nothing written back.
    /// Built by `Backing::inspect`, which shares the store's lock.
    Inspect {
        dir: std::path::PathBuf,
        owner: String,
        lock: StoreLock,
    },
}

impl Backing {
    /// The store in `dir` (which must exist), owned by this process for
    /// `purpose` as long as a device on it lives: refused, with the holder
    /// named, while another process owns it or reads it.
    pub fn files(dir: &std::path::Path, owner: &str, purpose: &str) -> Result<Backing, DeviceError> {
        let lock = StoreLock::take(dir, purpose)?;
        Ok(Backing::Files { dir: dir.to_path_buf(), owner: owner.to_string(), lock })
    }

    /// The store in `dir` to look at, shared with other readers: refused,
    /// with the holder named, while a process owns it.
    pub fn inspect(dir: &std::path::Path, owner: &str) -> Result<Backing, DeviceError> {
        let lock = StoreLock::share(dir)?;
        Ok(Backing::Inspect { dir: dir.to_path_buf(), owner: owner.to_string(), lock })
    }

    /// The store's lock, where the backing is a store.
    pub(super) fn lock(&self) -> Option<&StoreLock> {
        match self {
            Backing::Files { lock, .. } | Backing::Inspect { lock, .. } => Some(lock),
            _ => None,
        }
    }
}

impl Device {
    /// Whether a store directory already holds a card (its first member's
    /// store).
    pub fn store_exists(dir: &std::path::Path) -> bool {
        crate::CardStore::at(dir).holds_card()
    }

    pub(super) fn member_store_path(dir: &std::path::Path, member: usize) -> std::path::PathBuf {
        crate::store::member_path(dir, member)
    }

    /// What a member's store header names: the card's owner and the member.
    pub(super) fn member_owner(owner: &str, member: usize) -> String {
        format!("{owner}, member {member}")
    }

    /// A member's array, with its bytes where the backing keeps them, and
    /// whether its store already held a card (to be mounted, not formatted).
    /// `known`: each block's programmed pages, kept by a clean stop: the
    /// media's out-of-band areas are then not read.
    pub(super) fn array_of(
        g: &nand::Geometry,
        backing: &Backing,
        member: usize,
        endurance: Option<&nand::Endurance>,
        known: Option<&[u16]>,
    ) -> Result<(Array, bool), DeviceError> {
        let (store, existed) = match backing {
            Backing::None => (None, false),
            Backing::Memory => (Some(nand::PageStore::memory(g)), false),
            Backing::Files { dir, owner, .. } | Backing::Inspect { dir, owner, .. } => {
                let path = Device::member_store_path(dir, member);
                if matches!(backing, Backing::Inspect { .. }) && !path.exists() {
                    return Err(DeviceError::NoCard { dir: dir.to_path_buf(), file: path });
                }
                let access = if matches!(backing, Backing::Inspect { .. }) { nand::Access::Look } else { nand::Access::Own };
                let (store, created) = nand::PageStore::file(&path, g, &Device::member_owner(owner, member), access)?;
                (Some(store), !created)
            }
        };
        let mut array = match (store, known) {
            (Some(store), Some(pages)) => Array::with_store_known(g.clone(), store, pages)?,
            (store, _) => Array::with_store(g.clone(), store),
        };
        // Each member's blocks wear on their own.
        array.endurance_set(endurance.map(|e| nand::Endurance { seed: e.seed ^ (member as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15), ..e.clone() }));
        Ok((array, existed))
    }

    /// A member's FTL: mounted from a store that held a card, else formatted.
    /// A member's FTL: mounted from a store that held a card (from its
    /// clean shutdown's checkpoint where there is one, else by scanning the
    /// media), else formatted. A mount's report is summed over members into
    /// `mounted`; the LBAs it lost are the member's own (the device's are
    /// found once it is built).
    pub(super) fn ftl_of(
        g: &nand::Geometry,
        cfg: &FtlConfig,
        backing: &Backing,
        member: usize,
        mounted: &mut Option<MountReport>,
        lost: &mut Vec<(usize, u32)>,
        endurance: Option<&nand::Endurance>,
    ) -> Result<Ftl<Recorder>, DeviceError> {
        // A clean stop's checkpoint, where the member's store is there to
        // mount; forgotten once the store is open to be served (a store
        // refused, for another owner say, keeps it).
        let store_there = match backing {
            Backing::Files { dir, .. } | Backing::Inspect { dir, .. } => Device::member_store_path(dir, member).exists(),
            _ => false,
        };
        let ck_err = |dir: &std::path::Path, e: std::io::Error| DeviceError::Checkpoint { dir: dir.to_path_buf(), why: e.to_string() };
        let saved = match backing {
            Backing::Files { dir, .. } if store_there => {
                crate::store::checkpoint::peek(dir, member, &Device::member_store_path(dir, member)).map_err(|e| ck_err(dir, e))?
            }
            Backing::Inspect { dir, .. } if store_there => {
                match crate::store::checkpoint::peek(dir, member, &Device::member_store_path(dir, member)).map_err(|e| ck_err(dir, e))? {
                    Some(crate::store::checkpoint::Opened { pages: Err(why @ crate::store::checkpoint::PagesRefused::Stale), .. }) => {
                        return Err(DeviceError::MountFirst { dir: dir.clone(), why: MountFirst::Stale { member, why } })
                    }
                    Some(b) => Some(b),
                    None => return Err(DeviceError::MountFirst { dir: dir.clone(), why: MountFirst::Unclean }),
                }
            }
            _ => None,
        };
        let had_checkpoint = saved.is_some();
        let (known, ftl_saved, split_refused) = match saved {
            Some(crate::store::checkpoint::Opened { pages: Ok(pages), ftl }) => (pages, ftl, None),
            Some(crate::store::checkpoint::Opened { pages: Err(e), .. }) => (None, None, Some(e)),
            None => (None, None, None),
        };
        // Blocks' pages that do not fit the media are set aside: scanned.
        let (array, existed, refused) = match Device::array_of(g, backing, member, endurance, known.as_deref()) {
            Ok((array, existed)) => (array, existed, split_refused.map(|e| format!("member {member}: {e}"))),
            Err(e @ (DeviceError::PageStore(_) | DeviceError::Kept(_))) if known.is_some() && !matches!(backing, Backing::Inspect { .. }) => {
                let (array, existed) = Device::array_of(g, backing, member, endurance, None)?;
                (array, existed, Some(format!("member {member}: {e}")))
            }
            Err(e) => return Err(e),
        };
        // Its FTL's part is read through the file still open (as a
        // deleted file's data stay until it is closed).
        if let (Backing::Files { dir, .. }, true) = (backing, had_checkpoint) {
            crate::store::checkpoint::forget(dir, member).map_err(|e| ck_err(dir, e))?;
        }
        if !existed {
            return Ok(Ftl::format(crate::recorder::recorder(array), cfg.clone())?);
        }
        Device::ftl_mounted(g, cfg, backing, member, endurance, array, ftl_saved, refused, mounted, lost)
    }

    /// A member's FTL mounted on `array` (a store that held a card): from
    /// its checkpoint where there is one that fits, else by a scan; the
    /// mount's report summed into `mounted`.
    #[allow(clippy::too_many_arguments)]
    fn ftl_mounted(
        g: &nand::Geometry,
        cfg: &FtlConfig,
        backing: &Backing,
        member: usize,
        endurance: Option<&nand::Endurance>,
        array: Array,
        saved: Option<(impl std::io::Read, u64)>,
        refused: Option<String>,
        mounted: &mut Option<MountReport>,
        lost: &mut Vec<(usize, u32)>,
    ) -> Result<Ftl<Recorder>, DeviceError> {
        let (completed, blocks_scanned) = (array.staged_pages(), array.blocks_scanned());
        let (ftl, mut r) = match saved {
            Some((r, len)) => match Ftl::mount_checkpoint_from(crate::recorder::recorder(array), cfg.clone(), r, len) {
                Ok(mounted) => mounted,
                Err(why) if matches!(backing, Backing::Inspect { .. }) => return Err(DeviceError::CheckpointMisfit { member, why }),
                Err(e) => {
                    // The media are the truth: a checkpoint that does not
                    // fit is set aside and the card scanned.
                    let (ftl, mut r) = Ftl::mount(crate::recorder::recorder(Device::array_of(g, backing, member, endurance, None)?.0), cfg.clone())?;
                    r.checkpoint_refused = Some(format!("member {member}: {e}"));
                    (ftl, r)
                }
            },
            None => Ftl::mount(crate::recorder::recorder(array), cfg.clone())?,
        };
        if r.checkpoint_refused.is_none() {
            r.checkpoint_refused = refused;
        }
        let m = mounted.get_or_insert_with(|| MountReport { from_checkpoint: true, ..MountReport::default() });
        m.slots_scanned += r.slots_scanned;
        m.slots_mapped += r.slots_mapped;
        m.superblocks_short += r.superblocks_short;
        m.seq_max = m.seq_max.max(r.seq_max);
        m.pages_completed += completed;
        m.blocks_scanned += blocks_scanned;
        m.slots_rebuilt += r.slots_rebuilt;
        m.from_checkpoint &= r.from_checkpoint;
        if let Some(why) = r.checkpoint_refused.take() {
            m.checkpoint_refused = Some(why);
        }
        lost.extend(r.lbas_lost.iter().map(|&lba| (member, lba)));
        Ok(ftl)
    }

    /// A clean shutdown: every write on the media, the stores synced, and
    /// each member's checkpoint written beside its store, so that the next
    /// start mounts without a scan. A device without files keeps nothing.
    pub fn shutdown_clean(&mut self) -> Result<(), DeviceError> {
        let Some(dir) = self.store_dir.clone() else { return Ok(()) };
        if let Some(log) = self.smart() {
            crate::CardStore::at(&dir).smart_keep(&log)?;
        }
        for (i, m) in self.members.iter_mut().enumerate() {
            // The FTL's checkpoint first: it puts every write on the media,
            // after which the blocks' programmed pages are final.
            let ftl = m.ftl.checkpoint()?;
            let bytes = crate::store::checkpoint::member_bytes(m.ftl.media().array.next_pages(), &ftl);
            m.pages_mut().map(|s| s.sync()).transpose().map_err(|e| DeviceError::Sync { dir: dir.to_path_buf(), why: e.to_string() })?;
            crate::store::checkpoint::write(&dir, i, &bytes).map_err(|e| DeviceError::Checkpoint { dir: dir.to_path_buf(), why: e.to_string() })?;
        }
        Ok(())
    }

    /// Whether the card in `dir` stopped cleanly: every member's
    /// checkpoint is there, so it can be looked at without a mount.
    pub fn stopped_cleanly(dir: &std::path::Path, members: u32) -> bool {
        (0..members as usize).all(|m| crate::store::checkpoint::exists(dir, m))
    }

    /// The modelled time of the mount's scan: every programmed page's
    /// out-of-band area read (a sense, tR, each), the dies in parallel: the
    /// busiest die's pages x tR. Zero for a device that was formatted or
    /// mounted from a clean stop's checkpoint (no scan).
    pub fn mount_modelled_ns(&self) -> Ns {
        if self.mounted.as_ref().is_none_or(|r| r.from_checkpoint) {
            return 0;
        }
        let g = self.profile.scaling(self.scale).geometry(&self.profile.nand.geometry());
        let busiest = |f: &Ftl<Recorder>| {
            (0..g.dies()).map(|die| (0..g.blocks_per_plane).map(|b| f.media().block_next_page(die, b) as u64).sum::<u64>()).max().unwrap_or(0)
        };
        self.members.iter().map(|m| busiest(&m.ftl)).max().unwrap_or(0) * self.costs.read_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each member's blocks' programmed pages, as its array holds them.
    fn pages(d: &Device) -> Vec<Vec<u16>> {
        d.members.iter().map(|m| m.ftl.media().array.next_pages().to_vec()).collect()
    }

    /// A clean stop keeps each block's programmed pages beside the FTL's
    /// checkpoint: the next mount reads no out-of-band area and sees what
    /// a scan sees. An earlier flashlab's checkpoint (the FTL's alone)
    /// still mounts from it; a torn pages section is set aside for a scan.
    #[test]
    fn a_clean_stop_keeps_the_blocks_pages_so_the_mount_reads_no_oob() {
        let p = crate::profile_load("p420m").unwrap();
        let scale = (1..=65536).rev().find(|&s| Device::validate(&p, "stock", s).is_ok()).unwrap();
        let dir = std::env::temp_dir().join(format!("flashlab-ckpt-pages-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let backing = Backing::files(&dir, "p420m test", "test").unwrap();
        let mut d = Device::with_backing(&p, "stock", scale, &backing).unwrap();
        // Enough random writes over the card for GC to move and erase.
        let slots = d.capacity_bytes() / 4096;
        let mut now = 0;
        for i in 0..slots * 3 {
            let lba = (i * 7919) % slots;
            now = d.write_at(now, lba * 4096, &[(lba % 251) as u8; 4096]).unwrap();
        }
        d.shutdown_clean().unwrap();
        let kept = pages(&d);
        drop(d);
        // A scan of the stores sees the same pages.
        let g = p.scaling(scale).geometry(&p.nand.geometry());
        for (m, want) in kept.iter().enumerate() {
            let (store, created) =
                nand::PageStore::file(&Device::member_store_path(&dir, m), &g, &Device::member_owner("p420m test", m), nand::Access::Own).unwrap();
            assert!(!created);
            assert_eq!(Array::with_store(g.clone(), Some(store)).next_pages(), &want[..], "member {m}");
        }
        let check = |d: &mut Device| {
            let mut b = vec![0u8; 4096];
            for lba in (0..slots).step_by(97) {
                d.read_at(0, lba * 4096, &mut b).unwrap();
                assert!(b.iter().all(|&x| x == (lba % 251) as u8), "LBA {lba}");
            }
            d.check().unwrap();
        };
        let mut d = Device::with_backing(&p, "stock", scale, &backing).unwrap();
        assert!(d.mounted.as_ref().unwrap().from_checkpoint);
        assert_eq!(pages(&d), kept, "the blocks' pages from the checkpoint");
        check(&mut d);
        // An earlier flashlab's checkpoint: the FTL's alone.
        d.shutdown_clean().unwrap();
        drop(d);
        let path = dir.join("member-0.checkpoint");
        let whole = std::fs::read(&path).unwrap();
        let (_, ftl) = crate::store::checkpoint::member_split(&whole).unwrap();
        std::fs::write(&path, ftl).unwrap();
        let mut d = Device::with_backing(&p, "stock", scale, &backing).unwrap();
        assert!(d.mounted.as_ref().unwrap().from_checkpoint, "an FTL-only checkpoint still mounts");
        check(&mut d);
        // A torn pages section: refused, the card scanned, nothing lost.
        d.shutdown_clean().unwrap();
        drop(d);
        let mut torn = std::fs::read(&path).unwrap();
        torn[20] ^= 0xff;
        std::fs::write(&path, torn).unwrap();
        let mut d = Device::with_backing(&p, "stock", scale, &backing).unwrap();
        let r = d.mounted.clone().unwrap();
        assert!(!r.from_checkpoint && r.checkpoint_refused.as_deref().is_some_and(|w| w.contains("checksum")), "{r:?}");
        check(&mut d);
        drop(d);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
