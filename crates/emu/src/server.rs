//! The NBD server: one thread owns the device and runs every request in
//! arrival order (no lock on the data path: requests reach it over a
//! channel); each connection has a reader thread (handshake, requests) and
//! a writer thread (replies, in the order the device finished them).
//! Several connections may serve one export; a bad client ends only its
//! own connection.

use crate::nbd::{self, Export, Negotiated, ProtoError, Request};
use accel::{Device, DeviceError};
use std::io::{BufReader, BufWriter, Read, Write};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::Instant;

/// What the device thread is asked: a request, with where its reply goes,
/// or its counters.
enum Job {
    Request { req: Request, reply: Sender<Vec<u8>> },
    Counters(Sender<accel::DeviceCounters>),
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
}

impl Server {
    /// Starts the device thread; the device must hold data.
    pub fn start(device: Device, name: &str) -> (Server, std::thread::JoinHandle<Served>) {
        assert!(device.holds_data(), "a served card keeps the bytes written to it");
        let flags = nbd::TFLAG_HAS_FLAGS | nbd::TFLAG_SEND_TRIM | nbd::TFLAG_SEND_WRITE_ZEROES;
        let description = format!("{} ({}), format {}, scale {} [simulated]", device.profile.name, device.profile.id, device.format, device.scale);
        let export = Export { name: name.to_string(), description, size_bytes: device.capacity_bytes(), flags };
        let (jobs, rx) = channel::<Job>();
        let handle = std::thread::Builder::new().name("device".into()).spawn(move || device_loop(device, rx)).expect("a thread");
        (Server { export, jobs }, handle)
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

    /// Serves one connection until the client leaves or breaks the
    /// protocol; returns why it ended.
    pub fn connection<S: Read + Write + Send + 'static>(&self, stream: S, writer: S) -> Result<(), ProtoError> {
        let mut stream = stream;
        let exports = [self.export.clone()];
        match nbd::negotiate(&mut stream, &exports)? {
            Negotiated::Abort => return Ok(()),
            Negotiated::Export(_) => {}
        }
        let (reply_tx, reply_rx) = channel::<Vec<u8>>();
        let writer = std::thread::Builder::new().name("nbd-writer".into()).spawn(move || replies_write(writer, reply_rx)).expect("a thread");
        let mut reader = BufReader::with_capacity(256 * 1024, stream);
        let result = loop {
            match nbd::request_read(&mut reader) {
                Ok(None) => break Ok(()),
                Ok(Some(req)) if req.kind == nbd::CMD_DISC => break Ok(()),
                Ok(Some(req)) => {
                    if self.jobs.send(Job::Request { req, reply: reply_tx.clone() }).is_err() {
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

fn replies_write<W: Write>(w: W, rx: Receiver<Vec<u8>>) {
    let mut w = BufWriter::with_capacity(256 * 1024, w);
    while let Ok(m) = rx.recv() {
        if w.write_all(&m).is_err() {
            return;
        }
        // Flush when nothing else is waiting: replies go out in batches
        // under load and at once when the client waits for one.
        let more = rx.try_iter().collect::<Vec<_>>();
        for m in more {
            if w.write_all(&m).is_err() {
                return;
            }
        }
        if w.flush().is_err() {
            return;
        }
    }
}

/// The device thread: every request in arrival order, at the wall time it
/// arrives (the device's clock is wall time since the server started).
fn device_loop(mut device: Device, rx: Receiver<Job>) -> Served {
    let started = Instant::now();
    let mut served = Served::default();
    let mut buf = Vec::new();
    while let Ok(job) = rx.recv() {
        let (req, reply) = match job {
            Job::Request { req, reply } => (req, reply),
            Job::Counters(tx) => {
                let _ = tx.send(device.counters());
                continue;
            }
        };
        let now = started.elapsed().as_nanos() as u64;
        served.requests += 1;
        let (error, data) = execute(&mut device, now, &req, &mut buf);
        served.errors += (error != 0) as u64;
        let _ = reply.send(nbd::reply_encode(error, req.handle, data));
    }
    served
}

/// Runs one request; its NBD error (0 for success) and a READ's data.
fn execute<'a>(device: &mut Device, now: u64, req: &Request, buf: &'a mut Vec<u8>) -> (u32, &'a [u8]) {
    let len = req.length as u64;
    let result = match req.kind {
        nbd::CMD_READ => {
            if req.length > nbd::PAYLOAD_BYTES_MAX {
                return (nbd::EINVAL, &[]);
            }
            buf.resize(req.length as usize, 0);
            device.read_at(now, req.offset, buf).map(|_| ())
        }
        nbd::CMD_WRITE => device.write_at(now, req.offset, &req.data).map(|_| ()),
        nbd::CMD_TRIM => device.trim_at(now, req.offset, len).map(|_| ()),
        nbd::CMD_WRITE_ZEROES => device.write_zeroes_at(now, req.offset, len).map(|_| ()),
        _ => return (nbd::EINVAL, &[]),
    };
    match result {
        Ok(()) if req.kind == nbd::CMD_READ => (0, &buf[..]),
        Ok(()) => (0, &[]),
        Err(e) => (error_code(&e, req.kind), &[]),
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
