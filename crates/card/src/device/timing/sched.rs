//! A host-managed driver's GC thread on a core it shares with the
//! benchmark: while the host's I/O cores are all taken (a benchmark thread
//! waits for one), the OS gives one of the driver's cores to a waiting
//! benchmark thread in turns (`Scheduler::shared_slice_ns`): the GC thread
//! runs a slice, then waits one. Turns are aligned to the host's clock (a
//! scheduler acts at its ticks), so a run repeats.

use units::Ns;

/// When `work` of a GC thread's, started at `start`, ends if it runs only
/// in the first half of each period of two slices (`slice` each): its
/// turns, the benchmark thread's between them.
pub(super) fn sliced_end(start: Ns, work: Ns, slice: Ns) -> Ns {
    debug_assert!(slice > 0, "validated: a slice of at least 1 us");
    let (mut t, mut left) = (start, work);
    while left > 0 {
        let phase = t % (2 * slice);
        if phase >= slice {
            t += 2 * slice - phase;
            continue;
        }
        let run = (slice - phase).min(left);
        t += run;
        left -= run;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::sliced_end;

    #[test]
    fn work_runs_in_its_threads_turns_only() {
        let slice = 10;
        assert_eq!(sliced_end(0, 4, slice), 4, "within its turn");
        assert_eq!(sliced_end(8, 4, slice), 22, "2 in its turn, the other's 10, then 2");
        assert_eq!(sliced_end(12, 4, slice), 24, "waits for its next turn");
        assert_eq!(sliced_end(0, 35, slice), 65, "three turns and a half: twice as long less the last wait");
        assert_eq!(sliced_end(7, 0, slice), 7, "no work, no wait");
    }
}
