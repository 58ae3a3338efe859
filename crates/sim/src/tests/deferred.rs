//! A target that decides completions as its die frees (`Target::DEFERS`)
//! against one booked at submission.

use crate::*;
use units::Ns;

const READ_NS: Ns = 50_000;
const WRITE_NS: Ns = 1_000_000;

/// One die that serves its queue as it frees (a target that `DEFERS`):
/// reads before writes, or everything in arrival order.
#[derive(Default)]
struct QueuedDie {
    reads_first: bool,
    /// The device's command slots (`None`: no limit).
    slots: Option<u32>,
    busy_until: Ns,
    reads: std::collections::VecDeque<(usize, Ns)>,
    writes: std::collections::VecDeque<(usize, Ns)>,
}
fn service(io: &Io) -> Ns {
    if io.write {
        WRITE_NS
    } else {
        READ_NS
    }
}
impl Target for QueuedDie {
    type Error = ();
    const DEFERS: bool = true;
    fn submit(&mut self, _: Ns, _: &Io) -> Result<Ns, ()> {
        unreachable!("the engine submits through submit_open")
    }
    fn submit_open(&mut self, now: Ns, io: &Io, slot: usize) -> Result<Option<Ns>, ()> {
        assert!(self.slots.is_none_or(|n| slot < n as usize), "slot {slot} beyond the device's {:?}", self.slots);
        let queued = !self.reads.is_empty() || !self.writes.is_empty();
        assert!(!queued || self.busy_until > now, "an event at {} ns not run by {now} ns", self.busy_until);
        if !queued && self.busy_until <= now {
            self.busy_until = now + service(io);
            return Ok(Some(self.busy_until));
        }
        match io.write || !self.reads_first {
            true => self.writes.push_back((slot, service(io))),
            false => self.reads.push_back((slot, service(io))),
        }
        Ok(None)
    }
    fn next_event(&self) -> Option<Ns> {
        (!self.reads.is_empty() || !self.writes.is_empty()).then_some(self.busy_until)
    }
    fn advance(&mut self, t: Ns, resolved: &mut Vec<(usize, Ns)>) -> Result<(), ()> {
        assert_eq!(t, self.busy_until);
        let (slot, svc) = self.reads.pop_front().or_else(|| self.writes.pop_front()).expect("an event with a queue");
        self.busy_until = t + svc;
        resolved.push((slot, self.busy_until));
        Ok(())
    }
    fn command_slots(&self) -> Option<u32> {
        self.slots
    }
}
/// The same die booked at submission, in arrival order.
struct BookedDie(Timeline);
impl Target for BookedDie {
    type Error = ();
    fn submit(&mut self, now: Ns, io: &Io) -> Result<Ns, ()> {
        Ok(self.0.reserve(now, service(io)))
    }
}
/// 30% writes.
struct Mixed;
impl Workload for Mixed {
    fn next_io(&mut self, rng: &mut Rng) -> Io {
        Io { offset_bytes: 0, len_bytes: 4096, write: rng.below(10) < 3 }
    }
}
/// Every completion: (issued, completed, write); stops after `stop`.
struct Record(Vec<(Ns, Ns, bool)>, usize);
impl<T> Observer<T> for Record {
    fn complete(&mut self, _: &mut T, issued: Ns, completed: Ns, io: &Io) -> bool {
        self.0.push((issued, completed, io.write));
        self.0.len() < self.1
    }
}

/// A target that decides completions as its die frees, serving in
/// arrival order, gives exactly what booking at submission gives.
#[test]
fn a_die_dispatched_in_arrival_order_equals_one_booked_at_submission() {
    let (mut a, mut b) = (Record(Vec::new(), 20_000), Record(Vec::new(), 20_000));
    Engine::new(3).run(&mut QueuedDie::default(), &mut Mixed, 4, 4, &mut a).unwrap();
    Engine::new(3).run(&mut BookedDie(Timeline::default()), &mut Mixed, 4, 4, &mut b).unwrap();
    assert_eq!(a.0, b.0);
}

/// Served reads first, a read waits at most for the write in progress
/// and the reads ahead of it; the writes still all complete, and a
/// stop waits for the open I/Os, leaving the die with no queue.
#[test]
fn a_die_dispatched_reads_first_bounds_what_a_read_waits() {
    let mut die = QueuedDie { reads_first: true, ..Default::default() };
    let mut e = Engine::new(3);
    let mut r = Record(Vec::new(), 20_000);
    e.run(&mut die, &mut Mixed, 4, 4, &mut r).unwrap();
    let reads: Vec<Ns> = r.0.iter().filter(|x| !x.2).map(|x| x.1 - x.0).collect();
    let worst = reads.iter().max().unwrap();
    assert!(*worst <= WRITE_NS + 16 * READ_NS, "a read waited {worst} ns");
    let mut fifo = Record(Vec::new(), 20_000);
    Engine::new(3).run(&mut QueuedDie::default(), &mut Mixed, 4, 4, &mut fifo).unwrap();
    let fifo_worst = fifo.0.iter().filter(|x| !x.2).map(|x| x.1 - x.0).max().unwrap();
    assert!(fifo_worst > 3 * WRITE_NS, "in arrival order a read waits behind the writes queued before it ({fifo_worst} ns)");
    assert!(r.0.iter().any(|x| x.2), "writes complete too");
    assert!(die.reads.is_empty() && die.writes.is_empty(), "a stop leaves no open I/O at the die");
    assert_eq!(e.drained_at, die.busy_until, "drained when the die ends its last open I/O");
    // The next test runs on the same die from where the last one drained.
    e.drain();
    let mut again = Record(Vec::new(), 1_000);
    e.run(&mut die, &mut Mixed, 4, 4, &mut again).unwrap();
    assert!(again.0.iter().all(|x| x.0 >= r.0.last().unwrap().1));
}

/// A die that defers, behind 4 command slots: the I/Os beyond them wait
/// in the host, and every one completes in the order the die serves it.
#[test]
fn a_deferring_die_behind_command_slots_completes_every_io() {
    let mut die = QueuedDie { reads_first: true, slots: Some(4), ..Default::default() };
    let mut r = Record(Vec::new(), 5_000);
    Engine::new(5).run(&mut die, &mut Mixed, 4, 4, &mut r).unwrap();
    assert_eq!(r.0.len(), 5_000);
    // Completions come in time order, and with 16 host slots on 4
    // commands an I/O waits in the host too: some take longer than the
    // die's queue alone would make them.
    assert!(r.0.windows(2).all(|w| w[0].1 <= w[1].1));
    let worst_read = r.0.iter().filter(|x| !x.2).map(|x| x.1 - x.0).max().unwrap();
    assert!(worst_read > WRITE_NS + 4 * READ_NS, "reads wait in the host behind the 4 commands ({worst_read} ns)");
}
