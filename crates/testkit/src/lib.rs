//! Test helpers shared by the crates' tests: the power-cut tester
//! (`cut::Cutter`), a small NBD client (`nbd_client::Client`), and the
//! block-device conformance suite (`conformance`) with its two targets:
//! the simulated device's block API and a card served over NBD; the
//! generation oracle (`oracle`: stamped slots and what each may read); the
//! reference models (`model`: a map of what a store must read back); how
//! the property tests draw their cases (`props`). A development dependency
//! only; nothing shipped uses it.

pub mod conformance;
pub mod cut;
pub mod model;
pub mod nbd_client;
pub mod oracle;
pub mod props;

pub use conformance::{Refused, Target};
pub use cut::{cutter, Cutter};
pub use nbd_client::Client;

use emu::nbd;
use units::Ns;

/// The simulated device as a conformance target: its block API, each
/// request at the completion time of the one before.
pub struct OnDevice {
    pub device: card::Device,
    now: Ns,
}

impl OnDevice {
    /// `device` must hold data.
    pub fn new(device: card::Device) -> OnDevice {
        assert!(device.holds_data(), "a conformance target keeps its bytes");
        OnDevice { device, now: 0 }
    }

    fn step(&mut self, r: Result<Ns, card::DeviceError>) -> Result<(), Refused> {
        self.now = r?;
        Ok(())
    }
}

impl Target for OnDevice {
    fn size(&self) -> u64 {
        self.device.capacity_bytes()
    }
    fn read(&mut self, offset: u64, len: usize) -> Result<Vec<u8>, Refused> {
        let mut out = vec![0; len];
        let r = self.device.read_at(self.now, offset, &mut out);
        self.step(r)?;
        Ok(out)
    }
    fn write(&mut self, offset: u64, data: &[u8]) -> Result<(), Refused> {
        let r = self.device.write_at(self.now, offset, data);
        self.step(r)
    }
    fn trim(&mut self, offset: u64, len: u64) -> Result<(), Refused> {
        let r = self.device.trim_at(self.now, offset, len);
        self.step(r)
    }
    fn write_zeroes(&mut self, offset: u64, len: u64) -> Result<(), Refused> {
        let r = self.device.write_zeroes_at(self.now, offset, len);
        self.step(r)
    }
    fn flush(&mut self) -> Result<(), Refused> {
        let r = self.device.flush(self.now);
        self.step(r)
    }
}

impl Client {
    /// One request and its reply; an NBD error is the refusal.
    fn request(&mut self, kind: u16, offset: u64, length: u32, data: &[u8]) -> Result<Vec<u8>, Refused> {
        let reply = self.call(kind, 0, offset, length, data)?;
        match reply.error {
            0 => Ok(reply.data),
            e => Err(Refused::Nbd(e)),
        }
    }
}

/// A card served over NBD as a conformance target, through one client.
impl Target for Client {
    fn size(&self) -> u64 {
        self.size
    }
    fn read(&mut self, offset: u64, len: usize) -> Result<Vec<u8>, Refused> {
        self.request(nbd::CMD_READ, offset, len as u32, &[])
    }
    fn write(&mut self, offset: u64, data: &[u8]) -> Result<(), Refused> {
        self.request(nbd::CMD_WRITE, offset, data.len() as u32, data).map(|_| ())
    }
    fn trim(&mut self, offset: u64, len: u64) -> Result<(), Refused> {
        self.request(nbd::CMD_TRIM, offset, len as u32, &[]).map(|_| ())
    }
    fn write_zeroes(&mut self, offset: u64, len: u64) -> Result<(), Refused> {
        self.request(nbd::CMD_WRITE_ZEROES, offset, len as u32, &[]).map(|_| ())
    }
    fn flush(&mut self) -> Result<(), Refused> {
        self.request(nbd::CMD_FLUSH, 0, 0, &[]).map(|_| ())
    }
}
