//! The NBD server: the card sits behind one lock, and each connection's
//! thread runs its requests on it in the order they were read, then writes
//! the replies itself (no thread hop on the data path); paced replies go
//! to the connection's writer thread, which holds each until its modelled
//! completion. A ticker thread rolls the live seconds on and drives a
//! rebuild while no request comes. Several connections may serve one
//! export; a bad client ends only its own connection.

use crate::control::{Control, ControlError};
use crate::live::Live;
use crate::nbd::{self, Export, Negotiated, ProtoError, Request};
use crate::pace::{Clock, Lateness, Timing};
use crate::presentation::{card_description, Presentation};
use crate::replies::{Replies, Reply};
use crate::request::{execute, log_record, volume_offset};
use crate::service::Limits;
use crate::service::Socket;
use crate::status::{CardStatus, Known};
use crate::tls::{Link, TlsStream};
use crate::writelog::WriteLog;
use card::{Device, DeviceError, Volume, Volumes};
use serde_json::{json, Value};
use std::io::{BufReader, ErrorKind, Read};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The answer to a control command (holding the card's lock): its result.
/// A format or a re-split answers with the card's capacity and
/// description after it; the beacon is the server's (`beacon`: its state).
fn control_run(device: &mut card::Device, now: u64, c: &Control, live: &Live, beacon: bool) -> Result<Value, ControlError> {
    match c {
        Control::FailDie(ts) => {
            let events = ts.iter().map(|t| device.fail_now(now, t)).collect::<Result<Vec<_>, _>>()?;
            Ok(json!({ "failed": events }))
        }
        Control::Status => unreachable!("a status is asked for by Server::status"),
        Control::Stats => Ok(json!({
            "card_ns": now,
            "second": live.last(),
            "totals": live.totals,
            "counters": device.counters(),
            "beacon": beacon,
            "read_only": device.read_only(),
            "rebuilding": device.rebuilding(),
        })),
        Control::Format { format, secure_erase, .. } => {
            device.reformat(format, *secure_erase)?;
            Ok(json!({ "format": format, "secure_erase": secure_erase, "capacity_bytes": device.capacity_bytes(), "card": card_description(device) }))
        }
        Control::Volumes { .. } => {
            device.trim_at(now, 0, device.capacity_bytes())?;
            Ok(json!({ "capacity_bytes": device.capacity_bytes(), "card": card_description(device) }))
        }
        Control::Beacon(_) => unreachable!("the beacon is the server's, not the card's"),
    }
}

/// What the card served counts, for the log at the end and for tests;
/// times on the card's clock.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Served {
    pub requests: u64,
    pub errors: u64,
    /// The card's time at the first and the last request.
    pub first_ns: u64,
    pub last_ns: u64,
    /// Modelled latencies (completion less arrival) of the requests that
    /// succeeded, summed.
    pub latency_ns_sum: u64,
}

impl Served {
    /// "N requests in S s of the card's clock: X per second, modelled
    /// latency Y us on average".
    pub fn summary(&self) -> String {
        let ok = self.requests - self.errors;
        let span = self.last_ns.saturating_sub(self.first_ns);
        if ok == 0 || span == 0 {
            return format!("{} requests ({} refused)", self.requests, self.errors);
        }
        format!(
            "{} requests ({} refused) in {:.3} s of the card's clock: {:.0} per second, modelled latency {:.1} us on average",
            self.requests,
            self.errors,
            span as f64 / 1e9,
            self.requests as f64 / (span as f64 / 1e9),
            self.latency_ns_sum as f64 / ok as f64 / 1e3
        )
    }
}

/// A served card: its exports (one per volume) and the card behind its
/// lock.
pub struct Server {
    name: String,
    presentation: Mutex<Presentation>,
    card: Arc<Mutex<Card>>,
    /// Whether replies are paced (held until their modelled completion).
    paced: bool,
    /// The card's members (to name a die of a card of several).
    members: usize,
    /// How late paced replies left, over every connection.
    pub lateness: Arc<Lateness>,
    /// Connections that chose an export and have not left; one joins only
    /// while holding the presentation's lock.
    clients: Arc<AtomicUsize>,
    /// The identify beacon.
    beacon: Arc<AtomicBool>,
    /// The store's directory, where a split and the beacon are kept.
    store: Option<std::path::PathBuf>,
    /// The card's profile and scale, to check a format before it runs.
    profile: card::Profile,
    scale: u32,
}

