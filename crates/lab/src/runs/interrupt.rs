//! A request to stop, from the person running the lab (the binary's
//! SIGINT handler): a phase under way ends at the close of its round, no
//! further phase or job starts, and what was measured is kept, marked
//! incomplete. Process-wide, as a signal is; read only at round
//! boundaries, never on an I/O's path.

use std::sync::atomic::{AtomicBool, Ordering};

static ASKED: AtomicBool = AtomicBool::new(false);

/// Asks every run in this process to stop. Async-signal-safe (one atomic
/// store), so a signal handler may call it.
pub fn ask() {
    ASKED.store(true, Ordering::SeqCst);
}

/// Whether a stop was asked.
pub fn asked() -> bool {
    ASKED.load(Ordering::SeqCst)
}
