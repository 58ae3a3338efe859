//! Where a connection's replies go: written by the connection's own
//! thread as soon as its requests have run, or, paced, held by a writer
//! thread until each one's modelled completion. Paced replies not yet
//! written hold at most `PACED_BYTES_MAX` (or one reply, however large):
//! past it the connection waits for the client to take its replies, and
//! reads no more requests meanwhile.

use crate::pace::{self, Lateness};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{BufWriter, Write};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

/// The most bytes of paced replies a connection holds unwritten.
pub(crate) const PACED_BYTES_MAX: usize = 32 * 1024 * 1024;

/// The bytes of a connection's paced replies not yet written, and whether
/// its writer has ended (the client can no longer be written to).
#[derive(Default)]
pub(crate) struct Room {
    state: Mutex<(usize, bool)>,
    freed: Condvar,
}

impl Room {
    /// Waits until `n` more bytes fit (always, when none are held), then
    /// holds them; an error once the writer has ended.
    fn take(&self, n: usize) -> std::io::Result<()> {
        let mut s = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        while !s.1 && s.0 > 0 && s.0 + n > PACED_BYTES_MAX {
            s = self.freed.wait(s).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        if s.1 {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        }
        s.0 += n;
        Ok(())
    }

    /// `n` bytes written: room for others.
    fn give(&self, n: usize) {
        let mut s = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        debug_assert!(s.0 >= n, "gives back only what was taken");
        s.0 -= n;
        self.freed.notify_all();
    }

    /// The writer has ended: nobody waits for room any more.
    fn close(&self) {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner).1 = true;
        self.freed.notify_all();
    }

    /// Bytes held now.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.state.lock().unwrap().0
    }
}

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
    Paced { tx: Sender<Reply>, writer: std::thread::JoinHandle<()>, room: Arc<Room> },
}

impl<W: Write + Send + 'static> Replies<W> {
    /// Replies to `w`; paced ones by a writer thread of their own (an
    /// error when the system gives none).
    pub(crate) fn new(w: W, paced: bool, lateness: &Arc<Lateness>) -> std::io::Result<Replies<W>> {
        if !paced {
            return Ok(Replies::Direct(BufWriter::with_capacity(256 * 1024, w)));
        }
        let (tx, rx) = channel::<Reply>();
        let (lateness, room) = (Arc::clone(lateness), Arc::new(Room::default()));
        let r = Arc::clone(&room);
        let writer = std::thread::Builder::new().name("nbd-writer".into()).spawn(move || {
            replies_write(w, rx, &lateness, &r);
            r.close();
        })?;
        Ok(Replies::Paced { tx, writer, room })
    }

    /// Takes a reply; an error once the client can no longer be written to.
    pub(crate) fn send(&mut self, r: Reply) -> std::io::Result<()> {
        match self {
            Replies::Direct(w) => {
                debug_assert!(r.due.is_none(), "an unpaced reply is due at once");
                w.write_all(&r.bytes)
            }
            Replies::Paced { tx, room, .. } => {
                room.take(r.bytes.len())?;
                tx.send(r).map_err(|_| std::io::ErrorKind::BrokenPipe.into())
            }
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
            Replies::Paced { tx, writer, .. } => {
                drop(tx);
                let _ = writer.join();
            }
        }
    }
}

/// Sends replies as they become due: at once when unpaced, else in order
/// of their modelled completions (NBD replies may overtake each other),
/// each no sooner than its time; flushes when none is waiting.
fn replies_write<W: Write>(w: W, rx: Receiver<Reply>, lateness: &Lateness, room: &Room) {
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
                    room.give(r.bytes.len());
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
            room.give(bytes.len());
        }
        if w.flush().is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that takes nothing until told to.
    struct Stuck(Arc<(Mutex<bool>, Condvar)>);

    impl Write for Stuck {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            let (open, cv) = &*self.0;
            let mut o = open.lock().unwrap();
            while !*o {
                o = cv.wait(o).unwrap();
            }
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A client that reads no reply holds at most the room's bytes (or one
    /// reply) in the server: the sender waits for the rest.
    #[test]
    fn paced_replies_a_client_does_not_take_are_bounded() {
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        let mut r = Replies::new(Stuck(Arc::clone(&gate)), true, &Arc::new(Lateness::default())).unwrap();
        let Replies::Paced { room, .. } = &r else { panic!("paced") };
        let room = Arc::clone(room);
        let big = PACED_BYTES_MAX / 4 + 1;
        let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let s = Arc::clone(&sent);
        let sender = std::thread::spawn(move || {
            for _ in 0..8 {
                r.send(Reply { due: None, bytes: vec![0; big] }).unwrap();
                s.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            r.close();
        });
        std::thread::sleep(std::time::Duration::from_millis(200));
        // One reply may be inside the stuck write, three wait in room.
        assert!(sent.load(std::sync::atomic::Ordering::SeqCst) <= 4, "{} sent", sent.load(std::sync::atomic::Ordering::SeqCst));
        assert!(room.held() <= PACED_BYTES_MAX, "{} held", room.held());
        *gate.0.lock().unwrap() = true;
        gate.1.notify_all();
        sender.join().unwrap();
        assert_eq!(sent.load(std::sync::atomic::Ordering::SeqCst), 8);
        assert_eq!(room.held(), 0);
    }

    /// Once the client can no longer be written to, a sender waiting for
    /// room is told so rather than waiting for ever.
    #[test]
    fn a_sender_waiting_for_room_is_released_when_the_writer_ends() {
        let room = Room::default();
        room.take(PACED_BYTES_MAX).unwrap();
        std::thread::scope(|s| {
            let waiting = s.spawn(|| room.take(1));
            std::thread::sleep(std::time::Duration::from_millis(50));
            room.close();
            assert!(waiting.join().unwrap().is_err());
        });
    }
}
