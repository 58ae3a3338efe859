//! The test lab: the only crate that turns runs into results and files.
//! Four layers, each using only the ones before it:
//!
//! - `runs`: a workload on a device and what is measured of it: workloads
//!   (`workload`), metering (`metrics`), steady-state detection (`steady`),
//!   a phase's results (`phase`), published figures beside simulated ones
//!   (`published`), a run or a sequence of steps (`run`), I/O traces read
//!   from their public formats (`trace`), and what a run on real storage
//!   says of where it ran (`measurement`, the one part of it the results
//!   of both kinds carry).
//! - `procedures`: the reviewers' procedure (`job`, `review`), the SNIA
//!   PTS (`pts`), the calibration against every published figure
//!   (`calibrate`), an accelerated life to wear-out (`endurance`) and a
//!   trace replayed on a card (`replay`).
//! - `real`: the lab on real storage, on the wall clock, which nothing in
//!   `runs` or `procedures` imports: a file, block device or NBD export
//!   (`target`) measured through fio (`measure`), the reviewers'
//!   procedure on it (`measured`), programs started on this host and
//!   stopped in order (`host`), a MariaDB server of the run's own
//!   (`mariadb`), sysbench's OLTP test (`sysbench`) and SysBench on
//!   MariaDB on a served card (`apptest`).
//! - `outputs`: SVG charts (`chart`), the review's charts (`figures`), what
//!   a review leaves (`report`, `files`), CSV tables (`csv`), the HTML
//!   report (`html`, `pts_page`, `page`), fio job files (`fio`), and the
//!   charts of a replay (`replay`), a sweep (`sweep`) and the SysBench
//!   test (`sysbench`).
//!
//! `number` (how figures are written) is shared by all four.

pub mod number;

pub mod runs {
    pub mod failure;
    pub mod interrupt;
    pub mod measurement;
    pub mod metrics;
    pub mod phase;
    pub mod published;
    pub mod run;
    pub mod spec;
    pub mod steady;
    pub mod threads;
    pub mod trace;
    pub mod workload;
}

pub mod procedures {
    pub mod bench;
    pub mod calibrate;
    pub mod endurance;
    pub mod figures;
    pub mod fit;
    pub mod job;
    pub mod prefixes;
    pub mod pts;
    pub mod replay;
    pub mod review;
    pub mod sweep;
}

pub mod real {
    pub mod apptest;
    pub mod host;
    pub mod mariadb;
    pub mod measure;
    pub mod measured;
    pub mod sysbench;
    pub mod target;
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
