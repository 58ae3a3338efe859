//! The test lab: workloads, the metering of runs, steady-state detection
//! and the results of a run. The only crate that turns runs into results.

pub mod calibrate;
pub mod chart;
pub mod fio;
pub mod metrics;
pub mod pts;
pub mod published;
pub mod report;
pub mod review;
pub mod run;
pub mod steady;
pub mod workload;

pub use run::{run, Length, Phase, Progress, RunError, RunResult, RunSpec, Session};
pub use workload::{Mix, MixGen};
