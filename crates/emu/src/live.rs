//! Live statistics of a served card, by wall-clock second (what a client
//! such as fio measures): each request's size and modelled latency are
//! counted in the second it arrived; when a second ends it is summed up
//! with the card's own counters over it (GC, write amplification, the
//! dies' busy share and so the modelled power, the buffer's fill).

use card::{Device, DeviceCounters};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// One whole second of a served card.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Second {
    /// Seconds since the card started serving: this one is [index, index+1).
    pub index: u64,
    /// When the second began, in milliseconds since the Unix epoch (to
    /// line it up with a client's own log).
    pub unix_ms: u64,
    pub read_iops: u64,
    pub write_iops: u64,
    pub read_mb_s: f64,
    pub write_mb_s: f64,
    /// Modelled latency of the requests that arrived in the second
    /// (reads, writes, flushes, trims), in microseconds; none without any.
    pub latency_avg_us: Option<f64>,
    pub latency_p99_us: Option<f64>,
    pub latency_max_us: Option<f64>,
    pub errors: u64,
    /// 4 KiB slots garbage collection moved, and the write amplification
    /// (NAND slots written, parity not counted, per host slot) over the
    /// second; none where the host wrote nothing.
    pub gc_slots_moved: u64,
    pub write_amplification: Option<f64>,
    /// The dies' busy share of the card's time over the second.
    pub die_busy: f64,
    /// The write buffers' fill at the second's end.
    pub buffer_fill: f64,
    /// Modelled draw over the second, where the data sheet gives the card's.
    pub power_watts: Option<f64>,
}

/// Totals since the card started serving.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    pub requests: u64,
    pub errors: u64,
    pub reads: u64,
    pub writes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
}

/// The second being counted and the last whole one.
pub struct Live {
    started: Instant,
    started_unix_ms: u64,
    index: u64,
    hist: Histogram<u64>,
    now: Second,
    latency_sum_ns: u128,
    latency_max_ns: u64,
    bytes_read: u64,
    bytes_written: u64,
    /// The card's counters, time and die time at the second's start.
    base: (DeviceCounters, u64, u64),
    last: Option<Second>,
    pub totals: Totals,
}

impl Live {
    pub fn new(started: Instant, device: &Device) -> Live {
        let since = started.elapsed();
        let unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().saturating_sub(since);
        Live {
            started,
            started_unix_ms: unix.as_millis() as u64,
            index: 0,
            hist: Histogram::new_with_bounds(1, 3_600_000_000_000, 2).expect("valid bounds"),
            now: Second::default(),
            latency_sum_ns: 0,
            latency_max_ns: 0,
            bytes_read: 0,
            bytes_written: 0,
            base: (device.counters(), 0, device.die_busy_by(0)),
            last: None,
            totals: Totals::default(),
        }
    }

    /// The second `at` falls in, since the start.
    fn index_of(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.started).as_secs()
    }

    /// Ends the seconds before `at`'s (the card's time `card_ns` then):
    /// the last whole one is kept.
    pub fn roll(&mut self, at: Instant, device: &Device, card_ns: u64) {
        let i = self.index_of(at);
        if i <= self.index {
            return;
        }
        let done = self.close(device, card_ns);
        // Seconds with nothing in them in between: the last is empty.
        let idle = |index| Second {
            index,
            unix_ms: self.started_unix_ms + index * 1000,
            buffer_fill: done.buffer_fill,
            power_watts: power_idle(device),
            ..Second::default()
        };
        self.last = Some(if i > self.index + 1 { idle(i - 1) } else { done });
        self.index = i;
        self.base = (device.counters(), card_ns, device.die_busy_by(card_ns));
    }

    /// Sums up the second being counted.
    fn close(&mut self, device: &Device, card_ns: u64) -> Second {
        let (c0, t0, busy0) = &self.base;
        let c = device.counters();
        let span = card_ns.saturating_sub(*t0) as f64 * device.dies() as f64;
        let busy = if span > 0.0 { ((device.die_busy_by(card_ns).saturating_sub(*busy0)) as f64 / span).min(1.0) } else { 0.0 };
        let host = c.host_slots_written - c0.host_slots_written;
        let gc = c.gc_slots_moved - c0.gc_slots_moved;
        let n = self.hist.len();
        let mut s = std::mem::take(&mut self.now);
        s.index = self.index;
        s.unix_ms = self.started_unix_ms + self.index * 1000;
        s.read_mb_s = self.bytes_read as f64 / 1e6;
        s.write_mb_s = self.bytes_written as f64 / 1e6;
        if n > 0 {
            let max = self.latency_max_ns as f64 / 1e3;
            s.latency_avg_us = Some(self.latency_sum_ns as f64 / n as f64 / 1e3);
            // The histogram's bucket may reach past the largest value.
            s.latency_p99_us = Some((self.hist.value_at_quantile(0.99) as f64 / 1e3).min(max));
            s.latency_max_us = Some(max);
        }
        s.gc_slots_moved = gc;
        s.write_amplification = (host > 0).then(|| (host + gc) as f64 / host as f64);
        s.die_busy = busy;
        s.buffer_fill = device.buffer_fill(card_ns);
        s.power_watts = device.profile.power.map(|p| p.watts(busy));
        self.hist.reset();
        self.latency_sum_ns = 0;
        self.latency_max_ns = 0;
        self.bytes_read = 0;
        self.bytes_written = 0;
        s
    }

    /// A request that arrived at `at`: whether it read or wrote, its
    /// bytes, its modelled latency, whether it failed.
    pub fn record(&mut self, read: bool, write: bool, bytes: u64, latency_ns: u64, failed: bool) {
        self.totals.requests += 1;
        if failed {
            self.now.errors += 1;
            self.totals.errors += 1;
            return;
        }
        if read {
            self.now.read_iops += 1;
            self.bytes_read += bytes;
            self.totals.reads += 1;
            self.totals.bytes_read += bytes;
        }
        if write {
            self.now.write_iops += 1;
            self.bytes_written += bytes;
            self.totals.writes += 1;
            self.totals.bytes_written += bytes;
        }
        let _ = self.hist.record(latency_ns.max(1));
        self.latency_sum_ns += latency_ns as u128;
        self.latency_max_ns = self.latency_max_ns.max(latency_ns);
    }

    /// The last whole second, if one has ended.
    pub fn last(&self) -> Option<&Second> {
        self.last.as_ref()
    }

    /// The dies' busy share over the last whole second (0 before one).
    pub fn busy(&self) -> f64 {
        self.last.as_ref().map_or(0.0, |s| s.die_busy)
    }
}

fn power_idle(device: &Device) -> Option<f64> {
    device.profile.power.map(|p| p.watts(0.0))
}
