//! The NBD server: one thread owns the device and runs every request in
//! arrival order (no lock on the data path: requests reach it over a
//! channel); each connection has a reader thread (handshake, requests) and
//! a writer thread (replies, in the order the device finished them).
//! Several connections may serve one export; a bad client ends only its
//! own connection.

use crate::nbd::{self, Export, Negotiated, ProtoError, Request};
use crate::pace::{self, Clock, Lateness, Timing};
use crate::writelog::{self, WriteLog};
use accel::{Device, DeviceError};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{BufReader, BufWriter, Read, Write};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::Instant;

/// A reply and when it may leave (`None`: at once).
struct Reply {
    due: Option<Instant>,
    bytes: Vec<u8>,
}

/// What the device thread is asked: a request, with where its reply goes,
/// or its counters.
enum Job {
    Request {
        req: Request,
        /// When the request's last byte was read off the socket: its
        /// submission time on the card's clock.
        arrived: Instant,
        reply: Sender<Reply>,
    },
    Counters(Sender<accel::DeviceCounters>),
    /// A clean shutdown: the device thread checkpoints the card and ends.
    Shutdown(Sender<Result<(), DeviceError>>),
}

/// What the device thread counts, for the log at the end and for tests.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Served {
    pub requests: u64,
    pub errors: u64,
}

/// A served card: its export and the channel to the thread that owns it.
pub struct Server {
    export: Export,
    jobs: Sender<Job>,
    /// How late paced replies left, over every connection.
    pub lateness: Arc<Lateness>,
}

impl Server {
    /// Starts the device thread; the device must hold data. `log`: where
    /// to keep the log of writes and flushes, if anywhere.
    pub fn start(device: Device, name: &str, timing: Timing, log: Option<WriteLog>) -> (Server, std::thread::JoinHandle<Served>) {
        assert!(device.holds_data(), "a served card keeps the bytes written to it");
        // CAN_MULTI_CONN holds: every connection's requests run on the one
        // device thread, in arrival order, so a FLUSH on any connection
        // covers the writes acknowledged on all of them.
        let flags = nbd::TFLAG_HAS_FLAGS
            | nbd::TFLAG_SEND_FLUSH
            | nbd::TFLAG_SEND_FUA
            | nbd::TFLAG_SEND_TRIM
            | nbd::TFLAG_SEND_WRITE_ZEROES
            | nbd::TFLAG_CAN_MULTI_CONN;
        let description = format!("{} ({}), format {}, scale {} [simulated]", device.profile.name, device.profile.id, device.format, device.scale);
        let export = Export { name: name.to_string(), description, size_bytes: device.capacity_bytes(), flags };
        let (jobs, rx) = channel::<Job>();
        let clock = Clock::new(timing);
        let handle = std::thread::Builder::new().name("device".into()).spawn(move || device_loop(device, rx, clock, log)).expect("a thread");
        (Server { export, jobs, lateness: Arc::new(Lateness::default()) }, handle)
    }

    pub fn export(&self) -> &Export {
        &self.export
    }

    /// The card's counters now (after every request sent before).
    pub fn counters(&self) -> Option<accel::DeviceCounters> {
        let (tx, rx) = channel();
        self.jobs.send(Job::Counters(tx)).ok()?;
        rx.recv().ok()
    }

    /// Stops the card cleanly after the requests already taken: every
    /// write on the media and a checkpoint beside the store, so that the
    /// next start mounts without a scan. The device thread then ends.
    pub fn shutdown(&self) -> Result<(), DeviceError> {
        let (tx, rx) = channel();
        self.jobs.send(Job::Shutdown(tx)).map_err(|_| DeviceError::Store("the device thread has ended".into()))?;
        rx.recv().map_err(|_| DeviceError::Store("the device thread has ended".into()))?
    }

    /// Serves one connection until the client leaves or breaks the
    /// protocol; returns why it ended.
    pub fn connection<S: Read + Write + Send + 'static>(&self, stream: S, writer: S) -> Result<(), ProtoError> {
        let mut stream = stream;
        let exports = [self.export.clone()];
        match nbd::negotiate(&mut stream, &exports)? {
            Negotiated::Abort => return Ok(()),
            Negotiated::Export(_) => {}
        }
        let (reply_tx, reply_rx) = channel::<Reply>();
        let lateness = Arc::clone(&self.lateness);
        let writer = std::thread::Builder::new().name("nbd-writer".into()).spawn(move || replies_write(writer, reply_rx, &lateness)).expect("a thread");
        let mut reader = BufReader::with_capacity(256 * 1024, stream);
        let result = loop {
            match nbd::request_read(&mut reader) {
                Ok(None) => break Ok(()),
                Ok(Some(req)) if req.kind == nbd::CMD_DISC => break Ok(()),
                Ok(Some(req)) => {
                    let arrived = Instant::now();
                    if self.jobs.send(Job::Request { req, arrived, reply: reply_tx.clone() }).is_err() {
                        break Ok(());
                    }
                }
                Err(e) => break Err(e),
            }
        };
        // Replies to requests already taken still go out; then the writer
        // ends when the last sender is gone.
        drop(reply_tx);
        let _ = writer.join();
        result
    }
}

