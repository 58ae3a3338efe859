//! Managing a card wherever it is: a command told to a served card goes
//! through its control channel; told to a card at rest, it runs on the
//! card opened from its store (the same checks as a served card's, with no
//! client), which is then stopped cleanly. A store a process owns but
//! whose channel does not answer is neither, and is refused.

use crate::channel;
use crate::control::{self, Control};
use crate::presentation::volume_names;
use crate::status::{CardStatus, Known, Unclean};
use anyhow::{bail, Result};
use serde_json::{json, Value};
use std::path::Path;

/// Tells the card in `store` a control command, served or at rest; its
/// result. At rest, live figures and failing a die need a served card.
pub fn tell(store: &Path, c: &Control) -> Result<Value> {
    if channel::is_served(store) {
        return channel::request(store, &c.request());
    }
    at_rest_check(store)?;
    crate::access::Access::of_store(store).apply();
    match c {
        Control::Status => Ok(serde_json::to_value(status_at_rest(store)?)?),
        Control::Beacon(on) => {
            let _owned = card::CardStore::at(store).take("flashlab beacon at rest")?;
            card::CardStore::at(store).beacon_keep(*on)?;
            Ok(json!({ "beacon": on }))
        }
        Control::Format { .. } | Control::Volumes { .. } => at_rest_run(store, c),
        Control::Stats | Control::FailDie(_) => bail!("{}: no card is served from this store, and '{}' needs a served card", store.display(), c.name()),
    }
}

/// The status of the card in `store`: served (asked through its control
/// channel) or at rest (read from its files, nothing changed).
pub fn status(store: &Path) -> Result<CardStatus> {
    if channel::is_served(store) {
        let v = channel::request(store, &Control::Status.request())?;
        return Ok(serde_json::from_value(v)?);
    }
    at_rest_check(store)?;
    status_at_rest(store)
}

/// The status of the card at rest in `store`, nothing changed: all of it
/// where it stopped cleanly, else what its files tell.
fn status_at_rest(store: &Path) -> Result<CardStatus> {
    let (card, profile) = card_at_rest(store)?;
    if !card::Device::stopped_cleanly(store, profile.members) {
        return unclean_status(store, &card, &profile);
    }
    let backing = card::Backing::inspect(store, &card.owner())?;
    let mut device = card::Device::with_backing(&profile, &card.format, card.scale, &backing)?;
    device.age_set(card.age);
    let volumes = volumes_at_rest(store, device.capacity_bytes())?;
    let s = device.status(0, None, card.beacon);
    Ok(CardStatus { served: false, clients: 0, volumes: volume_names(card.export_base(), &volumes), card: Known::Mounted(Box::new(s)) })
}

/// What the files of a card that did not stop cleanly tell, changing
/// nothing: what it is, its volumes, beacon and SMART-like log (with the
/// counters kept beside its pages).
fn unclean_status(store: &Path, card: &card::CardFile, profile: &card::Profile) -> Result<CardStatus> {
    let _shared = card::CardStore::at(store).share()?;
    let capacity = card::Device::capacity_of(profile, &card.format, card.scale)?;
    let volumes = volumes_at_rest(store, capacity)?;
    let smart = card::CardStore::at(store).smart_at_rest()?;
    let unclean = Unclean {
        device: profile.name.clone(),
        id: profile.id.clone(),
        format: card.format.clone(),
        scale: card.scale,
        members: profile.members,
        capacity_bytes: capacity,
        beacon: card.beacon,
        host_bytes_written: smart.host_slots_written * units::SLOT_BYTES,
        smart,
        stopped_cleanly: false,
        needs_a_mount: "the card did not stop cleanly (no checkpoint): its map, spare, health, dead dies and lost slots are known only once it is mounted, and a mount repairs (serve it once, then ask again)".into(),
    };
    Ok(CardStatus { served: false, clients: 0, volumes: volume_names(card.export_base(), &volumes), card: Known::Unclean(Box::new(unclean)) })
}

/// The card a store at rest holds and its profile; a clear error where
/// there is none.
fn card_at_rest(store: &Path) -> Result<(card::CardFile, card::Profile)> {
    let card = card::CardStore::at(store).card()?;
    let Some(card) = card else {
        if card::CardStore::at(store).holds_card() {
            bail!("{}: no card.toml (a store served by an older flashlab): serve it once with this one", store.display());
        }
        bail!("{}: no card here (no card.toml and no member-0.flash)", store.display());
    };
    let profile = card::profile_load(&card.device).map_err(anyhow::Error::msg)?;
    card.fits(store, &profile)?;
    Ok((card, profile))
}

