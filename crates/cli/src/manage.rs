//! `flashlab status`, `format`, `volumes` and `beacon`: their arguments
//! and how their answers read. The commands run on the card served or at
//! rest through `emu::manage`.

use crate::out::JsonSink;
use anyhow::Result;
use emu::manage::tell;
use emu::presentation::VolumeName;
use emu::CardStatus;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A card's store directory as every command takes it: `--store DIR`.
/// `STORE` alone, the old form of status, format, volumes, beacon and
/// monitor, is still taken for a release, with a warning naming the new.
#[derive(clap::Args)]
pub struct StoreArg {
    /// The card's store directory (served or at rest).
    #[arg(long = "store", value_name = "DIR")]
    flag: Option<PathBuf>,
    /// The old form of --store DIR.
    #[arg(value_name = "STORE", hide = true)]
    old: Option<PathBuf>,
}

impl StoreArg {
    /// The directory, from whichever form was given (the old one warned).
    pub fn dir(&self, command: &str) -> Result<PathBuf> {
        store_of(self.flag.as_deref(), self.old.as_deref(), command)
    }

    /// The directory and where `--json [FILE]` goes. The old `status
    /// --json STORE` reads, in the one form, as JSON to a file named
    /// STORE: a directory given to --json where no store is given
    /// otherwise is taken as the old form's store, and the JSON goes to
    /// standard output.
    pub fn dir_and_json(mut self, json: Option<PathBuf>, command: &str) -> Result<(PathBuf, Option<JsonSink>)> {
        let mut json = json;
        if self.flag.is_none() && self.old.is_none() {
            if let Some(d) = json.take_if(|p| p.is_dir()) {
                self.old = Some(d);
                json = Some(PathBuf::from("-"));
            }
        }
        let dir = self.dir(command)?;
        Ok((dir, json.as_deref().map(JsonSink::open).transpose()?))
    }
}

/// `--store DIR`, or the old positional form with its warning.
fn store_of(flag: Option<&Path>, old: Option<&Path>, command: &str) -> Result<PathBuf> {
    match (flag, old) {
        (Some(d), None) => Ok(d.to_path_buf()),
        (None, Some(d)) => {
            eprintln!(
                "flashlab: warning: `flashlab {command} {}` is the old form of `flashlab {command} --store {}`; the old form goes in a later release",
                d.display(),
                d.display()
            );
            Ok(d.to_path_buf())
        }
        (Some(_), Some(d)) => anyhow::bail!("{}: the store is given by --store already", d.display()),
        (None, None) => anyhow::bail!("say which card: --store DIR (its store directory)"),
    }
}

#[derive(clap::Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub store: StoreArg,
    /// The whole status as JSON (the control protocol's `status` result):
    /// to FILE, or to standard output with `-` or no FILE.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct FormatArgs {
    #[command(flatten)]
    pub store: StoreArg,
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
    /// The result as JSON: to FILE, or to standard output with `-` or no
    /// FILE.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<PathBuf>,
}

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("how").args(["split", "merge"])))]
pub struct VolumesArgs {
    #[command(flatten)]
    pub store: StoreArg,
    /// Split the card into N volumes of equal capacity, sharing its flash,
    /// spare and garbage collection.
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..=card::VOLUMES_MAX as i64))]
    pub split: Option<u32>,
    /// Merge the volumes into one.
    #[arg(long)]
    pub merge: bool,
    /// Destroy the card's data: a split or merge refuses without it.
    #[arg(long)]
    pub force: bool,
    /// The result as JSON: to FILE, or to standard output with `-` or no
    /// FILE.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct BeaconArgs {
    /// The card's store directory (served or at rest).
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
    /// `on` lights the identify beacon, `off` puts it out (the old form
    /// `beacon STORE on|off` is still taken, with a warning).
    #[arg(num_args = 1..=2, required = true, value_name = "on|off")]
    pub words: Vec<String>,
}

/// Volumes as a person reads them: each export's name and capacity.
fn volumes_list(volumes: &[VolumeName]) -> String {
    let vols: Vec<String> = volumes.iter().map(|v| format!("'{}' {}", v.export, gb(v.bytes as f64))).collect();
    vols.join(", ")
}

/// What a format or a re-split left, as a person reads it.
fn reshaped_text(store: &Path, v: &Value) -> String {
    format!(
        "{}: {}, capacity {}; volumes: {}",
        store.display(),
        v["card"].as_str().unwrap_or("?"),
        gb(v["capacity_bytes"].as_f64().unwrap_or(0.0)),
        volumes_list(&serde_json::from_value::<Vec<VolumeName>>(v["volumes"].clone()).unwrap_or_default())
    )
}

pub fn format(a: FormatArgs) -> Result<()> {
    let (store, json) = a.store.dir_and_json(a.json, "format")?;
    let c = emu::Control::Format { format: a.format.clone(), secure_erase: a.secure_erase, force: a.force };
    let v = tell(&store, &c)?;
    if let Some(json) = json {
        return json.write(&v, false);
    }
    let how = if a.secure_erase {
        "formatted and purged (secure erase: no byte written before is left on the media)"
    } else {
        "formatted (every byte lost; wear kept)"
    };
    println!("{how}\n{}", reshaped_text(&store, &v));
    Ok(())
}

