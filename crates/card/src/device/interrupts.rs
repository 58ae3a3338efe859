//! A completion's way back through the host's interrupt: the card signals
//! a completion on one of its driver's interrupt vectors, and the core
//! that takes the vector runs the completion's first part (the interrupt
//! handler and, on Linux, the block layer's softirq that ends the request;
//! on Windows the ISR and the DPC that completes it) before the thread
//! that waits for it can run. One core a vector: the completions of a
//! vector are served one at a time, whatever the load, which caps a card
//! with few vectors (a single MSI, as Micron's mtip32xx driver requests)
//! where a card whose driver spreads its completions over every core (an
//! NVMe driver, a vector a core) is not.
//!
//! The cost of a completion on its vector's core is the host's
//! (`[stack] interrupt_ns` of the host file) and, where the host runs a
//! driver's completion work there, the driver's (`[host]
//! read_completion_ns` of the card's profile; `timing::Passage`).

use sim::Timeline;
use units::Ns;

/// The interrupt vectors of one card and the time each completion holds
/// its vector's core.
#[derive(Debug, Clone)]
pub(super) struct Interrupts {
    /// One timeline a vector: the core that takes it, for completions.
    vectors: Vec<Timeline>,
    /// Vectors of each member, consecutive (at least one a member).
    per_member: usize,
    /// The vector (of each member's) the next completion takes: a
    /// member's completions go over its vectors in turn (a driver's
    /// queues filled in turn), the same every run.
    next: usize,
}

impl Interrupts {
    /// `vectors` of the card (at least one a member, at most the host's
    /// cores: each vector's handler runs on a core of its own) over
    /// `members`.
    pub(super) fn new(vectors: u32, members: u32, cores: u32) -> Interrupts {
        assert!(members >= 1 && cores >= 1, "a card has a member and a host a core");
        let per_member = (vectors.min(cores) / members).max(1) as usize;
        Interrupts { vectors: vec![Timeline::default(); per_member * members as usize], per_member, next: 0 }
    }

    /// When the completion of `member`'s part of an I/O, done on the card
    /// at `done`, has passed its vector's core, which it holds `cost_ns`.
    #[inline]
    pub(super) fn complete(&mut self, member: usize, done: Ns, cost_ns: Ns) -> Ns {
        if cost_ns == 0 {
            return done;
        }
        let v = member * self.per_member + self.next;
        self.next = if self.next + 1 == self.per_member { 0 } else { self.next + 1 };
        debug_assert!(v < self.vectors.len(), "member {member} has vectors {}..{}", member * self.per_member, (member + 1) * self.per_member);
        self.vectors[v].reserve(done, cost_ns)
    }

    /// The vectors' cores: how many, and their time booked before `t`.
    pub(super) fn busy_by(&self, t: Ns) -> (u32, Ns) {
        (self.vectors.len() as u32, self.vectors.iter().map(|v| v.busy_by(t)).sum())
    }

    /// When the last completion booked so far leaves its core.
    pub(super) fn idle_at(&self) -> Ns {
        self.vectors.iter().map(Timeline::idle_at).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_vector_serves_its_completions_one_at_a_time() {
        let mut irq = Interrupts::new(1, 1, 12);
        let ends: Vec<Ns> = (0..4).map(|_| irq.complete(0, 10_000, 1_000)).collect();
        assert_eq!(ends, vec![11_000, 12_000, 13_000, 14_000]);
        assert_eq!(irq.busy_by(Ns::MAX), (1, 4_000));
    }

    #[test]
    fn vectors_spread_a_members_completions_and_keep_members_apart() {
        // Two members, four vectors: each member's completions alternate
        // between its two cores.
        let mut irq = Interrupts::new(4, 2, 12);
        let a: Vec<Ns> = (0..4).map(|_| irq.complete(0, 0, 1_000)).collect();
        assert_eq!(a, vec![1_000, 1_000, 2_000, 2_000]);
        assert_eq!(irq.complete(1, 0, 1_000), 1_000, "the other member's vectors are free");
        // More vectors than cores: one a core.
        assert_eq!(Interrupts::new(64, 1, 12).vectors.len(), 12);
        // Fewer vectors than members: one a member still.
        assert_eq!(Interrupts::new(1, 2, 12).vectors.len(), 2);
    }

    #[test]
    fn no_cost_no_wait() {
        let mut irq = Interrupts::new(1, 1, 1);
        assert_eq!((irq.complete(0, 5, 0), irq.complete(0, 5, 0)), (5, 5));
    }
}
