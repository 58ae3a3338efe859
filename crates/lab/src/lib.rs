//! The test lab: the only crate that turns runs into results and files.
//! Three layers, each using only the ones before it:
//!
//! - `runs`: a workload on a device and what is measured of it: workloads
//!   (`workload`), metering (`metrics`), steady-state detection (`steady`),
//!   a phase's results (`phase`), published figures beside simulated ones
//!   (`published`), a run or a sequence of steps (`run`), and real
//!   storage measured through fio (`measure`), I/O traces read from
//!   their public formats (`trace`), programs started on this host and
//!   stopped in order (`host`), a MariaDB server of the run's own
//!   (`mariadb`) and sysbench's OLTP test (`sysbench`).
//! - `procedures`: the reviewers' procedure (`job`, `review`), the SNIA
//!   PTS (`pts`), the calibration against every published figure
//!   (`calibrate`), an accelerated life to wear-out (`endurance`), a
//!   trace replayed on a card (`replay`) and SysBench on MariaDB on a
//!   served card (`apptest`).
//! - `outputs`: SVG charts (`chart`), the review's charts (`figures`), what
//!   a review leaves (`report`, `files`), CSV tables (`csv`), the HTML
//!   report (`html`, `pts_page`, `page`), fio job files (`fio`), and the
//!   charts of a replay (`replay`), a sweep (`sweep`) and the SysBench
//!   test (`sysbench`).
//!
//! `number` (how figures are written) is shared by all three.

pub mod number;

pub mod runs {
    pub mod failure;
    pub mod host;
    pub mod interrupt;
    pub mod mariadb;
    pub mod measure;
    pub mod metrics;
    pub mod phase;
    pub mod published;
    pub mod run;
    pub mod spec;
    pub mod steady;
    pub mod sysbench;
    pub mod target;
    pub mod threads;
    pub mod trace;
    pub mod workload;
}

pub mod procedures {
    pub mod apptest;
    pub mod bench;
    pub mod calibrate;
    pub mod endurance;
    pub mod figures;
    pub mod fit;
    pub mod job;
    pub mod measured;
    pub mod prefixes;
    pub mod pts;
    pub mod replay;
    pub mod review;
    pub mod sweep;
}

pub mod outputs {
    pub mod chart;
    pub mod csv;
    pub mod figures;
    pub mod files;
    pub mod fio;
    pub mod html;
    pub mod page;
    pub mod pts_page;
    pub mod replay;
    pub mod report;
    pub mod sweep;
    pub mod sysbench;
}

pub use outputs::{chart, fio, report};
pub use procedures::{calibrate, job, pts, review};
pub use runs::{interrupt, metrics, phase, published, run, steady, workload};

pub use phase::Phase;
pub use run::{run, Length, Progress, RunError, RunResult, RunSpec, Session};
pub use workload::{Mix, MixGen};
