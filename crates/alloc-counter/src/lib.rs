//! For tests that prove a real-time thread never allocates: a global allocator that counts
//! the allocations, reallocations and frees of each thread that started counting.
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOCATOR: naobroker_alloc_counter::Counting = naobroker_alloc_counter::Counting;
//!
//! // on the thread under test, once it reached its steady state:
//! naobroker_alloc_counter::start_counting();
//! // ... later, on that same thread:
//! let allocations = naobroker_alloc_counter::counted();
//! ```
// A global allocator is an unsafe trait: this one only counts and forwards every call
// to the system allocator, unchanged.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    /// Allocations and frees made by this thread since it started counting.
    static COUNT: Cell<Option<u64>> = const { Cell::new(None) };
}

fn note() {
    // `try_with`: an allocation while the thread's locals are being torn down is not counted.
    let _ = COUNT.try_with(|count| {
        if let Some(n) = count.get() {
            count.set(Some(n + 1));
        }
    });
}

/// From now on, count this thread's allocations (a second call keeps the count).
pub fn start_counting() {
    COUNT.with(|count| {
        if count.get().is_none() {
            count.set(Some(0));
        }
    });
}

/// This thread's allocations and frees since [`start_counting`] (0 before it).
pub fn counted() -> u64 {
    COUNT.with(|count| count.get().unwrap_or(0))
}

/// What a new thread that starts counting sees of one boxed allocation and its free: a
/// test binary checks with it that its global allocator is [`Counting`], or its proofs of
/// zero allocations could not fail.
pub fn allocations_seen_on_a_new_thread() -> u64 {
    std::thread::spawn(|| {
        start_counting();
        drop(std::hint::black_box(Box::new([1u8; 64])));
        counted()
    })
    .join()
    .expect("the probe thread does not panic")
}

/// The counting allocator: install it with `#[global_allocator]` in a test binary.
pub struct Counting;

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note();
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}
