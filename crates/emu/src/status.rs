//! A card's status wherever it is, as one type: served (asked through its
//! control channel), at rest (read from its files), or at rest after a
//! crash (what its files tell without a mount). `flashlab status` prints
//! it; `--json` and the control channel carry it as JSON.

use crate::presentation::VolumeName;
use serde::{Deserialize, Serialize};

/// The status of a card and how it is presented.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardStatus {
    /// Served by a running `flashlab serve`, or at rest.
    pub served: bool,
    /// Clients connected to its exports (0 at rest).
    pub clients: usize,
    /// Its volumes, named as its exports are.
    pub volumes: Vec<VolumeName>,
    #[serde(flatten)]
    pub card: Known,
}

/// What is known of the card: everything (it is mounted, or stopped
/// cleanly), or what the files of a card that did not stop cleanly tell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Known {
    Mounted(Box<card::Status>),
    Unclean(Box<Unclean>),
}

/// What the files of a card that did not stop cleanly tell, changing
/// nothing: its map, spare, health and failures need a mount, which
/// repairs, so they are named, not guessed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unclean {
    pub device: String,
    pub id: String,
    pub format: String,
    pub scale: u32,
    pub members: u32,
    pub capacity_bytes: u64,
    pub beacon: bool,
    /// Its SMART-like log, with the counters kept beside its pages.
    pub smart: card::SmartLog,
    pub host_bytes_written: u64,
    /// Always false: the card did not stop cleanly.
    pub stopped_cleanly: bool,
    /// What a mount would tell, and why it is not done here.
    pub needs_a_mount: String,
}

impl CardStatus {
    /// Whether a mount is needed to know more.
    pub fn unclean(&self) -> Option<&Unclean> {
        match &self.card {
            Known::Unclean(u) => Some(u),
            Known::Mounted(_) => None,
        }
    }

    /// The full status, where the card is known.
    pub fn mounted(&self) -> Option<&card::Status> {
        match &self.card {
            Known::Mounted(s) => Some(s),
            Known::Unclean(_) => None,
        }
    }
}
