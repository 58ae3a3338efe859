//! A simulated card's whole state copied, so that a run can go on from
//! one point twice: a fit calibrates a card at several values of a number
//! that times host reads alone (`fitted::HOST_READS_ONLY`) after the same
//! write-only preconditioning, which it then runs once.

use super::timing::Costs;
use super::Device;
use crate::catalog::profile::Profile;
use crate::DeviceError;
use nand::Nand;

impl Device {
    /// A copy of this card's whole state: every member's FTL, media, error
    /// model and timelines, the host's cores. None for a card that keeps
    /// data or lives in a store (its bytes and files are not copied), or
    /// that has faults planned or under way.
    pub fn snapshot(&self) -> Option<Device> {
        if self.store_dir.is_some() || self.faults.is_some() || self.smart.is_some() || self._lock.is_some() {
            return None;
        }
        let members = self.members.iter().map(|m| m.snapshot()).collect::<Option<Vec<_>>>()?;
        Some(Device {
            profile: self.profile.clone(),
            format: self.format.clone(),
            scale: self.scale,
            members,
            cpu: self.cpu.clone(),
            host_cores_taken: self.host_cores_taken,
            interrupts: self.interrupts.clone(),
            bridge: self.bridge.clone(),
            costs: self.costs.clone(),
            stripe_bytes: self.stripe_bytes,
            member_bytes: self.member_bytes,
            full_bytes: self.full_bytes,
            mounted: self.mounted.clone(),
            store_dir: None,
            faults: None,
            smart: None,
            _lock: None,
            age: self.age,
        })
    }

    /// Gives the card `profile`'s numbers that time host reads alone
    /// (`fitted::HOST_READS_ONLY`); `profile` must otherwise be the card's
    /// own. Host writes never meet those numbers (the device test
    /// `host_writes_never_meet_the_read_command_rate`), so a card that has
    /// served only writes is then, to the bit, the card built with
    /// `profile` that served them.
    pub fn host_reads_retimed(&mut self, profile: &Profile) -> Result<(), DeviceError> {
        if self.profile.writes_text() != profile.writes_text() {
            return Err(DeviceError::NotRetimable(profile.id.clone()));
        }
        let g = self.members[0].ftl.media().array.geometry().clone();
        self.costs = Costs::of(profile, &g, self.scale);
        self.profile = profile.clone();
        Ok(())
    }
}
