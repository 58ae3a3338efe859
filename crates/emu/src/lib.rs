//! The card with real data: a data-holding device served as a block device
//! over NBD (`nbd`: the protocol; `server`: the connections and the thread
//! that owns the device; `listen`: the Unix or TCP socket it is served
//! on; `tls`: NBD over TLS), its control channel (`control`: the protocol; `channel`: its
//! socket), its management served or at rest (`manage`, one `status`),
//! and its metrics endpoint. The only crate that opens sockets and reads
//! the wall clock for the device's time.

pub mod access;
pub mod channel;
pub mod control;
pub mod listen;
pub mod live;
pub mod manage;
pub mod metrics;
pub mod nbd;
pub mod pace;
pub mod presentation;
mod replies;
mod request;
pub mod server;
pub mod service;
pub mod status;
pub mod tls;
pub mod trace;
pub mod writelog;

pub use control::{Control, ControlError, RequestError};
pub use pace::Timing;
pub use presentation::export_name;
pub use server::{Served, Server};
pub use status::CardStatus;
