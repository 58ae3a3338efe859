//! The simulated accelerator, in three rooms: `catalog` (what a card is:
//! its profiles, published figures, fitted numbers and scaling), `store`
//! (what a card keeps: its files beside the page files) and `device`
//! (what it does: the timed device around the FTL, its faults, mount and
//! snapshot). The rest: a device's block API (`block`), health and
//! status, the recorder of media operations, bounded input and whole
//! output files.

mod block;
pub mod catalog;
mod device;
mod health;
pub mod input;
pub mod output;
mod recorder;
mod status;
mod store;

pub use catalog::fitted::{figures_check, figures_parse, FigureError, FitError, HOST_READS_ONLY};
pub use catalog::host::{host_id, host_load, host_not_default, host_short, CompletionCore, Host, Scheduler, DEFAULT_HOST, HOSTS, HOST_ALIASES};
pub use catalog::profile::{
    BridgeProfile, ControllerProfile, FitParam, FtlProfile, HostProfile, Management, NandProfile, PowerProfile, Profile, ProfileError, WriteCache,
};
pub use catalog::published::{Bound, By, Metric, Published, State};
pub use catalog::scale::{Scaling, ROUND_FULL_SIZE_S};
pub use catalog::{catalog, profile_load, published, scale, CATALOG, DEFAULT_DEVICE};
pub use device::faults::{self, FailTarget, FailureEvent, TargetError};
pub use device::{capacity_parse, Backing, Device, DeviceCounters, DeviceError, Inconsistent, MountFirst, Payload, ResourceBusy};
pub use ftl::{FaultCounters, MountReport};
pub use health::{Age, AgeError, Aging, EnduranceProfile, Health, RETENTION_FITTED_DAYS};
pub use nand::errors;
pub use nand::wear::ErrorCounters;
pub use output::write_whole;
pub use status::{Rebuild, Status};
pub use store::card_file::CardFile;
pub use store::card_store::{CardStore, ServeAsk, ServePlan};
pub use store::lock::StoreLock;
pub use store::smart::SmartLog;
pub use store::volumes::{Volume, Volumes, VolumesError, VOLUMES_MAX};
pub use store::StoreError;
