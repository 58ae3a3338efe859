//! The virtual-time engine. Knows nothing of flash.
//!
//! A run is a closed loop: `threads x queue_depth` host slots, each keeping
//! one I/O outstanding. Completions are events ordered by (time, host slot),
//! so ties break the same way on every run. The target computes an
//! I/O's completion time when it is issued, by reserving the resources it
//! passes through ([`Timeline`], [`PrioTimeline`], [`OpTimeline`],
//! [`Pool`]) in issue order: a FCFS queue at each resource. Only
//! completions are events, which keeps the engine at a heap of
//! `threads x queue_depth` entries whatever the device's size.

mod engine;
mod events;
mod gate;
mod heap;
mod ops;
mod pool;
#[cfg(test)]
mod tests;
mod timeline;

pub use engine::{Engine, Io, Observer, Target, Workload, LOOKAHEAD};
pub use events::SlotTree;
pub use gate::Gate;
pub use heap::MinHeap;
pub use ops::OpTimeline;
pub use pool::Pool;
pub use timeline::{PrioTimeline, Timeline};
pub use units::Rng;
