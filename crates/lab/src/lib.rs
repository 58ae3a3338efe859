//! The test lab: workloads, the metering of runs, steady-state detection
//! and the results of a run. The only crate that turns runs into results.

pub mod metrics;
pub mod run;
pub mod steady;
pub mod workload;

pub use run::{run, Phase, Progress, RunError, RunResult, RunSpec};
pub use workload::{Mix, MixGen};
