//! `flashlab serve`: a data-holding card over NBD, on a Unix socket or TCP.

use anyhow::{bail, Context, Result};
use emu::Server;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct ServeArgs {
    /// A catalog device id (see `flashlab devices`) or a profile file (.toml).
    pub device: String,
    /// Format: a named one (default: the device's default) or a capacity.
    #[arg(long)]
    pub format: Option<String>,
    /// The host whose I/O stack the card's timing follows (see `run
    /// --help`): linux (the default), windows or a host file. Not kept in
    /// the store: a card served again is on the host it is told.
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// Shrink the card N times (see `run --help`); 1 is full size.
    #[arg(long, default_value_t = 1)]
    pub scale: u32,
    /// Directory of the card's store (one sparse file per member, holding
    /// every page, its out-of-band area and the blocks' erase counts). A new
    /// store is formatted; a store an earlier run left (stopped cleanly or
    /// not) is mounted: the map rebuilt from the media.
    #[arg(long)]
    pub store: PathBuf,
    /// Serve on this Unix socket.
    #[arg(long, conflicts_with = "listen")]
    pub unix: Option<PathBuf>,
    /// Serve on this TCP address, e.g. 127.0.0.1:10809. An address other
    /// machines reach needs TLS with client certificates (--tls-cert,
    /// --tls-key, --tls-client-ca) or --insecure-listen: NBD carries no
    /// encryption or authentication of its own.
    #[arg(long)]
    pub listen: Option<String>,
    /// Serve on a --listen address beyond this machine (not loopback)
    /// without TLS, or with TLS but no client certificates: anyone who
    /// reaches it can read and overwrite the card. For a network you trust.
    #[arg(long, requires = "listen")]
    pub insecure_listen: bool,
    /// Require TLS of every client (NBD's STARTTLS, as qemu-nbd
    /// --tls-creds and nbdkit --tls=require do): the server's certificate
    /// chain, PEM. Clients connect with nbds:// URIs.
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert, PEM (PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Admit only TLS clients whose certificate one of these authorities
    /// signed (PEM); others fail the TLS handshake.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_client_ca: Option<PathBuf>,
    /// Who may reach the card's store, sockets and logs: `owner` (files
    /// 0600, directories and sockets 0700, whatever the umask) or `group`
    /// (the owner's group too: 0660, 0770).
    #[arg(long, default_value = "owner", value_parser = ["owner", "group"])]
    pub access: String,
    /// Clients connected at once (handshakes included); more are refused,
    /// and the refusal logged.
    #[arg(long, default_value_t = emu::listen::Limits::CONNECTIONS_DEFAULT as u32, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub max_connections: u32,
    /// How long a client may take over its handshake before it is cut
    /// off (a connection it holds meanwhile counts against
    /// --max-connections).
    #[arg(long, value_name = "SECS", default_value_t = emu::listen::Limits::HANDSHAKE_DEFAULT.as_secs_f64())]
    pub handshake_timeout: f64,
    /// Close a connection after SECS without a request, or with a reply
    /// its client does not take (default: never).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub idle_timeout: Option<u64>,
    /// The export's name (default: the device id); a split card's volumes
    /// are NAME-1 and NAME-2.
    #[arg(long)]
    pub name: Option<String>,
    /// Serve the card as one volume, or split into two: two exports of
    /// half the capacity each, sharing the card's flash, spare and garbage
    /// collection (the FlashMAX II's "one LUN or two volumes"). The store
    /// keeps its split; default: the store's (one, for a new store).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=card::VOLUMES_MAX as i64))]
    pub volumes: Option<u32>,
    /// `model`: no reply leaves before the card's modelled completion;
    /// `none`: replies leave as soon as the request has run.
    #[arg(long, default_value = "model", value_parser = ["model", "none"])]
    pub timing: String,
    /// With --timing model: run the card's clock K times slower, where this
    /// machine cannot carry the modelled rate (latencies clients measure
    /// are then K times the modelled ones).
    #[arg(long, default_value_t = 1.0)]
    pub time_scale: f64,
    /// Serve the card with its write buffer protected against power loss
    /// (`on`: every acknowledged write survives a cut) or not (`off`: only
    /// writes a FLUSH or FUA covered, as a card whose capacitors failed;
    /// useful to test that an application flushes). Default: the profile's.
    #[arg(long, value_parser = ["on", "off"])]
    pub power_loss_protection: Option<String>,
    /// Serve an old card: every block has seen C program/erase cycles
    /// before its own erases, so reads meet the bit-error model's retries,
    /// read reclaim and, beyond ECC and parity, I/O errors. Kept in the
    /// store; default: the store's (new, for a new store).
    #[arg(long)]
    pub pe_cycles: Option<u32>,
    /// Serve the card with its data D days old (retention errors; data
    /// written while served is fresh). Kept in the store with
    /// --pe-cycles.
    #[arg(long)]
    pub age_days: Option<f64>,
    /// Keep a log of every write (with its data), trim, write-zeroes and
    /// flush the card ran, in order, in this file: replayed up to any
    /// flush onto a fresh image, it gives what the card must hold after a
    /// cut there (format in docs/guide/usage.md).
    #[arg(long)]
    pub write_log: Option<PathBuf>,
    /// Record every request the card runs (its arrival on the card's
    /// clock, operation, offset, length, flags, modelled latency, error)
    /// in this file, for `flashlab replay` on any card (format in
    /// docs/guide/usage.md).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct ControlArgs {
    /// The card's store directory.
    #[arg(long)]
    pub store: PathBuf,
    /// The command and its arguments: `status`, `stats`, `fail-die 3.1`,
    /// `fail-die 3.*`, `fail-die 0.0 1.0` (two dies at once), `beacon
    /// on|off`, `format hp force`, `volumes 2 force`.
    #[arg(num_args = 0..)]
    pub command: Vec<String>,
    /// Send COMMAND as it is: a request line of the control protocol
    /// (docs/guide/control.md), e.g. '{"v": 1, "cmd": "status"}'.
    #[arg(long)]
    pub raw: bool,
    /// The card's answer as JSON (for scripts): to FILE, or to standard
    /// output with `-` or no FILE; without it, a line a field, for people.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<PathBuf>,
}

impl ControlArgs {
    /// `--json` takes an optional FILE, so `control --json status` reads
    /// the command's first word as the file: a word of the protocol
    /// (`emu::Control::WORDS`), a request (`{...}`, the old `--json
    /// REQUEST` form, warned) or any word where no command follows is
    /// the command's, and the JSON goes to standard output.
    fn command_from_json(&mut self) {
        let Some(w) = self.json.as_ref().and_then(|p| p.to_str()).filter(|w| *w != "-").map(str::to_string) else {
            return;
        };
        let request = w.trim_start().starts_with('{');
        if self.command.is_empty() || request || emu::Control::WORDS.contains(&w.as_str()) {
            if request && !self.raw && self.command.is_empty() {
                eprintln!("flashlab: warning: `control --json REQUEST` is the old form of `control --raw REQUEST --json` (--raw: the request as it is; --json: the answer as JSON); the old form goes in a later release");
                self.raw = true;
            }
            self.command.insert(0, w);
            self.json = Some(PathBuf::from("-"));
        }
    }
}

pub fn control(mut a: ControlArgs) -> Result<()> {
    a.command_from_json();
    if a.command.is_empty() {
        bail!("say what to tell the card: {}", emu::Control::WORDS.join(", "));
    }
    let json = a.json.as_deref().map(crate::out::JsonSink::open).transpose()?;
    let request = if a.raw { a.command.join(" ") } else { emu::Control::request_of_words(&a.command).map_err(anyhow::Error::msg)? };
    let v = if emu::channel::is_served(&a.store) {
        emu::channel::request(&a.store, &request)?
    } else {
        let c = emu::Control::parse(&request).map_err(anyhow::Error::msg)?;
        emu::manage::tell(&a.store, &c)?
    };
    if let Some(json) = json {
        json.write(&v, false)?;
    } else {
        for line in fields(&v) {
            outln!("{line}");
        }
    }
    Ok(())
}

/// A reply for people: a line a field, nested names joined by dots, lists
/// of plain values on one line, the names aligned.
fn fields(v: &serde_json::Value) -> Vec<String> {
    fn walk(v: &serde_json::Value, at: &str, out: &mut Vec<(String, String)>) {
        use serde_json::Value;
        let plain = |x: &Value| match x {
            Value::String(s) => s.clone(),
            Value::Null => "-".into(),
            x => x.to_string(),
        };
        match v {
            Value::Object(m) if !m.is_empty() => {
                for (k, x) in m {
                    walk(x, &if at.is_empty() { k.clone() } else { format!("{at}.{k}") }, out);
                }
            }
            Value::Array(a) if a.iter().any(|x| x.is_object() || x.is_array()) => {
                for (i, x) in a.iter().enumerate() {
                    walk(x, &format!("{at}[{i}]"), out);
                }
            }
            Value::Array(a) => out.push((at.to_string(), if a.is_empty() { "none".into() } else { a.iter().map(plain).collect::<Vec<_>>().join(", ") })),
            x => out.push((at.to_string(), plain(x))),
        }
    }
    let mut pairs = Vec::new();
    walk(v, "", &mut pairs);
    let width = pairs.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    pairs.into_iter().map(|(k, x)| format!("{k:<width$}  {x}")).collect()
}

pub fn serve(a: ServeArgs) -> Result<()> {
    // SIGTERM and SIGINT stop the card cleanly: blocked before the socket
    // is bound (a client may signal as soon as it answers) and before any
    // thread starts (threads inherit the mask), awaited by one thread.
    let terminate = terminate_signals();
    emu::access::Access::parse(&a.access).map_err(anyhow::Error::msg)?.apply();
    let profile = profile_checked(&a)?;
    let store = card::CardStore::at(&a.store);
    let ask = card::ServeAsk { format: a.format.clone(), volumes: a.volumes, name: a.name.clone(), pe_cycles: a.pe_cycles, age_days: a.age_days };
    let plan = store.serve_plan(&profile, a.scale, &ask)?;
    let format = plan.format.clone();
    card::Device::validate(&profile, &format, a.scale)?;
    // The address first, then the store's lock: a port in use, a socket
    // another server answers on, or a store another process owns is
    // refused before anything in the store changes.
    let tls = tls_of(&a)?;
    let mut listener = emu::listen::Listener::bind(&address(&a)?)?;
    if let Some(config) = tls {
        listener.require_tls(config);
    }
    std::fs::create_dir_all(&a.store).with_context(|| format!("--store {}", a.store.display()))?;
    let card = card::CardFile::new(&profile.id, &format, a.scale);
    let backing = card::Backing::files(&a.store, &card.owner(), &format!("flashlab serve on {}", listener.describe()))?;
    if a.scale == 1 {
        crate::out::full_size_note(card::Device::map_bytes(&profile, &format, 1)?, 1);
    }
    let started = std::time::Instant::now();
    let mut device = card::Device::with_backing(&profile, &format, a.scale, &backing)?;
    drop(backing);
    let age = plan.age;
    age.check().map_err(anyhow::Error::msg)?;
    device.age_set(age);
    if !age.is_new() {
        eprintln!("flashlab serve: an old card: {} program/erase cycles, its data {} days old [simulated bit errors]", age.pe_cycles, age.age_days);
    }
    for w in age.warnings(&profile) {
        eprintln!("flashlab serve: warning: {w}");
    }
    let name = plan.name.clone();
    let volumes = store.served(&plan, device.capacity_bytes())?;
    match &device.mounted {
        Some(r) => mount_log(&a.store, r, device.mount_modelled_ns(), started.elapsed().as_secs_f64()),
        None => eprintln!("flashlab serve: formatted a new store in {}", a.store.display()),
    }
    eprintln!(
        "flashlab serve: power-loss protection {}",
        if device.power_loss_protection() { "on: every acknowledged write survives a cut" } else { "off: only writes covered by a FLUSH or FUA survive a cut" }
    );
    let timing = timing_of(&a);
    let log = match &a.write_log {
        Some(p) => Some(emu::writelog::WriteLog::create(p).with_context(|| format!("--write-log {}", p.display()))?),
        None => None,
    };
    let trace = match &a.trace {
        Some(p) => Some(emu::trace::TraceLog::create(p, &profile.id, &format, a.scale).with_context(|| format!("--trace {}", p.display()))?),
        None => None,
    };
    let (server, _device_thread) = Server::start(device, &name, &volumes, timing, log);
    if let Some(t) = trace {
        server.trace_to(t);
    }
    listen(&a, Arc::new(server), listener, terminate, timing)
}

/// The profile `a` names, with its options applied and checked.
fn profile_checked(a: &ServeArgs) -> Result<card::Profile> {
    let mut profile = crate::run::on_host(card::profile_load(&a.device).map_err(anyhow::Error::msg)?, a.host.as_deref())?;
    if let Some(plp) = &a.power_loss_protection {
        profile.ftl.power_loss_protection = plp == "on";
    }
    if !(a.time_scale.is_finite() && (1.0..=1e6).contains(&a.time_scale)) {
        bail!("--time-scale {}: must be in 1..=1000000", a.time_scale);
    }
    if !(a.handshake_timeout.is_finite() && (0.1..=3600.0).contains(&a.handshake_timeout)) {
        bail!("--handshake-timeout {}: must be in 0.1..=3600 seconds", a.handshake_timeout);
    }
    Ok(profile)
}

/// Serves the started card: its control socket, a clean stop on
/// SIGTERM or SIGINT (`terminate`), then the clients on `listener`
/// within the limits `a` sets, until the card stops.
fn listen(
    a: &ServeArgs,
    server: Arc<Server>,
    listener: emu::listen::Listener,
    terminate: impl FnOnce() -> i32 + Send + 'static,
    timing: emu::Timing,
) -> Result<()> {
    let refusals = Arc::new(emu::service::RefusalLog::default());
    let control = emu::channel::serve(Arc::clone(&server), &a.store, &refusals)?;
    eprintln!("flashlab serve: control socket {} (flashlab status {})", control.display(), a.store.display());
    stop_on_signal(Arc::clone(&server), terminate, [Some(control), listener.socket_path()], timing);
    let limits = emu::listen::Limits {
        connections: a.max_connections as usize,
        handshake: std::time::Duration::from_secs_f64(a.handshake_timeout),
        idle: a.idle_timeout.map(std::time::Duration::from_secs),
    };
    listener.serve(&server, limits, &refusals, |exports| exports.iter().for_each(|e| eprintln!("flashlab serve: {e}")))
}

/// Where to serve, as asked: beyond this machine only with TLS that
/// authenticates clients, or where the user says the network is trusted.
fn address(a: &ServeArgs) -> Result<emu::listen::Address> {
    match (&a.unix, &a.listen) {
        (Some(path), _) => Ok(emu::listen::Address::Unix(path.clone())),
        (None, Some(addr)) => {
            let at = emu::listen::resolve(addr)?;
            let missing = match (&a.tls_cert, &a.tls_client_ca) {
                _ if at.ip().is_loopback() => None,
                (None, _) => Some("NBD is neither encrypted nor authenticated without TLS: add --tls-cert, --tls-key and --tls-client-ca"),
                (Some(_), None) => Some("TLS without client certificates lets any client in: add --tls-client-ca"),
                (Some(_), Some(_)) => None,
            };
            match missing {
                Some(why) if !a.insecure_listen => {
                    bail!("--listen {addr}: {} is reachable from other machines, and {why}; or serve on 127.0.0.1 or a Unix socket, or pass --insecure-listen on a network you trust", at.ip())
                }
                Some(_) => eprintln!("flashlab serve: warning: --insecure-listen: anyone who reaches {at} can read and overwrite the card"),
                None => {}
            }
            Ok(emu::listen::Address::Tcp(addr.clone()))
        }
        (None, None) => bail!("say where to serve: --unix PATH or --listen ADDR:PORT"),
    }
}

/// The TLS every client must start, where --tls-cert asks for it.
fn tls_of(a: &ServeArgs) -> Result<Option<emu::tls::Config>> {
    let (Some(cert), Some(key)) = (&a.tls_cert, &a.tls_key) else { return Ok(None) };
    let creds = emu::tls::Credentials { cert: cert.clone(), key: key.clone(), client_ca: a.tls_client_ca.clone() };
    Ok(Some(creds.config()?))
}

/// When replies leave, as asked, said on standard error.
fn timing_of(a: &ServeArgs) -> emu::Timing {
    let timing = if a.timing == "none" { emu::Timing::None } else { emu::Timing::Model { time_scale: a.time_scale } };
    match timing {
        emu::Timing::Model { time_scale } if time_scale != 1.0 => eprintln!(
            "flashlab serve: --time-scale {time_scale}: the card's clock runs {time_scale} times slower than wall time; clients see {time_scale} times its latencies and 1/{time_scale} of its rate (multiply back)"
        ),
        emu::Timing::Model { .. } => eprintln!(
            "flashlab serve: --timing model: no reply leaves before the card's modelled completion{}",
            a.host.as_deref().map_or(String::new(), |h| format!(" (the card on host {})", card::host_id(Some(h))))
        ),
        emu::Timing::None => eprintln!("flashlab serve: --timing none: replies leave as soon as the request has run"),
    }
    timing
}

/// A thread that waits for SIGTERM or SIGINT, stops the card cleanly,
/// removes its sockets and ends the process (status 0, or 1 when the
/// clean stop failed).
fn stop_on_signal(server: Arc<Server>, terminate: impl FnOnce() -> i32 + Send + 'static, sockets: [Option<PathBuf>; 2], timing: emu::Timing) {
    std::thread::spawn(move || {
        let sig = terminate();
        let stopped = server.shutdown();
        // The sockets go with the server; the store's lock goes when the
        // process ends.
        for p in sockets.iter().flatten() {
            let _ = std::fs::remove_file(p);
        }
        match stopped {
            Ok(served) => {
                eprintln!("flashlab serve: signal {sig}: stopped cleanly (every write on the media, checkpoint written: the next start mounts without a scan)");
                eprintln!("flashlab serve: served {}{}", served.summary(), scaled_note(timing));
                if server.lateness.counts().iter().sum::<u64>() > 0 {
                    eprintln!("flashlab serve: paced replies over the whole run: {}", server.lateness.summary());
                }
                std::process::exit(0);
            }
            Err(e) => {
                eprintln!("flashlab serve: signal {sig}: clean stop failed: {e} (the next start scans the media)");
                std::process::exit(1);
            }
        }
    });
}

/// What a time scale means for the figures a client measures.
fn scaled_note(timing: emu::Timing) -> String {
    match timing {
        emu::Timing::Model { time_scale } if time_scale != 1.0 => {
            format!(" [simulated; the card's clock ran {time_scale} times slower than wall time: clients measured {time_scale} times these latencies and 1/{time_scale} of this rate]")
        }
        emu::Timing::Model { .. } => " [simulated]".into(),
        emu::Timing::None => " [--timing none: the card's clock is wall time and replies did not wait for it]".into(),
    }
}

/// Blocks SIGTERM and SIGINT in this thread (and the threads it starts
/// after) and returns a wait for either: the signal's number.
fn terminate_signals() -> impl FnOnce() -> i32 + Send {
    // SAFETY: plain libc signal-set calls on a set owned here.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    };
    move || {
        let mut sig = 0;
        // SAFETY: waits on the set blocked above.
        unsafe { libc::sigwait(&set, &mut sig) };
        sig
    }
}

fn mount_log(store: &std::path::Path, r: &card::MountReport, modelled_ns: u64, wall_s: f64) {
    if let Some(why) = &r.checkpoint_refused {
        eprintln!("flashlab serve: checkpoint set aside ({why}): the media were scanned");
    }
    if r.from_checkpoint {
        eprintln!(
            "flashlab serve: mounted {} from its clean shutdown's checkpoint: {} slots mapped, no scan; {:.3} s wall",
            store.display(),
            r.slots_mapped,
            wall_s
        );
        return;
    }
    eprintln!(
        "flashlab serve: mounted {}: {} slots mapped from {} scanned in {} die block(s) written since their erase, {} page(s) of the protected buffer programmed at power-on, {} superblock(s) closed short; scan {:.3} s modelled [simulated], {:.3} s wall",
        store.display(),
        r.slots_mapped,
        r.slots_scanned,
        r.blocks_scanned,
        r.pages_completed,
        r.superblocks_short,
        modelled_ns as f64 / 1e9,
        wall_s
    );
    if r.slots_rebuilt > 0 {
        eprintln!("flashlab serve: {} slot(s) damaged by the cut rebuilt from parity", r.slots_rebuilt);
    }
    if !r.lbas_lost.is_empty() {
        let shown: Vec<String> = r.lbas_lost.iter().take(16).map(|l| format!("{}", *l as u64 * units::SLOT_BYTES)).collect();
        eprintln!(
            "flashlab serve: {} slot(s) of 4 KiB damaged by the cut and beyond parity: they read older data or zeros (byte offsets {}{})",
            r.lbas_lost.len(),
            shown.join(", "),
            if r.lbas_lost.len() > 16 { ", ..." } else { "" }
        );
    }
}
