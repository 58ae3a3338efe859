//! How a card is presented to clients: one NBD export per volume, named
//! the one way whether the card is served or at rest (`NAME` for a card
//! served whole, `NAME-1` and `NAME-2` for a split one).

use crate::nbd::{self, Export};
use card::{Device, Volume, Volumes};
use serde::{Deserialize, Serialize};

/// What an export says of the card behind it.
pub(crate) fn card_description(device: &Device) -> String {
    format!("{} ({}), format {}, scale {} [simulated]", device.profile.name, device.profile.id, device.format, device.scale)
}

/// The export of volume `i` (from 1) of `n`: `base` for a card served
/// whole, `base-1` and `base-2` for a split one. Served or at rest, a
/// volume is named so.
pub fn export_name(base: &str, i: u32, n: u32) -> String {
    assert!((1..=n).contains(&i), "volume {i} of {n}");
    if n == 1 {
        base.to_string()
    } else {
        format!("{base}-{i}")
    }
}

/// A volume as a status names it: its export and its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VolumeName {
    pub export: String,
    pub bytes: u64,
}

/// The volumes of a card named `base`, as a status lists them.
pub fn volume_names(base: &str, volumes: &Volumes) -> Vec<VolumeName> {
    let n = volumes.count();
    (1..=n).zip(volumes.list()).map(|(i, v)| VolumeName { export: export_name(base, i, n), bytes: v.bytes }).collect()
}

/// How the card is presented: its exports and the volumes behind them.
/// Changed only by a format or a re-split, with no client connected.
pub(crate) struct Presentation {
    pub exports: Vec<Export>,
    pub volumes: Vec<Volume>,
}

impl Presentation {
    /// The card (described as `card`) presented as `volumes`, its exports
    /// named from `name`.
    pub fn new(name: &str, card: &str, volumes: &Volumes) -> Presentation {
        // CAN_MULTI_CONN holds: every connection's requests run on the one
        // card, one at a time under its lock, so a FLUSH on any connection
        // covers the writes acknowledged on all of them.
        let flags = nbd::TFLAG_HAS_FLAGS
            | nbd::TFLAG_SEND_FLUSH
            | nbd::TFLAG_SEND_FUA
            | nbd::TFLAG_SEND_TRIM
            | nbd::TFLAG_SEND_WRITE_ZEROES
            | nbd::TFLAG_CAN_MULTI_CONN;
        let n = volumes.count();
        let exports = volume_names(name, volumes)
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                let description = if n == 1 { card.to_string() } else { format!("volume {} of {n}: {card}", i + 1) };
                Export { name: v.export, description, size_bytes: v.bytes, flags }
            })
            .collect();
        Presentation { exports, volumes: volumes.list().to_vec() }
    }

    /// The exports as a status names them.
    pub fn names(&self) -> Vec<VolumeName> {
        self.exports.iter().map(|e| VolumeName { export: e.name.clone(), bytes: e.size_bytes }).collect()
    }
}
