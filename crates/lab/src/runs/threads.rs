//! Independent runs on the machine's cores: each item is a card of its
//! own (seeded alike whichever thread takes it), so running them at once
//! changes no figure, only the wall time.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs `f` on every item of `order` (indices into the caller's items,
/// taken in that order) on up to `threads` threads; the results by index.
/// Once an item fails or a stop is asked (SIGINT), items not yet started
/// are skipped and stay `None`: every one of them comes after a failed
/// item in `order`, or after the stop.
pub fn on_threads<T: Send, E: Send>(order: &[usize], threads: usize, f: impl Fn(usize) -> Result<T, E> + Sync) -> Vec<Option<Result<T, E>>> {
    let n = order.iter().max().map_or(0, |&i| i + 1);
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let out: Mutex<Vec<Option<Result<T, E>>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, order.len().max(1)) {
            scope.spawn(|| loop {
                if failed.load(Ordering::Relaxed) || crate::runs::interrupt::asked() {
                    break;
                }
                let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) else { break };
                let r = f(i);
                if r.is_err() {
                    failed.store(true, Ordering::Relaxed);
                }
                out.lock().expect("no item panics holding the lock")[i] = Some(r);
            });
        }
    });
    out.into_inner().expect("threads are joined")
}

/// The machine's cores (1 if unknown).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
