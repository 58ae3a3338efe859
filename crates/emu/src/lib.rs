//! The card with real data: a data-holding device served as a block device
//! over NBD (`nbd`: the protocol; `server`: the connections and the thread
//! that owns the device). The only crate that opens sockets and reads the
//! wall clock for the device's time.

pub mod client;
pub mod control;
pub mod live;
pub mod nbd;
pub mod pace;
pub mod server;
pub mod writelog;

pub use control::Control;
pub use pace::Timing;
pub use server::{export_name, Served, Server};
