//! The simulated accelerator: device profiles (the catalog) and the timed
//! device model around the FTL.

mod block;
mod device;
pub mod faults;
mod fitted;
mod health;
pub mod input;
pub mod output;
mod profile;
pub mod published;
mod recorder;
pub mod scale;
mod status;
mod store;

pub use device::{capacity_parse, Backing, Device, DeviceCounters, DeviceError, Inconsistent, Payload, ResourceBusy};
pub use faults::{FailTarget, FailureEvent, TargetError};
pub use fitted::{figures_check, figures_parse, FigureError, FitError, HOST_READS_ONLY};
pub use ftl::{FaultCounters, MountReport};
pub use health::{Age, AgeError, Aging, EnduranceProfile, Health, RETENTION_FITTED_DAYS};
pub use nand::errors;
pub use nand::wear::ErrorCounters;
pub use output::write_whole;
pub use profile::{ControllerProfile, FitParam, FtlProfile, HostProfile, Management, NandProfile, PowerProfile, Profile, ProfileError};
pub use published::{Bound, By, Metric, Published, State};
pub use scale::{Scaling, ROUND_FULL_SIZE_S};
pub use status::{Rebuild, Status};
pub use store::card_file::CardFile;
pub use store::card_store::{CardStore, ServeAsk, ServePlan};
pub use store::lock::StoreLock;
pub use store::smart::SmartLog;
pub use store::volumes::{Volume, Volumes, VolumesError, VOLUMES_MAX};
pub use store::StoreError;

/// The built-in catalog, embedded from `devices/`.
pub const CATALOG: &[(&str, &str)] = &[
    ("flashmax2", include_str!("../../../devices/flashmax2.toml")),
    ("iodrive2-duo", include_str!("../../../devices/iodrive2-duo.toml")),
    ("p420m", include_str!("../../../devices/p420m.toml")),
    ("mx6300", include_str!("../../../devices/mx6300.toml")),
];

/// The device the README's first command reviews.
pub const DEFAULT_DEVICE: &str = "flashmax2";

/// Every catalog profile, parsed and checked.
pub fn catalog() -> Result<Vec<Profile>, ProfileError> {
    CATALOG.iter().map(|(id, text)| Profile::parse(&format!("devices/{id}.toml"), text)).collect()
}

/// A device by catalog id, or a profile file by path.
pub fn profile_load(name: &str) -> Result<Profile, ProfileError> {
    if let Some((id, text)) = CATALOG.iter().find(|(id, _)| *id == name) {
        return Profile::parse(&format!("devices/{id}.toml"), text);
    }
    if name.ends_with(".toml") || std::path::Path::new(name).exists() {
        let text = input::read_text(std::path::Path::new(name), input::SMALL_BYTES_MAX)
            .map_err(|e| ProfileError::Unreadable { name: name.to_string(), why: e.to_string() })?;
        return Profile::parse(name, &text);
    }
    let ids: Vec<&str> = CATALOG.iter().map(|(id, _)| *id).collect();
    Err(ProfileError::Unknown { name: name.to_string(), expected: ids.join(", ") })
}
