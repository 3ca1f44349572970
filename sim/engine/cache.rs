//! A hint to the processor's caches: a value about to be read, fetched while other work goes on.

/// Asks the processor to bring the cache lines holding `value` into its caches, without waiting
/// for them and without reading them: a hint that changes no result, only when the memory
/// arrives. Nothing on other architectures.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        const LINE: usize = 64;
        let first = (value as *const T).cast::<i8>();
        // SSE is part of x86_64, and a prefetch reads nothing, so no address can fault; these are
        // the first and the last byte of a value in memory.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(first) };
        let last = first.wrapping_add(size_of::<T>().saturating_sub(1));
        if (first as usize) / LINE != (last as usize) / LINE {
            unsafe { _mm_prefetch::<_MM_HINT_T0>(last) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