impl Server {
    /// Serves `device`, which must hold data, and starts the ticker (its
    /// handle: what the card served, once it is stopped or the server
    /// dropped). One export per
    /// volume: `name` for a card served whole, `name-1` and `name-2` for a
    /// split card. `log`: where to keep the log of writes and flushes, if
    /// anywhere. The beacon starts as the store's `card.toml` left it.
    pub fn start(device: Device, name: &str, volumes: &Volumes, timing: Timing, log: Option<WriteLog>) -> (Server, std::thread::JoinHandle<Served>) {
        assert!(device.holds_data(), "a served card keeps the bytes written to it");
        assert_eq!(volumes.check(device.capacity_bytes()), Ok(()), "volumes tile the card");
        let presentation = Presentation::new(name, &card_description(&device), volumes);
        let store = device.store_dir().map(std::path::Path::to_path_buf);
        let lit = store.as_deref().and_then(|d| card::CardStore::at(d).card().ok().flatten()).is_some_and(|c| c.beacon);
        let beacon = Arc::new(AtomicBool::new(lit));
        let clock = Clock::new(timing);
        let members = device.profile.members as usize;
        let (profile, scale) = (device.profile.clone(), device.scale);
        let card = Arc::new(Mutex::new(Card::new(device, clock, log)));
        let ticked = Arc::downgrade(&card);
        let handle = std::thread::Builder::new().name("ticker".into()).spawn(move || ticker(&ticked)).expect("a thread");
        (
            Server {
                name: name.to_string(),
                presentation: Mutex::new(presentation),
                card,
                paced: timing != Timing::None,
                members,
                lateness: Arc::new(Lateness::default()),
                clients: Arc::new(AtomicUsize::new(0)),
                beacon,
                store,
                profile,
                scale,
            },
            handle,
        )
    }

    /// The exports, one per volume, in the card's order.
    pub fn exports(&self) -> Vec<Export> {
        self.presentation.lock().expect("the presentation lock").exports.clone()
    }

    /// The card's members.
    pub fn members(&self) -> usize {
        self.members
    }

