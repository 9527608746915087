//! Counting allocator: the peak of live bytes on this thread while a case runs.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

#[derive(Clone, Copy)]
struct Meter {
    counting: bool,
    live: isize,
    peak: isize,
}

thread_local! {
    static METER: Cell<Meter> = const { Cell::new(Meter { counting: false, live: 0, peak: 0 }) };
}

/// Count `grown` bytes coming, then `shrunk` going: a reallocation holds both at its peak.
fn note(grown: usize, shrunk: usize) {
    let _ = METER.try_with(|meter| {
        let mut state = meter.get();
        if state.counting {
            state.live += grown as isize;
            state.peak = state.peak.max(state.live);
            state.live -= shrunk as isize;
            meter.set(state);
        }
    });
}

struct CountingAllocator;

// The one exception to `deny(unsafe_code)` here: a global allocator is an unsafe trait. This
// one forwards every call to the system allocator unchanged and only counts sizes.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size(), 0);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(0, layout.size());
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size, layout.size());
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Run `work` and return its result with the most bytes it held allocated at once.
pub(crate) fn peak_bytes<T>(work: impl FnOnce() -> T) -> (T, usize) {
    METER.with(|meter| meter.set(Meter { counting: true, live: 0, peak: 0 }));
    let result = work();
    let peak = METER.with(|meter| {
        let state = meter.get();
        meter.set(Meter { counting: false, ..state });
        state.peak
    });
    (result, peak.max(0) as usize)
}
