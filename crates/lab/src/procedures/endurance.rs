//! Endurance: a card aged to wear-out at an accelerated pace.
//!
//! The card runs a workload at 16 threads x 16 queue depth from a secure
//! erase until its blocks have worn out so far that the good ones no
//! longer hold the format and it turns read-only (or a cap on life used is
//! reached). Each erase stands for `cycles_per_erase` program/erase cycles
//! and each host write for as many: the workload's write amplification and
//! the wear spread are the simulator's, only the count of repeats is
//! shortened. After each step the card's life used (mean cycles over the
//! rated cycles), drive writes and petabytes written (at full size), bad
//! blocks, spare, write amplification and latency are recorded.

use crate::phase::Phase;
use crate::run::{device_info, DeviceInfo, Length, RunError, Session};
use crate::workload::Mix;
use card::{Aging, EnduranceProfile, Health, Profile};
use serde::{Deserialize, Serialize};
use units::SLOT_BYTES;

/// Threads and queue depth the card is aged at (the reviewers'
/// preconditioning load).
const THREADS: u32 = 16;
const QUEUE_DEPTH: u32 = 16;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EnduranceSpec {
    pub format: String,
    pub workload: String,
    pub scale: u32,
    pub seed: u64,
    /// Cycles an erase stands for; none: a fiftieth of the rated cycles.
    pub cycles_per_erase: Option<u32>,
    /// Drive writes (equivalent) between two points of the life curve.
    pub step_drive_writes: f64,
    /// Stop once this share of the rated life is used, worn out or not.
    pub life_max: f64,
}

impl EnduranceSpec {
    pub fn new(profile: &Profile, workload: &str, scale: u32, seed: u64) -> EnduranceSpec {
        EnduranceSpec {
            format: profile.default_format.clone(),
            workload: workload.into(),
            scale,
            seed,
            cycles_per_erase: None,
            step_drive_writes: 0.0,
            life_max: 20.0,
        }
    }
}

/// The card at one point of its life.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LifePoint {
    /// Host writes so far, in drive writes (equivalent: each counted
    /// `cycles_per_erase` times).
    pub drive_writes: f64,
    /// The same at full size, in petabytes.
    pub petabytes_written: f64,
    /// Mean cycles over the rated cycles.
    pub life_used: f64,
    pub pe_cycles_max: u32,
    pub bad_blocks_factory: u32,
    pub bad_blocks_grown: u32,
    /// Of the grown bad blocks, those whose program failed (their page
    /// written again, their superblock emptied).
    pub bad_blocks_grown_program: u32,
    /// Bad blocks over the card's blocks.
    pub bad_share: f64,
    /// Spare beyond the format and GC's needs, over the format.
    pub spare_share: f64,
    /// Write amplification over the step (data only).
    pub wa: f64,
    pub iops: f64,
    pub latency_avg_ms: f64,
    pub latency_p99_ms: f64,
    pub latency_max_ms: f64,
    /// Read retries over the step (the bit error model's).
    pub read_retries: u64,
}

/// Where the card ended.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WearOut {
    pub drive_writes: f64,
    pub petabytes_written: f64,
    pub life_used: f64,
    pub why: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EnduranceResult {
    pub flashlab_version: String,
    pub note: String,
    pub device: DeviceInfo,
    pub spec: EnduranceSpec,
    pub cycles_per_erase: u32,
    pub full_capacity_bytes: u64,
    pub rated_pe_cycles: u32,
    pub rated_petabytes_written: Option<f64>,
    /// Drive writes and petabytes when the mean cycles reached the rating.
    pub at_rated_cycles: Option<(f64, f64)>,
    /// The read-only point; none if the cap on life came first.
    pub wear_out: Option<WearOut>,
    /// Write amplification over the whole life (data only).
    pub wa_lifetime: f64,
    pub points: Vec<LifePoint>,
    /// Why the life is not whole (a stop asked for), where it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
}