    /// The card, locked; `None` once it has stopped.
    fn card(&self) -> Option<std::sync::MutexGuard<'_, Card>> {
        let c = self.card.lock().expect("the card's lock");
        (!c.stopped).then_some(c)
    }

    /// The card's counters now (after every request taken before).
    pub fn counters(&self) -> Option<card::DeviceCounters> {
        Some(self.card()?.device.counters())
    }

    /// Connections serving an export now.
    pub fn clients(&self) -> usize {
        self.clients.load(Ordering::SeqCst)
    }

    /// Runs a control command on the card (after the requests already
    /// taken); its result. A status also names the exports
    /// (volumes); a status and the live statistics, the clients
    /// connected. A format or a re-split goes through `reshape`.
    pub fn control(&self, c: Control) -> Result<Value, ControlError> {
        match &c {
            Control::Beacon(on) => return self.beacon_set(*on),
            Control::Format { .. } | Control::Volumes { .. } => return self.reshape(&c),
            Control::Status => return Ok(serde_json::to_value(self.status()?).expect("a status serialises")),
            _ => {}
        }
        let mut v = self.device_control(&c)?;
        if let (Value::Object(o), Control::Stats) = (&mut v, &c) {
            o.insert("clients".into(), json!(self.clients()));
        }
        Ok(v)
    }

    /// The card's status (after the requests already taken), its volumes
    /// and the clients connected.
    pub fn status(&self) -> Result<CardStatus, ControlError> {
        let s = {
            let mut c = self.card().ok_or(ControlError::Stopped)?;
            let now = c.tick();
            c.device.status(now, Some(c.live.busy()), self.beacon.load(Ordering::SeqCst))
        };
        let volumes = self.presentation.lock().expect("the presentation lock").names();
        Ok(CardStatus { served: true, clients: self.clients(), volumes, card: Known::Mounted(Box::new(s)) })
    }

    /// A format or a re-split: runs only when told `force` and with no
    /// client connected (`control::destroy_check`), holding the
    /// presentation so that none joins meanwhile; the card is presented
    /// anew as `count` volumes (a format keeps the count) and the split is
    /// kept in the store. Its result names the new exports.
    fn reshape(&self, c: &Control) -> Result<Value, ControlError> {
        let mut p = self.presentation.lock().expect("the presentation lock");
        if let Control::Volumes { count, .. } = c {
            // A re-split to what the card already is would only wipe it.
            if *count as usize == p.volumes.len() {
                return Err(ControlError::AlreadySo(*count));
            }
        }
        crate::control::destroy_check(c, &self.profile, self.scale, self.clients())?;
        let count = match c {
            Control::Volumes { count, .. } => *count,
            _ => p.volumes.len() as u32,
        };
        // A split the card cannot take is refused before its data is lost.
        Volumes::split(p.volumes.iter().map(|v| v.bytes).sum(), count)?;
        let mut v = self.device_control(c)?;
        let volumes = Volumes::split(v["capacity_bytes"].as_u64().expect("a capacity"), count)?;
        if let Some(dir) = &self.store {
            card::CardStore::at(dir).volumes_keep(&volumes)?;
        }
        *p = Presentation::new(&self.name, v["card"].as_str().expect("a description"), &volumes);
        v["volumes"] = serde_json::to_value(p.names()).expect("volumes serialise");
        Ok(v)
    }

    fn device_control(&self, c: &Control) -> Result<Value, ControlError> {
        let mut card = self.card().ok_or(ControlError::Stopped)?;
        let now = card.tick();
        let Card { device, live, .. } = &mut *card;
        control_run(device, now, c, live, self.beacon.load(Ordering::SeqCst))
    }

    /// Lights or darkens the beacon, kept in the store's `card.toml`.
    fn beacon_set(&self, on: bool) -> Result<Value, ControlError> {
        if let Some(dir) = &self.store {
            card::CardStore::at(dir).beacon_keep(on)?;
        }
        self.beacon.store(on, Ordering::SeqCst);
        Ok(json!({ "beacon": on }))
    }

    /// Stops the card cleanly after the requests already taken: every
    /// write on the media and a checkpoint beside the store, so that the
    /// next start mounts without a scan. No request runs after it (each
    /// connection ends at its next); what the card served is returned.
    pub fn shutdown(&self) -> Result<Served, DeviceError> {
        let mut c = self.card().ok_or(DeviceError::Stopped)?;
        c.stopped = true;
        if let Some(l) = &mut c.log {
            let _ = l.flush();
        }
        if let Some(t) = &mut c.trace {
            if let Err(e) = t.flush() {
                eprintln!("flashlab serve: the trace could not be written whole ({e})");
            }
        }
        c.device.shutdown_clean().map(|()| c.served.clone())
    }

    /// Records every request the card runs from now on in `trace`.
    pub fn trace_to(&self, trace: crate::trace::TraceLog) {
        if let Some(mut c) = self.card() {
            c.trace = Some(trace);
        }
    }

    /// Serves one connection until the client leaves, breaks the
    /// protocol, or lets a time limit of `limits` pass: its handshake's,
    /// then the idle one (none where `None`) for each request to come and
    /// each reply to be taken. Where `tls` is given, the client must start
    /// TLS before anything else (NBD's STARTTLS). Returns how it ended.
    pub fn connection<S: Socket>(&self, stream: S, limits: Limits, tls: Option<&crate::tls::Config>) -> Ended {
        match self.handshake(stream, limits, tls) {
            Ok(Some((stream, volume, _client))) => Ended::Served(self.transmission(stream, volume, limits.idle)),
            Ok(None) => Ended::Handshake(Ok(())),
            // A client that closes during the handshake (a probe of the
            // socket, a listing) left; nothing went wrong.
            Err(ProtoError::Io(e)) if matches!(e.kind(), ErrorKind::UnexpectedEof | ErrorKind::BrokenPipe | ErrorKind::ConnectionReset) => {
                Ended::Handshake(Ok(()))
            }
            Err(e) => Ended::Handshake(Err(e)),
        }
    }

    /// The handshake, within its time limit: the connection's stream
    /// (over TLS where the client started it), the volume of the export
    /// the client chose and the client counted in, or `None` when the
    /// client left without choosing one.
    fn handshake<S: Socket>(&self, stream: S, limits: Limits, tls: Option<&crate::tls::Config>) -> Result<Option<(Link<S>, Volume, Client)>, ProtoError> {
        let mut stream = stream;
        stream.time_limit(Some(limits.handshake))?;
        let exports = self.exports();
        let late = || format!("the handshake took longer than {:.1} s (--handshake-timeout)", limits.handshake.as_secs_f64());
        let offer = if tls.is_some() { nbd::Tls::Required } else { nbd::Tls::Off };
        let (first, no_zeroes) = nbd::negotiate(&mut stream, &exports, offer).map_err(|e| e.late(late))?;
        let (chosen, link) = match (first, tls) {
            (Negotiated::StartTls, Some(config)) => {
                let mut t = TlsStream::accept(stream, config).map_err(|e| ProtoError::from(e).late(late))?;
                let chosen = nbd::options(&mut t, &exports, no_zeroes, nbd::Tls::Started).map_err(|e| e.late(late))?;
                (chosen, Link::Tls(t))
            }
            (chosen, _) => (chosen, Link::Plain(stream)),
        };
        let i = match chosen {
            Negotiated::Abort => return Ok(None),
            Negotiated::Export(i) => i,
            Negotiated::StartTls => return Err(ProtoError::Violation("STARTTLS where TLS is not offered or already started".into())),
        };
        // The card may have been formatted or re-split during the
        // handshake: the client joins only the card it was told of.
        let p = self.presentation.lock().expect("the presentation lock");
        if p.exports.get(i) != Some(&exports[i]) {
            return Err(ProtoError::Violation(format!(
                "export '{}' changed during the handshake (the card was formatted or re-split): connect again",
                exports[i].name
            )));
        }
        Ok(Some((link, p.volumes[i], Client::join(&self.clients))))
    }

    /// The transmission phase: requests run on `volume` until the client
    /// leaves, breaks the protocol or lets `idle` pass; a TLS session is
    /// then ended after the last reply.
    fn transmission<S: Socket>(&self, stream: Link<S>, volume: Volume, idle: Option<Duration>) -> Result<(), ProtoError> {
        stream.time_limit(idle)?;
        let writer = stream.duplicate()?;
        let mut closer = stream.duplicate()?;
        let mut reader = BufReader::with_capacity(256 * 1024, stream);
        let mut replies = Replies::new(writer, self.paced, &self.lateness)?;
        let mut batch = Vec::with_capacity(BATCH_MAX);
        let result = loop {
            // Replies waiting go out before the thread waits for the client.
            if reader.buffer().is_empty() && replies.flush().is_err() {
                break Ok(());
            }
            let end = requests_read(&mut reader, &mut batch);
            // The requests read run under one taking of the card's lock; a
            // card stopped cleanly takes no more.
            let Some(mut card) = self.card() else { break Ok(()) };
            let done: Vec<Reply> = batch.drain(..).map(|(req, arrived)| card.request(&req, volume, arrived)).collect();
            drop(card);
            if done.into_iter().try_for_each(|r| replies.send(r)).is_err() {
                break Ok(());
            }
            if let Some(end) = end {
                break end;
            }
        };
        // Replies to requests already taken still go out.
        replies.close();
        closer.close();
        result.map_err(|e| e.late(|| format!("no request came, or a reply was not taken, for {} s (--idle-timeout)", idle.map_or(0, |d| d.as_secs()))))
    }
}

