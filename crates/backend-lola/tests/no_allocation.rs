//! Proof that the DCM's cycle thread does not allocate (nor free) in steady state with the
//! `lola` backend clocking it: sensor maps read, late and malformed maps answered, actuator
//! maps written, while requests and hooks flow through the cycle.

mod lola_peer;

use std::sync::atomic::{AtomicU64, Ordering};

use naobroker_alloc_counter::{allocations_seen_on_a_new_thread, counted, start_counting, Counting};
use naobroker_backend_lola::LinkLossPolicy;
use naobroker_dcm::core::{Request, TimedCommand, UpdateType};
use naobroker_dcm::cycle::{Phase, RequestChannel};

/// The cycle thread's count, copied out by its hooks every cycle.
static CYCLE_THREAD_COUNT: AtomicU64 = AtomicU64::new(0);

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Count on the cycle thread from inside: its hooks run on it.
fn add_counting_hooks(channel: &mut RequestChannel) {
    channel
        .add_hook(
            Phase::Pre,
            "count",
            Box::new(|_| {
                start_counting();
                CYCLE_THREAD_COUNT.store(counted(), Ordering::SeqCst);
            }),
        )
        .unwrap();
    channel
        .add_hook(Phase::Post, "count", Box::new(|_| CYCLE_THREAD_COUNT.store(counted(), Ordering::SeqCst)))
        .unwrap();
}

/// A request of 20 timed commands for `actuator` from `now` on.
fn request(actuator: usize, now: i32, merge: bool) -> Request {
    let mut request = Request::default();
    let commands = (1..=20).map(|i| TimedCommand { time: now + 5 * i, value: 0.01 * f64::from(i) }).collect();
    request.push(actuator, if merge { UpdateType::Merge } else { UpdateType::ClearAfter }, commands);
    request
}

/// The `lola` backend against the tests' LoLA, in lockstep: a map, its answer. Every 10th
/// time two maps wait together (the older answered with the last commands), every 25th a
/// malformed map comes first (answered the same way).
fn run_lola() -> u64 {
    CYCLE_THREAD_COUNT.store(0, Ordering::SeqCst);
    let mut peer = lola_peer::Peer::new("no-allocation", true);
    let mut bench = lola_peer::Bench::start(lola_peer::config(&peer, LinkLossPolicy::Relax));
    add_counting_hooks(&mut bench.channel);
    peer.accept();
    let head = bench.model.actuator("HeadYaw/Position/Actuator/Value").unwrap();
    let map = lola_peer::map_bytes(&lola_peer::sensor_map(0.0));
    let malformed = [0x81, 0xa6, b'A', b'n', b'g', b'l', b'e', b's', 0xc0];
    let mut sent = 0;
    for round in 1..=400 {
        if bench.channel.send(request(head, bench.shared.now(), round % 2 == 0)).is_ok() {
            sent += 1;
        }
        let mut answers = 1;
        if round % 25 == 0 {
            peer.send(&malformed);
            answers += 1;
        }
        if round % 10 == 0 {
            peer.send(&[map, map].concat());
            answers += 1;
        } else {
            peer.send(&map);
        }
        for _ in 0..answers {
            peer.answer();
        }
    }
    bench.wait_for_cycle(400);
    let link = bench.snapshot();
    assert!(link.late_cycles >= 40 && link.malformed == 16, "{link:?}");
    assert!(sent > 100, "requests flowed while the cycle ran ({sent})");
    let allocations = CYCLE_THREAD_COUNT.load(Ordering::SeqCst);
    drop(bench);
    allocations
}

#[test]
fn the_cycle_thread_does_not_allocate_in_steady_state() {
    assert_eq!(run_lola(), 0, "allocations on the cycle thread (lola backend)");
}

/// The probe itself must see an allocation when one happens on the watched thread,
/// or the test above could not fail.
#[test]
fn the_probe_sees_allocations_on_the_watched_thread() {
    assert!(allocations_seen_on_a_new_thread() >= 2);
}
