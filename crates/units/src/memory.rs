//! Memory the simulator reads at random: vectors backed by huge pages and
//! a hint to fetch a line ahead of its use.

/// A vector of `n` copies of `value` whose memory the kernel is asked to
/// back with huge pages: for tables read at random (a card's maps, its
/// blocks' error state), where with 4 KiB pages nearly every access would
/// also miss the TLB. A hint only; where it is not granted, the vector is
/// an ordinary one.
pub fn vec_huge<T: Copy>(n: usize, value: T) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    #[cfg(target_os = "linux")]
    {
        let bytes = n * std::mem::size_of::<T>();
        if bytes >= 4 << 20 {
            let page = 4096usize;
            let start = (v.as_mut_ptr() as usize).div_ceil(page) * page;
            let end = (v.as_mut_ptr() as usize + bytes) / page * page;
            if end > start {
                // SAFETY: the range lies inside the vector's own allocation,
                // which is not yet touched; MADV_HUGEPAGE only advises.
                unsafe {
                    libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
                }
            }
        }
    }
    v.resize(n, value);
    v
}

/// A hint to the CPU to bring `r`'s cache line in; no effect on state.
#[inline(always)]
pub fn prefetch_read<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults, even on a bad address,
    // and here the address is a valid reference.
    unsafe {
        core::arch::x86_64::_mm_prefetch(r as *const T as *const i8, core::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}