/// How a connection ended: before its client chose an export (a
/// handshake given up, cut off or broken), or after, each with why.
#[derive(Debug)]
pub enum Ended {
    Handshake(Result<(), ProtoError>),
    Served(Result<(), ProtoError>),
}

/// The most requests a connection runs under one taking of the card's lock.
const BATCH_MAX: usize = 32;

/// The most bytes (WRITE payloads and READ replies) a batch holds, past
/// its first request.
const BATCH_BYTES_MAX: usize = 4 * 1024 * 1024;

/// The bytes a request holds in a batch: its payload, or its reply's data.
fn request_bytes(r: &Request) -> usize {
    match r.kind {
        nbd::CMD_READ => r.length as usize,
        _ => r.data.len(),
    }
}

/// Reads a request (waiting for it), then those already buffered whole,
/// up to `BATCH_MAX` of them or `BATCH_BYTES_MAX`, each with when it was
/// read, into `batch`; how the connection ends, if it does (the client
/// left, said so, or broke the protocol) after the requests read.
fn requests_read(reader: &mut BufReader<impl Read>, batch: &mut Vec<(Request, Instant)>) -> Option<Result<(), ProtoError>> {
    let mut bytes = 0;
    loop {
        match nbd::request_read(reader) {
            Ok(None) => return Some(Ok(())),
            Ok(Some(req)) if req.kind == nbd::CMD_DISC => return Some(Ok(())),
            Ok(Some(req)) => {
                bytes += request_bytes(&req);
                batch.push((req, Instant::now()));
            }
            Err(e) => return Some(Err(e)),
        }
        if batch.len() == BATCH_MAX || bytes >= BATCH_BYTES_MAX || !nbd::request_whole(reader.buffer()) {
            return None;
        }
    }
}

/// A connection counted among the clients while it lives.
struct Client(Arc<AtomicUsize>);