/// The volumes a store at rest keeps (one, where it keeps none).
fn volumes_at_rest(store: &Path, capacity: u64) -> Result<card::Volumes> {
    let kept = card::CardStore::at(store).volumes()?;
    let volumes = match kept {
        Some(v) => v,
        None => card::Volumes::split(capacity, 1).map_err(anyhow::Error::msg)?,
    };
    volumes.check(capacity).map_err(|e| anyhow::anyhow!("{}: {e}", store.join("volumes.toml").display()))?;
    Ok(volumes)
}

/// Refuses to treat the card in `store` as at rest while a process owns
/// it: a server whose control socket does not answer (removed, or the
/// server hung) is still a server.
fn at_rest_check(store: &Path) -> Result<()> {
    let socket = channel::socket_path(store);
    if let Err(e) = std::os::unix::net::UnixStream::connect(&socket) {
        if e.kind() == std::io::ErrorKind::PermissionDenied {
            bail!(
                "{}: permission denied: the card's server does not let this user in (its owner serves it with --access owner; --access group lets the group in)",
                socket.display()
            );
        }
    }
    if let Some(holder) = card::CardStore::at(store).holder() {
        bail!(
            "{}: the card is in use by {holder}, but its control socket {} does not answer (a server still mounting the store, or hung): it is not at rest; ask again once it serves, or stop that process (SIGTERM stops a server cleanly)",
            store.display(),
            channel::socket_path(store).display()
        );
    }
    Ok(())
}

/// Runs a command on the card at rest in `store`: opened (mounted) from
/// its files, told through the server's control path (the same checks as
/// a served card, with no client), then stopped cleanly.
fn at_rest_run(store: &Path, c: &Control) -> Result<Value> {
    let (card, profile) = card_at_rest(store)?;
    // Refused before the card is opened: nothing changes, not even the
    // power-cycle count.
    control::destroy_check(c, &profile, card.scale, 0).map_err(anyhow::Error::msg)?;
    let backing = card::Backing::files(store, &card.owner(), &format!("flashlab {} at rest", c.name()))?;
    let mut device = card::Device::with_backing(&profile, &card.format, card.scale, &backing)?;
    device.age_set(card.age);
    drop(backing);
    let volumes = volumes_at_rest(store, device.capacity_bytes())?;
    let (server, thread) = crate::Server::start(device, card.export_base(), &volumes, crate::Timing::None, None);
    let result = server.control(c.clone());
    let stopped = server.shutdown();
    // The device (and with it the store's lock) is gone once its thread is.
    drop(server);
    let _ = thread.join();
    let v = result.map_err(anyhow::Error::msg)?;
    stopped.map_err(|e| anyhow::anyhow!("the card was changed, but its clean stop failed ({e}): the next start scans the media"))?;
    Ok(v)
}

/// How long a secure erase for the lab waits for clients that have just
/// disconnected (fio, between phases) to be gone.
const ERASE_WAIT_MS: u64 = 5_000;

/// Secure-erases the card served from `store` over its control channel,
/// keeping its format: the erase the lab does before preconditioning a
/// served card reached over NBD. `export_bytes`, the export's size where
/// known, must be the card's (a store that serves another card is
/// refused). What was done, said for the results.
pub fn secure_erase_served(store: &Path, export_bytes: Option<u64>) -> Result<String> {
    if !channel::is_served(store) {
        bail!("{}: no card is served from this store (its control socket does not answer)", store.display());
    }
    let s = status(store)?;
    let crate::status::Known::Mounted(card) = &s.card else { bail!("{}: the served card's status is not known", store.display()) };
    if let Some(b) = export_bytes.filter(|&b| b != card.capacity_bytes && s.volumes.len() == 1) {
        bail!("{}: its card holds {} bytes, the NBD target {b}: not the card behind the target", store.display(), card.capacity_bytes);
    }
    let c = Control::Format { format: card.format.clone(), secure_erase: true, force: true };
    let started = std::time::Instant::now();
    loop {
        match channel::request(store, &c.request()) {
            Ok(_) => return Ok(format!("secure erase of the served card (format {}) over its control socket", card.format)),
            Err(e) if e.to_string().contains("connected") && started.elapsed().as_millis() < ERASE_WAIT_MS as u128 => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(e) => return Err(e),
        }
    }
}
