//! A device's command slots: how many commands it holds at once.

use std::collections::VecDeque;

/// At most a fixed number of commands at a device at once (its driver's
/// tags, its controller's command slots). A command issued with every
/// slot taken waits in the host, first come first served, and takes the
/// slot of the next command to complete. The closed loop and the trace
/// replays both admit commands through one.
#[derive(Debug, Clone)]
pub struct Gate<T> {
    free: u32,
    waiting: VecDeque<T>,
}

impl<T> Gate<T> {
    pub fn new(slots: u32) -> Gate<T> {
        assert!(slots >= 1, "a device holds at least one command");
        Gate { free: slots, waiting: VecDeque::new() }
    }

    /// A command is issued: whether it takes a slot now; if not, `waiter`
    /// waits its turn.
    #[inline]
    pub fn take(&mut self, waiter: T) -> bool {
        if self.free > 0 && self.waiting.is_empty() {
            self.free -= 1;
            true
        } else {
            self.waiting.push_back(waiter);
            false
        }
    }

    /// A command completed: the waiter that takes its slot, if one waits
    /// (else the slot is free).
    #[inline]
    pub fn release(&mut self) -> Option<T> {
        let next = self.waiting.pop_front();
        if next.is_none() {
            self.free += 1;
        }
        next
    }

    /// A command completed and its issuer issues `next`: the command that
    /// takes the freed slot, the one that has waited longest (`next`
    /// queued behind the rest), or `next` itself when none waits.
    #[inline]
    pub fn pass(&mut self, next: T) -> T {
        match self.waiting.front_mut() {
            None => next,
            Some(first) => {
                // The queue turns by one: no growth, no capacity check.
                let out = std::mem::replace(first, next);
                self.waiting.rotate_left(1);
                out
            }
        }
    }

    /// Commands waiting for a slot.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two slots: the third and fourth commands wait, in the order they
    /// came, and each completion hands its slot to the oldest waiter.
    #[test]
    fn waiters_take_freed_slots_in_arrival_order() {
        let mut g = Gate::new(2);
        assert!(g.take('a') && g.take('b'));
        assert!(!g.take('c') && !g.take('d'));
        assert_eq!(g.waiting(), 2);
        assert_eq!(g.release(), Some('c'));
        assert_eq!(g.release(), Some('d'));
        assert_eq!(g.release(), None, "no waiter: the slot is free");
        assert!(g.take('e'), "a free slot is taken at once");
        assert!(!g.take('f'));
        assert_eq!(g.pass('g'), 'f', "a completion passes its slot to the oldest waiter");
        assert_eq!(g.pass('h'), 'g');
        assert_eq!(g.release(), Some('h'));
        assert_eq!(g.release(), None);
        assert_eq!(g.pass('i'), 'i', "none waits: the issuer's next command takes the slot");
    }
}
