//! The speed benchmark's baseline: the least work any page-mapped FTL
//! simulation does per I/O, run beside the simulator so that its speed can
//! be given as a ratio (the machine is shared and its speed varies; the
//! ratio varies much less). Timed by the caller: the lab reads no clock.

/// Per "I/O", one draw of the simulator's PRNG and one random
/// read-modify-write of a 4-byte entry of `map` (as large as the card's
/// L2P).
pub fn baseline_work(map: &mut [u32], ios: u64) {
    assert!(!map.is_empty(), "the baseline needs a map");
    let mut rng = sim::Rng::new(1);
    for i in 0..ios {
        let e = rng.below(map.len() as u64) as usize;
        map[e] = map[e].wrapping_add(i as u32);
    }
    std::hint::black_box(&map);
}
