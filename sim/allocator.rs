//! The global allocator: mimalloc, asked for plain `mi_malloc` where that is aligned enough.
//!
//! `mimalloc::MiMalloc` asks `mi_malloc_aligned` for every allocation. For the strings a fleet is
//! mostly made of (alignment 1, sizes that are not powers of two), mimalloc's aligned path checks
//! the alignment on its fast path and, whenever the page at hand has no free block left (every few
//! allocations while a fleet is loaded: pages hand out their blocks a few at a time), takes its
//! over-allocating fallback instead of the plain one. Every block `mi_malloc` returns is aligned to
//! a machine word at least (its size classes are whole words, and a page's blocks start aligned
//! to 16 bytes), so an alignment up to a word is asked of `mi_malloc`, as the system allocator's
//! `GlobalAlloc` asks `malloc` for alignments it guarantees; a larger one still goes to
//! `MiMalloc`. `mi_free` frees blocks of either.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys::{mi_free, mi_malloc, mi_realloc, mi_zalloc};
use mimalloc::MiMalloc;

/// The alignment every `mi_malloc` block has.
const WORD: usize = std::mem::size_of::<usize>();

pub struct Allocator;

// SAFETY: each method hands the layout to a mimalloc function that returns a block of at least its
// size and alignment (`mi_malloc`, `mi_zalloc` and `mi_realloc` where the alignment is at most a
// word, which every mimalloc block has; `MiMalloc`'s aligned functions otherwise), or null.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= WORD {
            // SAFETY: mimalloc's malloc, for any size.
            unsafe { mi_malloc(layout.size()).cast() }
        } else {
            // SAFETY: the caller's contract, passed on.
            unsafe { MiMalloc.alloc(layout) }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= WORD {
            // SAFETY: as `alloc`, zeroed.
            unsafe { mi_zalloc(layout.size()).cast() }
        } else {
            // SAFETY: the caller's contract, passed on.
            unsafe { MiMalloc.alloc_zeroed(layout) }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from this allocator, so from mimalloc.
        unsafe { mi_free(ptr.cast::<c_void>()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= WORD {
            // SAFETY: `ptr` came from mimalloc; the new block keeps a word's alignment.
            unsafe { mi_realloc(ptr.cast::<c_void>(), new_size).cast() }
        } else {
            // SAFETY: the caller's contract, passed on.
            unsafe { MiMalloc.realloc(ptr, layout, new_size) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of every small size and alignment, made, grown and freed through the allocator: each
    /// is aligned as asked and keeps its bytes when it grows.
    #[test]
    fn blocks_are_aligned_as_asked_and_keep_their_bytes_when_they_grow() {
        let allocator = Allocator;
        let mut blocks = Vec::new();
        for size in 1..=300usize {
            for align in [1, 2, 4, 8, 16, 32, 64] {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: a layout of non-zero size; each block is freed below with its layout.
                let (ptr, zeroed) = unsafe { (allocator.alloc(layout), allocator.alloc_zeroed(layout)) };
                assert!(!ptr.is_null() && !zeroed.is_null());
                assert_eq!(ptr as usize % align, 0, "size {size}, alignment {align}");
                assert_eq!(zeroed as usize % align, 0, "zeroed: size {size}, alignment {align}");
                // SAFETY: `zeroed` holds `size` bytes; `ptr` holds `size` bytes, written before read.
                unsafe {
                    assert!(std::slice::from_raw_parts(zeroed, size).iter().all(|&b| b == 0));
                    std::ptr::write_bytes(ptr, size as u8, size);
                }
                blocks.push((ptr, layout));
                blocks.push((zeroed, layout));
            }
        }
        for (ptr, layout) in blocks.iter_mut().step_by(2) {
            let grown = layout.size() * 3 + 5;
            // SAFETY: `ptr` came from this allocator with `layout`; the new size is not zero.
            let moved = unsafe { allocator.realloc(*ptr, *layout, grown) };
            assert!(!moved.is_null());
            assert_eq!(moved as usize % layout.align(), 0, "grown: {layout:?}");
            // SAFETY: the first `layout.size()` bytes were kept.
            let kept = unsafe { std::slice::from_raw_parts(moved, layout.size()) };
            assert!(kept.iter().all(|&b| b == layout.size() as u8), "grown: {layout:?}");
            *ptr = moved;
            *layout = Layout::from_size_align(grown, layout.align()).unwrap();
        }
        for (ptr, layout) in blocks {
            // SAFETY: each block came from this allocator with this layout, and is freed once.
            unsafe { allocator.dealloc(ptr, layout) };
        }
    }
}
