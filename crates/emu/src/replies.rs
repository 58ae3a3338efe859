//! Where a connection's replies go: written by the connection's own
//! thread as soon as its requests have run, or, paced, held by a writer
//! thread until each one's modelled completion.

use crate::pace::{self, Lateness};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{BufWriter, Write};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::Instant;

/// A reply and when it may leave (`None`: at once).
pub(crate) struct Reply {
    pub(crate) due: Option<Instant>,
    pub(crate) bytes: Vec<u8>,
}

/// Where a connection's replies go: written by its own thread as soon as
/// the request has run (flushed before it waits for the client), or, when
/// paced, held by its writer thread until due.
pub(crate) enum Replies<W: Write + Send + 'static> {
    Direct(BufWriter<W>),
    Paced { tx: Sender<Reply>, writer: std::thread::JoinHandle<()> },
}

impl<W: Write + Send + 'static> Replies<W> {
    pub(crate) fn new(w: W, paced: bool, lateness: &Arc<Lateness>) -> Replies<W> {
        if !paced {
            return Replies::Direct(BufWriter::with_capacity(256 * 1024, w));
        }
        let (tx, rx) = channel::<Reply>();
        let lateness = Arc::clone(lateness);
        let writer = std::thread::Builder::new().name("nbd-writer".into()).spawn(move || replies_write(w, rx, &lateness)).expect("a thread");
        Replies::Paced { tx, writer }
    }

    /// Takes a reply; an error once the client can no longer be written to.
    pub(crate) fn send(&mut self, r: Reply) -> std::io::Result<()> {
        match self {
            Replies::Direct(w) => {
                debug_assert!(r.due.is_none(), "an unpaced reply is due at once");
                w.write_all(&r.bytes)
            }
            Replies::Paced { tx, .. } => tx.send(r).map_err(|_| std::io::ErrorKind::BrokenPipe.into()),
        }
    }

    /// Sends what is written (the writer thread flushes on its own).
    pub(crate) fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Replies::Direct(w) => w.flush(),
            Replies::Paced { .. } => Ok(()),
        }
    }

    /// Every reply taken goes out (paced: each at its time), then the
    /// writer ends.
    pub(crate) fn close(self) {
        match self {
            Replies::Direct(mut w) => {
                let _ = w.flush();
            }
            Replies::Paced { tx, writer } => {
                drop(tx);
                let _ = writer.join();
            }
        }
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