/// Sends replies as they become due: at once when unpaced, else in order
/// of their modelled completions (NBD replies may overtake each other),
/// each no sooner than its time; flushes when none is waiting.
fn replies_write<W: Write>(w: W, rx: Receiver<Reply>, lateness: &Lateness) {
    pace::timer_slack_min();
    let mut w = BufWriter::with_capacity(256 * 1024, w);
    let mut held: BinaryHeap<Reverse<(Instant, u64, Vec<u8>)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut open = true;
    while open || !held.is_empty() {
        // Take what has arrived: wait for it when nothing is held, else
        // until the earliest held reply is nearly due.
        let next = match held.peek() {
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(Reverse((due, _, _))) => rx.recv_timeout(due.saturating_duration_since(Instant::now() + pace::SPIN)),
        };
        let mut arrived = Vec::new();
        match next {
            Ok(r) => arrived.push(r),
            Err(RecvTimeoutError::Disconnected) => open = false,
            Err(RecvTimeoutError::Timeout) => {}
        }
        arrived.extend(rx.try_iter());
        for r in arrived {
            match r.due {
                None => {
                    if w.write_all(&r.bytes).is_err() {
                        return;
                    }
                }
                Some(due) => {
                    seq += 1;
                    held.push(Reverse((due, seq, r.bytes)));
                }
            }
        }
        while let Some(Reverse((due, _, _))) = held.peek() {
            if *due > Instant::now() + pace::SPIN {
                break;
            }
            let Reverse((due, _, bytes)) = held.pop().expect("peeked");
            pace::wait_until(due);
            lateness.record(Instant::now() - due);
            if w.write_all(&bytes).is_err() {
                return;
            }
        }
        if w.flush().is_err() {
            return;
        }
    }
}

/// The device thread: every request in the order it reached the thread, at
/// the wall time it was read off its socket (the device's clock is wall
/// time since the server started), so that time spent queued for this
/// thread is not charged to the card; never earlier than the request
/// before (connections' readers stamp independently).
fn device_loop(mut device: Device, rx: Receiver<Job>, clock: Clock, mut log: Option<WriteLog>) -> Served {
    let mut served = Served::default();
    let mut buf = Vec::new();
    let mut last = 0;
    while let Ok(job) = rx.recv() {
        let (req, arrived, reply) = match job {
            Job::Request { req, arrived, reply } => (req, arrived, reply),
            Job::Counters(tx) => {
                let _ = tx.send(device.counters());
                continue;
            }
            Job::Shutdown(tx) => {
                if let Some(l) = &mut log {
                    let _ = l.flush();
                }
                let _ = tx.send(device.shutdown_clean());
                break;
            }
        };
        let now = clock.device_at(arrived).max(last);
        last = now;
        served.requests += 1;
        let (error, done, data) = execute(&mut device, now, &req, &mut buf);
        served.errors += (error != 0) as u64;
        if let (Some(l), 0) = (&mut log, error) {
            if let Err(e) = log_record(l, &req) {
                eprintln!("flashlab serve: the write log failed ({e}); no longer logging");
                log = None;
            }
        }
        let _ = reply.send(Reply { due: clock.due(done), bytes: nbd::reply_encode(error, req.handle, data) });
    }
    served
}

/// A request that changed the card, in the write log.
fn log_record(l: &mut WriteLog, req: &Request) -> std::io::Result<()> {
    match req.kind {
        nbd::CMD_WRITE => {
            l.record(writelog::WRITE, req.offset, req.length, &req.data)?;
            if req.flags & nbd::CMD_FLAG_FUA != 0 {
                l.record(writelog::FLUSH, 0, 0, &[])?;
            }
            Ok(())
        }
        nbd::CMD_FLUSH => l.record(writelog::FLUSH, 0, 0, &[]),
        nbd::CMD_TRIM => l.record(writelog::TRIM, req.offset, req.length, &[]),
        nbd::CMD_WRITE_ZEROES => l.record(writelog::WRITE_ZEROES, req.offset, req.length, &[]),
        _ => Ok(()),
    }
}

/// Runs one request: its NBD error (0 for success), its modelled
/// completion, and a READ's data.
fn execute<'a>(device: &mut Device, now: u64, req: &Request, buf: &'a mut Vec<u8>) -> (u32, u64, &'a [u8]) {
    let len = req.length as u64;
    let result = match req.kind {
        nbd::CMD_READ => {
            if req.length > nbd::PAYLOAD_BYTES_MAX {
                return (nbd::EINVAL, now, &[]);
            }
            buf.resize(req.length as usize, 0);
            device.read_at(now, req.offset, buf)
        }
        // A FUA write is answered once it is durable: written, then flushed.
        nbd::CMD_WRITE if req.flags & nbd::CMD_FLAG_FUA != 0 => device.write_at(now, req.offset, &req.data).and_then(|t| device.flush(t)),
        nbd::CMD_WRITE => device.write_at(now, req.offset, &req.data),
        nbd::CMD_FLUSH => device.flush(now),
        nbd::CMD_TRIM => device.trim_at(now, req.offset, len),
        nbd::CMD_WRITE_ZEROES => device.write_zeroes_at(now, req.offset, len),
        _ => return (nbd::EINVAL, now, &[]),
    };
    match result {
        Ok(done) if req.kind == nbd::CMD_READ => (0, done, &buf[..]),
        Ok(done) => (0, done, &[]),
        Err(e) => (error_code(&e, req.kind), now, &[]),
    }
}

/// The NBD error for a device error: out of range is the client's
/// mistake (EINVAL, or ENOSPC for a write past the end); anything else is
/// the card's (EIO).
fn error_code(e: &DeviceError, kind: u16) -> u32 {
    match e {
        DeviceError::OutOfRange { offset, len, capacity } if offset.saturating_add(*len) > *capacity && kind == nbd::CMD_WRITE => nbd::ENOSPC,
        DeviceError::OutOfRange { .. } => nbd::EINVAL,
        _ => nbd::EIO,
    }
}
