//! The scaffold's cadences, on real threads: no assertion depends on how fast they run.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::*;
use crate::report_queue;

/// Sends every tick and whether the thread got real-time priority; sleeps `busy` per cycle.
struct Recorder {
    ticks: mpsc::Sender<Tick>,
    realtime: mpsc::Sender<bool>,
    busy: Duration,
}

impl Cycle for Recorder {
    fn started(&mut self, realtime: bool) {
        let _ = self.realtime.send(realtime);
    }

    fn run(&mut self, tick: Tick) {
        let _ = self.ticks.send(tick);
        std::thread::sleep(self.busy);
    }
}

const SPEC: ThreadSpec = ThreadSpec {
    name: "rt-test",
    role: "test cycle",
    priority: None,
    cpu: None,
    keep_cpu_awake: false,
    mlock: false,
};

fn start(cadence: Cadence, busy: Duration) -> (RtThread, mpsc::Receiver<Tick>, mpsc::Receiver<bool>) {
    let (ticks, ticked) = mpsc::channel();
    let (realtime, answered) = mpsc::channel();
    let thread = RtThread::spawn(SPEC, cadence, Arc::default(), Recorder { ticks, realtime, busy }).unwrap();
    (thread, ticked, answered)
}

fn wait_until(what: &str, condition: impl Fn() -> bool) {
    let started = Instant::now();
    while !condition() {
        assert!(started.elapsed() < Duration::from_secs(20), "{what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn numbers(ticked: &mpsc::Receiver<Tick>) -> Vec<u64> {
    ticked.try_iter().map(|tick| tick.number).collect()
}

#[test]
fn granted_cycles_run_each_in_order() {
    let (thread, ticked, answered) = start(Cadence::Granted, Duration::ZERO);
    assert!(!answered.recv().unwrap(), "no priority asked");
    let pace = Arc::clone(thread.pace());
    assert_eq!(pace.grant(3), 3);
    pace.wait_for(3);
    assert_eq!(pace.grant(2), 5);
    pace.wait_for(5);
    assert_eq!(numbers(&ticked), [1, 2, 3, 4, 5]);
    assert_eq!((pace.done(), pace.skipped(), pace.overruns()), (5, 0, 0));
}

#[test]
fn a_follower_runs_the_latest_request_and_counts_what_it_jumped() {
    let (thread, ticked, _) = start(Cadence::Following, Duration::ZERO);
    let pace = Arc::clone(thread.pace());
    pace.request(1);
    pace.wait_for(1);
    pace.request(5);
    pace.wait_for(5);
    pace.request(3);
    pace.request(6);
    pace.wait_for(6);
    let ticks: Vec<(u64, u64)> = ticked.try_iter().map(|tick| (tick.number, tick.skipped)).collect();
    assert_eq!(ticks, [(1, 0), (5, 3), (6, 0)], "an older request is ignored");
    assert_eq!((pace.done(), pace.skipped()), (6, 3));
}

#[test]
fn a_periodic_cycle_longer_than_its_period_overruns_and_continues_from_the_present() {
    let cadence = Cadence::Periodic { start_ns: monotonic_ns(), period_ns: 1_000_000 };
    let (thread, ticked, _) = start(cadence, Duration::from_millis(3));
    let pace = Arc::clone(thread.pace());
    wait_until("ten cycles ran", || pace.done() >= 10);
    drop(thread);
    let ticks: Vec<Tick> = ticked.try_iter().collect();
    assert!(ticks.iter().all(|tick| tick.lateness_ns >= 0), "never woken before the deadline");
    // Each cycle ends at least 3 ms after its deadline: every one overruns and skips.
    assert_eq!(pace.overruns(), ticks.len() as u64);
    assert!(pace.skipped() >= pace.overruns());
    assert!(ticks.windows(2).all(|pair| pair[1].number == pair[0].number + 1 + pair[1].skipped), "{ticks:?}");
    assert!(ticks[1..].iter().all(|tick| tick.skipped > 0), "{ticks:?}");
}

#[test]
fn a_periodic_cycle_within_its_period_keeps_its_deadlines() {
    let cadence = Cadence::Periodic { start_ns: monotonic_ns(), period_ns: 2_000_000 };
    let (thread, ticked, _) = start(cadence, Duration::ZERO);
    let pace = Arc::clone(thread.pace());
    wait_until("five cycles ran", || pace.done() >= 5);
    drop(thread);
    let ticks: Vec<Tick> = ticked.try_iter().collect();
    let numbers: Vec<u64> = ticks.iter().map(|tick| tick.number).collect();
    // A loaded machine may make the thread miss deadlines (perhaps after its last cycle):
    // the numbers still count every deadline, run or skipped.
    assert!(numbers.windows(2).all(|pair| pair[1] > pair[0]), "{numbers:?}");
    assert!(*numbers.last().unwrap() <= numbers.len() as u64 + pace.skipped(), "{numbers:?}");
    assert!(ticks.iter().all(|tick| tick.lateness_ns >= 0));
}

/// A hardware that has a cycle ready whenever the test sends how many it missed before it.
struct ScriptedHardware {
    ready: mpsc::Receiver<u64>,
    ticks: mpsc::Sender<Tick>,
}

impl Cycle for ScriptedHardware {
    fn run(&mut self, tick: Tick) {
        let _ = self.ticks.send(tick);
    }

    fn wait_hardware(&mut self, timeout: Duration) -> Option<u64> {
        self.ready.recv_timeout(timeout).ok()
    }
}

fn start_hardware() -> (RtThread, mpsc::Sender<u64>, mpsc::Receiver<Tick>) {
    let (ready, waiting) = mpsc::channel();
    let (ticks, ticked) = mpsc::channel();
    let cycle = ScriptedHardware { ready: waiting, ticks };
    let thread = RtThread::spawn(SPEC, Cadence::Hardware, Arc::default(), cycle).unwrap();
    (thread, ready, ticked)
}

#[test]
fn the_hardware_clocks_each_cycle_and_what_it_had_while_the_thread_was_late_counts_as_skipped() {
    let (thread, ready, ticked) = start_hardware();
    let pace = Arc::clone(thread.pace());
    ready.send(0).unwrap();
    pace.wait_for(1);
    ready.send(2).unwrap();
    pace.wait_for(4);
    ready.send(0).unwrap();
    pace.wait_for(5);
    let ticks: Vec<(u64, u64)> = ticked.try_iter().map(|tick| (tick.number, tick.skipped)).collect();
    assert_eq!(ticks, [(1, 0), (4, 2), (5, 0)]);
    assert_eq!((pace.done(), pace.skipped(), pace.overruns()), (5, 2, 0));
}

#[test]
fn a_silent_hardware_runs_no_cycle_and_the_thread_still_stops() {
    let (thread, _ready, ticked) = start_hardware();
    let pace = Arc::clone(thread.pace());
    let (dropped, joined) = mpsc::channel();
    std::thread::spawn(move || {
        drop(thread);
        let _ = dropped.send(());
    });
    joined.recv_timeout(Duration::from_secs(20)).expect("the thread stops within its wait slices");
    assert_eq!((pace.done(), ticked.try_iter().count()), (0, 0));
}

#[test]
fn reports_fill_the_queue_then_come_back_and_wake_the_reader() {
    let (mut reporter, mut reader) = report_queue::<u32>(2).unwrap();
    assert_eq!(reporter.room(), 2);
    assert_eq!((reporter.push(1), reporter.push(2), reporter.push(3)), (Ok(()), Ok(()), Err(3)));
    let mut byte = [0u8; 8];
    assert!(reader.wake.recv(&mut byte).is_err(), "nothing to read before a wake-up");
    reporter.wake();
    assert_eq!(reader.wake.recv(&mut byte).unwrap(), 1);
    assert_eq!((reader.queue.pop(), reader.queue.pop(), reader.queue.pop().is_err()), (Ok(1), Ok(2), true));
}
