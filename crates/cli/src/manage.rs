//! Managing a card, served (through its control channel) or at rest
//! (from its store): `flashlab status` (at rest read from the files,
//! changing nothing), `flashlab format`, `flashlab volumes` and `flashlab
//! beacon`. A command to a card at rest runs on the card opened from its
//! store, through the same control path a served card takes, and the card
//! is then stopped cleanly.

use crate::serve::{control_request, is_served};
use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct StatusArgs {
    /// The card's store directory.
    pub store: PathBuf,
    /// The whole status as JSON (the control protocol's `status` result).
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args)]
pub struct FormatArgs {
    /// The card's store directory (served or at rest).
    pub store: PathBuf,
    /// The new format: a named one (see `flashlab devices`) or a capacity
    /// (e.g. 1000GB); the rest of the flash is spare.
    #[arg(long)]
    pub format: String,
    /// Also purge every block from the media (the store's files hold no
    /// byte written before), as a sanitize does; wear is kept.
    #[arg(long)]
    pub secure_erase: bool,
    /// Destroy the card's data: a format refuses without it.
    #[arg(long)]
    pub force: bool,
    /// The result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("how").args(["split", "merge"])))]
pub struct VolumesArgs {
    /// The card's store directory (served or at rest).
    pub store: PathBuf,
    /// Split the card into N volumes of equal capacity, sharing its flash,
    /// spare and garbage collection.
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..=accel::VOLUMES_MAX as i64))]
    pub split: Option<u32>,
    /// Merge the volumes into one.
    #[arg(long)]
    pub merge: bool,
    /// Destroy the card's data: a split or merge refuses without it.
    #[arg(long)]
    pub force: bool,
    /// The result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args)]
pub struct BeaconArgs {
    /// The card's store directory (served or at rest).
    pub store: PathBuf,
    /// Light the identify beacon or put it out.
    #[arg(value_parser = ["on", "off"])]
    pub state: String,
}

/// The card a store at rest holds and its profile; a clear error where
/// there is none.
fn card_at_rest(store: &Path) -> Result<(accel::CardFile, accel::Profile)> {
    let card = accel::CardFile::load(store).map_err(anyhow::Error::msg)?;
    let Some(card) = card else {
        if accel::Device::store_exists(store) {
            bail!("{}: no card.toml (a store served by an older flashlab): serve it once with this one", store.display());
        }
        bail!("{}: no card here (no card.toml and no member-0.flash)", store.display());
    };
    let profile = accel::profile_load(&card.device).map_err(anyhow::Error::msg)?;
    Ok((card, profile))
}

/// The volumes a store at rest keeps (one, where it keeps none).
fn volumes_at_rest(store: &Path, capacity: u64) -> Result<accel::Volumes> {
    let kept = accel::Volumes::load(store).map_err(anyhow::Error::msg)?;
    let volumes = match kept {
        Some(v) => v,
        None => accel::Volumes::split(capacity, 1).map_err(anyhow::Error::msg)?,
    };
    volumes.check(capacity).map_err(|e| anyhow::anyhow!("{}: volumes.toml: {e}", store.display()))?;
    Ok(volumes)
}

/// Refuses to treat the card in `store` as at rest while a process owns
/// it: a server whose control socket does not answer (removed, or the
/// server hung) is still a server.
fn at_rest_check(store: &Path) -> Result<()> {
    if let Some(holder) = accel::StoreLock::holder(store) {
        bail!(
            "{}: the card is in use by {holder}, but its control socket {} does not answer (a server still mounting the store, or hung): it is not at rest; ask again once it serves, or stop that process (SIGTERM stops a server cleanly)",
            store.display(),
            store.join("control.sock").display()
        );
    }
    Ok(())
}

/// Tells the card in `store` a control command, served or at rest; its
/// result. At rest, live figures and failing a die need a served card.
pub fn tell(store: &Path, c: &emu::Control) -> Result<Value> {
    use emu::Control;
    if is_served(store) {
        return control_request(store, &c.request());
    }
    at_rest_check(store)?;
    match c {
        Control::Status => status_of(store),
        Control::Beacon(on) => {
            let _owned = accel::StoreLock::take(store, "flashlab beacon at rest").map_err(anyhow::Error::msg)?;
            emu::control::beacon_keep(store, *on).map_err(anyhow::Error::msg)?;
            Ok(json!({ "beacon": on }))
        }
        Control::Format { .. } | Control::Volumes { .. } => at_rest_run(store, c),
        Control::Stats | Control::FailDie(_) => bail!("{}: no card is served from this store, and '{}' needs a served card", store.display(), c.name()),
    }
}