/// Ages a card to wear-out. `step` sees each point as it is taken.
pub fn endurance(profile: &Profile, spec: &EnduranceSpec, step: &mut dyn FnMut(&LifePoint)) -> Result<EnduranceResult, RunError> {
    let (e, cpe, mix) = spec_check(profile, spec)?;
    let mut session = Session::aging(profile, &spec.format, spec.scale, spec.seed, Aging { cycles_per_erase: cpe, seed: spec.seed })?;
    session.secure_erase()?;
    let dev = &session.device;
    let (cap, full) = (dev.capacity_bytes(), dev.full_capacity_bytes());
    let step_dw = if spec.step_drive_writes > 0.0 { spec.step_drive_writes } else { e.rated_pe_cycles as f64 / 20.0 };
    // Host bytes one step writes, shrunk by the acceleration.
    let step_bytes = step_dw * cap as f64 / cpe as f64;
    let ios = (step_bytes / (mix.write_share() * mix.mean_bytes())).ceil().max(1.0) as u64;
    let equiv = |host_slots: u64| host_slots as f64 * SLOT_BYTES as f64 * cpe as f64 / cap as f64;
    let petabytes = |drive_writes: f64| drive_writes * full as f64 / 1e15;
    let worn = |dw: f64, life: f64, why: String| WearOut { drive_writes: dw, petabytes_written: petabytes(dw), life_used: life, why };
    let mut points: Vec<LifePoint> = Vec::new();
    let start = session.device.counters();
    let wear_out = loop {
        let before = session.device.counters();
        let r = session.measure("life", &mix, THREADS, QUEUE_DEPTH, Length::Ios(ios), &mut |_| {});
        let h = session.device.health();
        let now = session.device.counters();
        let dw = equiv(now.host_slots_written - start.host_slots_written);
        let life = h.life_used.unwrap_or(0.0);
        let ph = match r {
            Ok(ph) => ph,
            Err(err) => match &h.read_only {
                // The card turned read-only during the step.
                Some(why) => break Some(worn(dw, life, why.clone())),
                None => return Err(err),
            },
        };
        let p = LifePoint { wa: now.wa_since(&before), ..life_point(&h, &ph, dw, petabytes(dw)) };
        step(&p);
        points.push(p);
        if let Some(why) = h.read_only {
            break Some(worn(dw, life, why));
        }
        if life >= spec.life_max || crate::runs::interrupt::asked() {
            break None;
        }
    };
    let incomplete = crate::runs::interrupt::asked().then(|| {
        format!(
            "interrupted (SIGINT) at {} drive writes: the life curve ends there, before wear-out",
            crate::number::num(points.last().map_or(0.0, |p| p.drive_writes))
        )
    });
    let end = session.device.counters();
    Ok(EnduranceResult {
        flashlab_version: env!("CARGO_PKG_VERSION").to_string(),
        note: "simulated: an accelerated life in flashlab's model of the device, in virtual time".into(),
        device: device_info(profile, &spec.format, spec.scale, &session.device),
        spec: spec.clone(),
        cycles_per_erase: cpe,
        full_capacity_bytes: full,
        rated_pe_cycles: e.rated_pe_cycles,
        rated_petabytes_written: e.rated_petabytes_written,
        at_rated_cycles: crossing(&points, 1.0),
        wear_out,
        wa_lifetime: end.wa_since(&start),
        points,
        incomplete,
    })
}

/// The rated cycles and the data sheet's allowance of the card, the cycles
/// one erase stands for and the workload, checked.
fn spec_check<'a>(profile: &'a Profile, spec: &EnduranceSpec) -> Result<(&'a EnduranceProfile, u32, Mix), RunError> {
    let e = profile
        .nand
        .endurance
        .as_ref()
        .ok_or_else(|| RunError::Input(format!("{}: the profile has no [nand.endurance] (rated cycles, bad-block allowance)", profile.id)))?;
    if !(spec.life_max > 0.0 && spec.life_max <= 100.0) {
        return Err(RunError::Input(format!("life cap {}: must be in (0, 100] times the rated cycles", spec.life_max)));
    }
    let cpe = spec.cycles_per_erase.unwrap_or((e.rated_pe_cycles / 50).max(1));
    if cpe == 0 || cpe > e.rated_pe_cycles {
        return Err(RunError::Input(format!("--acceleration {cpe}: must be in 1..={} (the rated cycles)", e.rated_pe_cycles)));
    }
    let mix = Mix::parse(&spec.workload).map_err(|e| RunError::Input(e.to_string()))?;
    if mix.write_share() == 0.0 {
        return Err(RunError::Input(format!("workload '{}' does not write: it cannot wear a card", spec.workload)));
    }
    Ok((e, cpe, mix))
}

/// A point of the life curve from the card's health and the step's phase
/// (write amplification left at 0, for the caller).
fn life_point(h: &Health, ph: &Phase, drive_writes: f64, petabytes_written: f64) -> LifePoint {
    LifePoint {
        drive_writes,
        petabytes_written,
        life_used: h.life_used.unwrap_or(0.0),
        pe_cycles_max: h.pe_cycles_max,
        bad_blocks_factory: h.bad_blocks.factory,
        bad_blocks_grown: h.bad_blocks.grown,
        bad_blocks_grown_program: h.bad_blocks.grown_program,
        bad_share: h.bad_blocks.total() as f64 / h.blocks as f64,
        spare_share: h.spare_share,
        wa: 0.0,
        iops: ph.summary.all.iops,
        latency_avg_ms: ph.summary.all.latency_avg_ms,
        latency_p99_ms: ph.summary.all.latency_p99_ms,
        latency_max_ms: ph.summary.all.latency_max_ms,
        read_retries: ph.read_errors.read_retries,
    }
}

/// Drive writes and petabytes where life used crosses `life`, by linear
/// interpolation between the points around it.
fn crossing(points: &[LifePoint], life: f64) -> Option<(f64, f64)> {
    let mut prev: Option<&LifePoint> = None;
    for p in points {
        if p.life_used >= life {
            let (x0, l0, pb0) = prev.map_or((0.0, 0.0, 0.0), |q| (q.drive_writes, q.life_used, q.petabytes_written));
            let t = if p.life_used > l0 { (life - l0) / (p.life_used - l0) } else { 1.0 };
            return Some((x0 + t * (p.drive_writes - x0), pb0 + t * (p.petabytes_written - pb0)));
        }
        prev = Some(p);
    }
    None
}