impl Client {
    fn join(clients: &Arc<AtomicUsize>) -> Client {
        clients.fetch_add(1, Ordering::SeqCst);
        Client(Arc::clone(clients))
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The ticker: the live seconds end, and a rebuild goes on, while no
/// request comes. It ends when the card stops or the server is gone;
/// what the card served.
fn ticker(card: &std::sync::Weak<Mutex<Card>>) -> Served {
    let mut served = Served::default();
    loop {
        let wait = match card.upgrade() {
            None => return served,
            Some(c) => {
                let mut c = c.lock().expect("the card's lock");
                served = c.served.clone();
                if c.stopped {
                    return served;
                }
                c.idle_tick()
            }
        };
        std::thread::sleep(wait);
    }
}

/// The card being served, its clock, the write log and the figures of
/// what it served; every request runs on it in the order it took its lock,
/// at the wall time it was read off its socket (the card's clock is wall
/// time since the server started), so that time spent waiting for the lock
/// is not charged to the card; never earlier than the request before
/// (connections stamp independently).
struct Card {
    device: Device,
    clock: Clock,
    log: Option<WriteLog>,
    /// The I/O trace (`serve --trace`).
    trace: Option<crate::trace::TraceLog>,
    served: Served,
    /// A read's bytes, kept between requests.
    buf: Vec<u8>,
    /// The card's time of the latest request or tick: it never goes back.
    last: u64,
    live: Live,
    /// When the last request ran.
    used: Instant,
    /// Stopped cleanly: no more requests.
    stopped: bool,
}

impl Card {
    fn new(device: Device, clock: Clock, log: Option<WriteLog>) -> Card {
        let live = Live::new(Instant::now(), &device);
        Card { device, clock, log, trace: None, served: Served::default(), buf: Vec::new(), last: 0, live, used: Instant::now(), stopped: false }
    }

    /// The ticker's turn: the clock and the live seconds rolled on, and a
    /// rebuild's next step when no request came for a while; how long
    /// until the next turn.
    fn idle_tick(&mut self) -> Duration {
        const REBUILD_STEP: Duration = Duration::from_millis(10);
        let now = self.tick();
        if let Some(t) = &mut self.trace {
            if let Err(e) = t.flush() {
                eprintln!("flashlab serve: the trace failed ({e}); no longer tracing");
                self.trace = None;
            }
        }
        if !self.device.rebuilding() {
            return Duration::from_millis(100);
        }
        if self.used.elapsed() >= REBUILD_STEP {
            if let Err(e) = self.device.background(now) {
                eprintln!("flashlab serve: the rebuild failed: {e}");
            }
        }
        REBUILD_STEP
    }

    /// The card's clock now (the live figures' seconds rolled on to it).
    fn tick(&mut self) -> u64 {
        let t = Instant::now();
        self.last = self.clock.device_at(t).max(self.last);
        self.live.roll(t, &self.device, self.last);
        self.last
    }

    /// A request, run on the card at its arrival: its reply, due at its
    /// modelled completion.
    fn request(&mut self, req: &Request, volume: Volume, arrived: Instant) -> Reply {
        self.used = Instant::now();
        self.live.roll(arrived, &self.device, self.clock.device_at(arrived).max(self.last));
        let now = self.clock.device_at(arrived).max(self.last);
        self.last = now;
        let s = &mut self.served;
        if s.requests == 0 {
            s.first_ns = now;
        }
        s.last_ns = now;
        s.requests += 1;
        let (error, done, data) = match volume_offset(req, volume) {
            Ok(offset) => execute(&mut self.device, now, req, offset, &mut self.buf),
            Err(error) => (error, now, &[][..]),
        };
        s.errors += (error != 0) as u64;
        if error == 0 {
            s.latency_ns_sum += done - now;
        }
        let write = matches!(req.kind, nbd::CMD_WRITE | nbd::CMD_WRITE_ZEROES);
        self.live.record(req.kind == nbd::CMD_READ, write, req.length as u64, done - now, error != 0);
        if let Some(t) = &mut self.trace {
            if let Err(e) = t.record(now, req, volume.base + req.offset, done - now, error) {
                eprintln!("flashlab serve: the trace failed ({e}); no longer tracing");
                self.trace = None;
            }
        }
        if let (Some(l), 0) = (&mut self.log, error) {
            if let Err(e) = log_record(l, req, volume.base + req.offset) {
                eprintln!("flashlab serve: the write log failed ({e}); no longer logging");
                self.log = None;
            }
        }
        Reply { due: self.clock.due(done), bytes: nbd::reply_encode(error, req.handle, data) }
    }
}