/// Runs a command on the card at rest in `store`: opened (mounted) from
/// its files, told through the server's control path (the same checks as
/// a served card, with no client), then stopped cleanly.
fn at_rest_run(store: &Path, c: &emu::Control) -> Result<Value> {
    let (card, profile) = card_at_rest(store)?;
    // Refused before the card is opened: nothing changes, not even the
    // power-cycle count.
    emu::control::destroy_check(c, &profile, card.scale, 0).map_err(anyhow::Error::msg)?;
    let backing = accel::Backing::files(store, &card.owner(), &format!("flashlab {} at rest", c.name()))?;
    let device = accel::Device::with_backing(&profile, &card.format, card.scale, &backing)?;
    drop(backing);
    let volumes = volumes_at_rest(store, device.capacity_bytes())?;
    let (server, thread) = emu::Server::start(device, &profile.id, &volumes, emu::Timing::None, None);
    let result = server.control(c.clone());
    let stopped = server.shutdown();
    // The device (and with it the store's lock) is gone once its thread is.
    drop(server);
    let _ = thread.join();
    let v = result.map_err(anyhow::Error::msg)?;
    stopped.map_err(|e| anyhow::anyhow!("the card was changed, but its clean stop failed ({e}): the next start scans the media"))?;
    Ok(v)
}

