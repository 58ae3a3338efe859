//! Modelled time in wall time. With `Timing::Model` the device's clock is
//! wall time since the server started, divided by the time scale (a card
//! faster than this machine can carry runs K times slower); a reply is held
//! until its modelled completion, then sent: the writer sleeps until shortly
//! before it is due and spins the rest (the thread's timer slack set to
//! 1 ns), as FEMU and NVMeVirt busy-wait and SPDK's delay bdev polls, but
//! without a core spent on polling. How late each reply left is counted.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How replies are timed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Timing {
    /// As soon as the device has run the request.
    None,
    /// At the modelled completion, on a clock `time_scale` times slower
    /// than the card's.
    Model { time_scale: f64 },
}

/// Below this a reply is waited for by spinning, not sleeping.
pub const SPIN: Duration = Duration::from_micros(60);

/// The device's clock in wall time.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    started: Instant,
    timing: Timing,
}

impl Clock {
    pub fn new(timing: Timing) -> Clock {
        if let Timing::Model { time_scale } = timing {
            assert!(time_scale.is_finite() && time_scale >= 1.0, "a time scale of at least 1");
        }
        Clock { started: Instant::now(), timing }
    }

    /// The device's time now, in its own nanoseconds.
    pub fn device_now(&self) -> u64 {
        self.device_at(Instant::now())
    }

    /// The device's time at wall instant `at` (0 before the start).
    pub fn device_at(&self, at: Instant) -> u64 {
        let wall = at.saturating_duration_since(self.started).as_nanos() as f64;
        match self.timing {
            Timing::Model { time_scale } => (wall / time_scale) as u64,
            Timing::None => wall as u64,
        }
    }

    /// When a reply modelled to complete at `device_ns` may leave; `None`
    /// when replies are not paced.
    pub fn due(&self, device_ns: u64) -> Option<Instant> {
        match self.timing {
            Timing::Model { time_scale } => Some(self.started + Duration::from_nanos((device_ns as f64 * time_scale) as u64)),
            Timing::None => None,
        }
    }
}

/// Sets this thread's timer slack to 1 ns, so that a sleep ends when asked
/// (Linux's default slack, 50 us, would swamp a 60 us read).
pub fn timer_slack_min() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_TIMERSLACK takes a plain integer.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// Sleeps, then spins, until `due`.
pub fn wait_until(due: Instant) {
    let now = Instant::now();
    if due > now + SPIN {
        std::thread::sleep(due - now - SPIN);
    }
    while Instant::now() < due {
        std::hint::spin_loop();
    }
}

/// Upper bounds of the lateness buckets, microseconds.
pub const LATE_US: [u64; 10] = [5, 10, 20, 50, 100, 200, 500, 1000, 5000, u64::MAX];

/// How late replies left (after their modelled completion), shared by the
/// connections' writers without a lock.
#[derive(Debug, Default)]
pub struct Lateness {
    buckets: [AtomicU64; 10],
    max_ns: AtomicU64,
}

impl Lateness {
    pub fn record(&self, late: Duration) {
        let us = late.as_micros() as u64;
        let b = LATE_US.iter().position(|&hi| us < hi).unwrap_or(LATE_US.len() - 1);
        self.buckets[b].fetch_add(1, Ordering::Relaxed);
        self.max_ns.fetch_max(late.as_nanos() as u64, Ordering::Relaxed);
    }

    pub fn counts(&self) -> [u64; 10] {
        std::array::from_fn(|i| self.buckets[i].load(Ordering::Relaxed))
    }

    /// "n replies: under 5 us 90.1%, ..., max 0.3 ms".
    pub fn summary(&self) -> String {
        let c = self.counts();
        let n: u64 = c.iter().sum();
        if n == 0 {
            return "no paced replies".into();
        }
        let mut parts = Vec::new();
        let mut lo = 0;
        for (i, &k) in c.iter().enumerate() {
            if k > 0 {
                let range = if LATE_US[i] == u64::MAX { format!(">= {lo} us") } else { format!("{lo}-{} us", LATE_US[i]) };
                parts.push(format!("{range} {:.1}%", k as f64 * 100.0 / n as f64));
            }
            lo = LATE_US[i];
        }
        format!("{n} replies late by: {}; max {:.1} us", parts.join(", "), self.max_ns.load(Ordering::Relaxed) as f64 / 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scaled_clock_runs_slower_and_dues_scale_back() {
        let c = Clock::new(Timing::Model { time_scale: 4.0 });
        std::thread::sleep(Duration::from_millis(20));
        let d = c.device_now();
        assert!((4_000_000..=6_000_000).contains(&d), "20 ms of wall time is about 5 ms of the card's: {d}");
        let due = c.due(1_000_000).unwrap();
        assert_eq!(due - c.started, Duration::from_millis(4));
        assert!(Clock::new(Timing::None).due(5).is_none());
    }

    #[test]
    fn waits_end_on_time_and_lateness_is_counted() {
        timer_slack_min();
        let l = Lateness::default();
        for _ in 0..20 {
            let due = Instant::now() + Duration::from_micros(200);
            wait_until(due);
            l.record(Instant::now() - due);
        }
        assert_eq!(l.counts().iter().sum::<u64>(), 20);
        assert!(l.summary().starts_with("20 replies late by"), "{}", l.summary());
    }
}