pub fn volumes(a: VolumesArgs) -> Result<()> {
    let (store, json) = a.store.dir_and_json(a.json, "volumes")?;
    let count = match (a.split, a.merge) {
        (Some(n), _) => n,
        (None, true) => 1,
        (None, false) => {
            let s = emu::manage::status(&store)?;
            if let Some(json) = json {
                return json.write(&serde_json::json!({ "volumes": s.volumes }), false);
            }
            println!("{}: volumes: {} (change with --split {} or --merge, and --force)", store.display(), volumes_list(&s.volumes), card::VOLUMES_MAX);
            return Ok(());
        }
    };
    let v = tell(&store, &emu::Control::Volumes { count, force: a.force })?;
    if let Some(json) = json {
        return json.write(&v, false);
    }
    println!("{} (every byte lost; wear kept)\n{}", if count == 1 { "merged into one volume" } else { "split" }, reshaped_text(&store, &v));
    Ok(())
}

pub fn beacon(a: BeaconArgs) -> Result<()> {
    let (old, state) = match &a.words[..] {
        [state] => (None, state),
        [store, state] => (Some(Path::new(store)), state),
        _ => unreachable!("clap takes one or two words"),
    };
    let store = store_of(a.store.as_deref(), old, "beacon")?;
    let on = match state.as_str() {
        "on" => true,
        "off" => false,
        s => anyhow::bail!("beacon {s}: on or off"),
    };
    tell(&store, &emu::Control::Beacon(on))?;
    println!("{}: beacon {}", store.display(), if on { "ON" } else { "off" });
    Ok(())
}

pub fn status(a: StatusArgs) -> Result<()> {
    let (store, json) = a.store.dir_and_json(a.json, "status")?;
    let s = emu::manage::status(&store)?;
    if let Some(json) = json {
        return json.write(&s, false);
    }
    print!("{}", status_text(&s)?);
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
fn unclean_text(s: &CardStatus, u: &emu::status::Unclean) -> Result<String> {
    use std::fmt::Write;
    let mut o = String::new();
    writeln!(o, "{} ({}) [simulated], format {}, scale 1/{}; at rest, NOT STOPPED CLEANLY", u.device, u.id, u.format, u.scale)?;
    writeln!(o, "capacity {}; volumes: {}; beacon {}", gb(u.capacity_bytes as f64), volumes_list(&s.volumes), on_off(u.beacon))?;
    writeln!(o, "written         {} by the host", gb(u.host_bytes_written as f64))?;
    smart_line(&mut o, &u.smart)?;
    writeln!(o, "alerts")?;
    writeln!(o, "  ! unclean shutdown: {}", u.needs_a_mount)?;
    Ok(o)
}

fn on_off(on: bool) -> &'static str {
    if on {
        "ON"
    } else {
        "off"
    }
}

fn smart_line(o: &mut String, m: &card::SmartLog) -> std::fmt::Result {
    use std::fmt::Write;
    writeln!(
        o,
        "SMART power cycles {}, unclean shutdowns {}, media errors {}, host reads {}, host writes {}, NAND writes {} (4 KiB slots)",
        m.power_cycles, m.unclean_shutdowns, m.media_errors, m.host_slots_read, m.host_slots_written, m.nand_slots_written
    )
}

/// The status as a person reads it.
fn status_text(cs: &CardStatus) -> Result<String> {
    use std::fmt::Write;
    let s = match &cs.card {
        emu::status::Known::Unclean(u) => return unclean_text(cs, u),
        emu::status::Known::Mounted(s) => s,
    };
    let mut o = String::new();
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    writeln!(o, "{} ({}) [simulated], format {}, scale 1/{}, {} member{}", s.device, s.id, s.format, s.scale, s.members, plural(s.members as usize))?;
    let served = if cs.served { format!("served, {} client{} connected", cs.clients, plural(cs.clients)) } else { "at rest".into() };
    writeln!(o, "firmware {} (profile crc {}); {served}; beacon {}", s.firmware, s.profile_crc, on_off(s.beacon))?;
    writeln!(o, "capacity {}{}; volumes: {}", gb(s.capacity_bytes as f64), full_size(s.scale, s.full_capacity_bytes), volumes_list(&cs.volumes))?;
    health_text(&mut o, s)?;
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

/// The health lines of a status: life, writes, spare, protection, losses.
fn health_text(o: &mut String, s: &card::Status) -> std::fmt::Result {
    use std::fmt::Write;
    let h = &s.health;
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
    if !s.age.is_new() {
        writeln!(o, "  aged            {} P/E cycles before its own erases, data {} days old [simulated bit errors]", s.age.pe_cycles, s.age.age_days)?;
    }
    let e = &s.read_errors;
    writeln!(
        o,
        "  read errors     {} page reads retried ({} retries), {} rebuilt from parity, {} beyond it (I/O errors), {} superblocks reclaimed, since power-on",
        e.reads_retried, e.read_retries, e.reads_rebuilt_from_parity, e.reads_uncorrectable, e.superblocks_reclaimed
    )?;
    if !s.dead_die_names.is_empty() || s.slots_lost > 0 {
        let dies = if s.dead_die_names.is_empty() { "none".to_string() } else { s.dead_die_names.join(", ") };
        writeln!(o, "  dead dies       {dies}; slots lost {}", s.slots_lost)?;
    }
    Ok(())
}