/// The volumes of a status or a format's result: each export's name and
/// capacity.
fn volumes_list(v: &Value) -> String {
    let vols: Vec<String> = v["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|x| format!("'{}' {}", x["export"].as_str().unwrap_or("?"), gb(x["bytes"].as_f64().unwrap_or(0.0))))
        .collect();
    vols.join(", ")
}

/// What a format or a re-split left, as a person reads it.
fn reshaped_text(store: &Path, v: &Value) -> String {
    format!(
        "{}: {}, capacity {}; volumes: {}",
        store.display(),
        v["card"].as_str().unwrap_or("?"),
        gb(v["capacity_bytes"].as_f64().unwrap_or(0.0)),
        volumes_list(v)
    )
}

pub fn format(a: FormatArgs) -> Result<()> {
    let c = emu::Control::Format { format: a.format.clone(), secure_erase: a.secure_erase, force: a.force };
    let v = tell(&a.store, &c)?;
    if a.json {
        println!("{v}");
        return Ok(());
    }
    let how = if a.secure_erase {
        "formatted and purged (secure erase: no byte written before is left on the media)"
    } else {
        "formatted (every byte lost; wear kept)"
    };
    println!("{how}\n{}", reshaped_text(&a.store, &v));
    Ok(())
}

pub fn volumes(a: VolumesArgs) -> Result<()> {
    let count = match (a.split, a.merge) {
        (Some(n), _) => n,
        (None, true) => 1,
        (None, false) => {
            let v = status_of(&a.store)?;
            println!("{}: volumes: {} (change with --split {} or --merge, and --force)", a.store.display(), volumes_list(&v), accel::VOLUMES_MAX);
            return Ok(());
        }
    };
    let v = tell(&a.store, &emu::Control::Volumes { count, force: a.force })?;
    if a.json {
        println!("{v}");
        return Ok(());
    }
    println!("{} (every byte lost; wear kept)\n{}", if count == 1 { "merged into one volume" } else { "split" }, reshaped_text(&a.store, &v));
    Ok(())
}

pub fn beacon(a: BeaconArgs) -> Result<()> {
    let on = a.state == "on";
    tell(&a.store, &emu::Control::Beacon(on))?;
    println!("{}: beacon {}", a.store.display(), if on { "ON" } else { "off" });
    Ok(())
}

/// The status of the card in `store`: served (asked through its control
/// channel) or at rest (read from its files, nothing changed).
pub fn status_of(store: &Path) -> Result<Value> {
    if is_served(store) {
        let mut v = control_request(store, &emu::Control::Status.request())?;
        v["served"] = json!(true);
        return Ok(v);
    }
    at_rest_check(store)?;
    let (card, profile) = card_at_rest(store)?;
    if !accel::Device::stopped_cleanly(store, profile.members) {
        return unclean_status_of(store, &card, &profile);
    }
    let backing = accel::Backing::inspect(store, &card.owner())?;
    let device = accel::Device::with_backing(&profile, &card.format, card.scale, &backing)?;
    let mut v = serde_json::to_value(device.status(0, None, card.beacon))?;
    let volumes = volumes_at_rest(store, device.capacity_bytes())?;
    v["volumes"] = volumes_json(&card, &volumes);
    v["clients"] = json!(0);
    v["served"] = json!(false);
    Ok(v)
}

/// What the files of a card that did not stop cleanly tell, changing
/// nothing: what it is, its volumes, beacon and SMART-like log (with the
/// counters kept beside its pages); its map, spare, health and failures
/// need a mount, which repairs, so they are named, not guessed.
fn unclean_status_of(store: &Path, card: &accel::CardFile, profile: &accel::Profile) -> Result<Value> {
    let _shared = accel::StoreLock::share(store).map_err(anyhow::Error::msg)?;
    let capacity = accel::Device::capacity_of(profile, &card.format, card.scale)?;
    let volumes = volumes_at_rest(store, capacity)?;
    let smart = accel::SmartLog::at_rest(store).map_err(anyhow::Error::msg)?;
    Ok(json!({
        "device": profile.name,
        "id": profile.id,
        "format": card.format,
        "scale": card.scale,
        "members": profile.members,
        "capacity_bytes": capacity,
        "beacon": card.beacon,
        "volumes": volumes_json(card, &volumes),
        "smart": smart,
        "host_bytes_written": smart.host_slots_written * units::SLOT_BYTES,
        "clients": 0,
        "served": false,
        "stopped_cleanly": false,
        "needs_a_mount": "the card did not stop cleanly (no checkpoint): its map, spare, health, dead dies and lost slots are known only once it is mounted, and a mount repairs (serve it once, then ask again)",
    }))
}

/// The volumes of a card at rest, named as its exports are when served
/// (`NAME`, or `NAME-1` and `NAME-2` for a split card).
fn volumes_json(card: &accel::CardFile, volumes: &accel::Volumes) -> Value {
    let n = volumes.count();
    Value::Array((1..=n).zip(volumes.list()).map(|(i, v)| json!({ "export": emu::export_name(card.export_base(), i, n), "bytes": v.bytes })).collect())
}

pub fn status(a: StatusArgs) -> Result<()> {
    let v = status_of(&a.store)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    print!("{}", status_text(&v)?);
    Ok(())
}

/// A scaled card's capacity is its own; the full-size format's beside it.
fn full_size(scale: u32, full_bytes: u64) -> String {
    match scale {
        1 => String::new(),
        _ => format!(" (its share at scale 1/{scale} of the full-size format's {})", gb(full_bytes as f64)),
    }
}

fn gb(bytes: f64) -> String {
    if bytes >= 1e12 {
        format!("{:.2} TB", bytes / 1e12)
    } else if bytes >= 1e9 {
        format!("{:.1} GB", bytes / 1e9)
    } else {
        format!("{:.1} MB", bytes / 1e6)
    }
}

/// What the files of a card that did not stop cleanly tell, as a person
/// reads it.
fn unclean_text(v: &Value) -> Result<String> {
    use std::fmt::Write;
    let m: accel::SmartLog = serde_json::from_value(v["smart"].clone()).context("the card's SMART log")?;
    let mut o = String::new();
    writeln!(
        o,
        "{} ({}) [simulated], format {}, scale 1/{}; at rest, NOT STOPPED CLEANLY",
        v["device"].as_str().unwrap_or("?"),
        v["id"].as_str().unwrap_or("?"),
        v["format"].as_str().unwrap_or("?"),
        v["scale"]
    )?;
    writeln!(
        o,
        "capacity {}; volumes: {}; beacon {}",
        gb(v["capacity_bytes"].as_f64().unwrap_or(0.0)),
        volumes_list(v),
        if v["beacon"] == true { "ON" } else { "off" }
    )?;
    writeln!(o, "written         {} by the host", gb(v["host_bytes_written"].as_f64().unwrap_or(0.0)))?;
    smart_line(&mut o, &m)?;
    writeln!(o, "alerts")?;
    writeln!(o, "  ! unclean shutdown: {}", v["needs_a_mount"].as_str().unwrap_or(""))?;
    Ok(o)
}

fn smart_line(o: &mut String, m: &accel::SmartLog) -> std::fmt::Result {
    use std::fmt::Write;
    writeln!(
        o,
        "SMART power cycles {}, unclean shutdowns {}, media errors {}, host reads {}, host writes {}, NAND writes {} (4 KiB slots)",
        m.power_cycles, m.unclean_shutdowns, m.media_errors, m.host_slots_read, m.host_slots_written, m.nand_slots_written
    )
}

/// The status as a person reads it.
fn status_text(v: &Value) -> Result<String> {
    use std::fmt::Write;
    if v["stopped_cleanly"] == false {
        return unclean_text(v);
    }
    let s: accel::Status = serde_json::from_value(v.clone()).context("the card's status")?;
    let h = &s.health;
    let mut o = String::new();
    writeln!(
        o,
        "{} ({}) [simulated], format {}, scale 1/{}, {} member{}",
        s.device,
        s.id,
        s.format,
        s.scale,
        s.members,
        if s.members == 1 { "" } else { "s" }
    )?;
    let served = if v["served"].as_bool() == Some(true) {
        format!("served, {} client{} connected", v["clients"], if v["clients"] == 1 { "" } else { "s" })
    } else {
        "at rest".into()
    };
    writeln!(o, "firmware {} (profile crc {}); {served}; beacon {}", s.firmware, s.profile_crc, if s.beacon { "ON" } else { "off" })?;
    writeln!(o, "capacity {}{}; volumes: {}", gb(s.capacity_bytes as f64), full_size(s.scale, s.full_capacity_bytes), volumes_list(v))?;
    writeln!(o, "health")?;
    match (h.life_used, h.pe_cycles_rated) {
        (Some(l), Some(r)) => writeln!(
            o,
            "  life used       {:.1}% (mean {:.0} of {r} rated P/E cycles; spread {} cycles, {}..{})",
            l * 100.0,
            h.pe_cycles_mean,
            s.erase_spread_cycles,
            h.pe_cycles_min,
            h.pe_cycles_max
        )?,
        _ => writeln!(o, "  life used       not rated (mean {:.0} P/E cycles)", h.pe_cycles_mean)?,
    }
    let rated = s.rated_drive_writes.map_or("no rated bytes written in the profile".to_string(), |r| format!("of the rated {r:.0}"));
    writeln!(o, "  written         {} by the host: {:.2} drive writes {rated}", gb(s.host_bytes_written as f64), s.drive_writes)?;
    match s.lifetime_write_amplification {
        Some(wa) => writeln!(o, "  write ampl.     {wa:.2} over its life (NAND programs per host write: GC, rebuilds, parity and padding counted)")?,
        None => writeln!(o, "  write ampl.     none yet (nothing written)")?,
    }
    let b = &h.bad_blocks;
    writeln!(
        o,
        "  effective OP    {:.1}% (spare after GC's working room, over the format); bad blocks {} of {} ({} from the factory, {} grown)",
        h.spare_share * 100.0,
        b.factory + b.grown,
        h.blocks,
        b.factory,
        b.grown
    )?;
    writeln!(o, "  power-loss prot. {}; read-only: {}", if s.power_loss_protection { "on" } else { "off" }, s.read_only.as_deref().unwrap_or("no"))?;
    if !s.dead_die_names.is_empty() || s.slots_lost > 0 {
        let dies = if s.dead_die_names.is_empty() { "none".to_string() } else { s.dead_die_names.join(", ") };
        writeln!(o, "  dead dies       {dies}; slots lost {}", s.slots_lost)?;
    }
    let power = match (s.power_watts, s.power_idle_watts, s.power_max_watts) {
        (Some(w), Some(i), Some(m)) => format!("{w:.1} W over the last second [modelled; {i} W idle, {m} W max]"),
        (None, Some(i), Some(m)) => format!("not drawing (at rest; {i} W idle, {m} W max)"),
        _ => "not published for this card".into(),
    };
    writeln!(o, "power {power}")?;
    if let Some(m) = &s.smart {
        smart_line(&mut o, m)?;
    }
    if s.alerts.is_empty() {
        writeln!(o, "alerts none")?;
    } else {
        writeln!(o, "alerts")?;
        for a in &s.alerts {
            writeln!(o, "  ! {a}")?;
        }
    }
    Ok(o)
}
