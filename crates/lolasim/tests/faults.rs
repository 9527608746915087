//! The real-time cadences and fault injection against a raw client: maps every cycle, one
//! client at a time, restart, stall, late maps, waiting for answers.

mod common;

use std::time::Duration;

use common::{hold, socket_path, Client, PATIENCE};
use naobroker_lolasim::{Cadence, LolaSim, Options, SimError};

#[test]
fn real_time_sends_every_cycle_answered_or_not() {
    let path = socket_path("real-time");
    let sim = LolaSim::start(Options::at(&path)).unwrap();
    let mut client = Client::connect(&path);
    for _ in 0..20 {
        client.read_map();
        client.answer(&hold(0.0));
    }
    sim.wait_until(PATIENCE, |stats| stats.answers == 20).unwrap();
    // Not answering: maps keep coming, each unanswered one counted missing.
    for _ in 0..10 {
        client.read_map();
    }
    let stats = sim.wait_until(PATIENCE, |stats| stats.missing >= 5).unwrap();
    assert_eq!(stats.answers, 20);
}

#[test]
fn a_second_client_is_closed_at_once() {
    let path = socket_path("second-client");
    let sim = LolaSim::start(Options::at(&path).stepped()).unwrap();
    let mut first = Client::connect(&path);
    sim.wait_for_client(PATIENCE).unwrap();
    let mut second = Client::connect(&path);
    assert!(second.closed(), "the second client reads end of file");
    assert_eq!(sim.wait_until(PATIENCE, |stats| stats.refused == 1).unwrap().connections, 1);
    sim.step_and_answer_with(&mut first);
}

#[test]
fn a_restart_closes_the_connection_and_listens_again() {
    let path = socket_path("restart");
    let sim = LolaSim::start(Options::at(&path).stepped()).unwrap();
    let mut client = Client::connect(&path);
    sim.wait_for_client(PATIENCE).unwrap();
    sim.step_and_answer_with(&mut client);
    sim.restart(Duration::from_millis(20)).unwrap();
    assert!(client.closed(), "the client sees the connection end");
    let mut client = Client::connect(&path);
    sim.wait_for_client(PATIENCE).unwrap();
    sim.step_and_answer_with(&mut client);
    let stats = sim.stats();
    assert_eq!((stats.restarts, stats.connections, stats.answers), (1, 2, 2));
}

#[test]
fn a_stall_sends_nothing_until_it_ends() {
    let path = socket_path("stall");
    let sim = LolaSim::start(Options::at(&path)).unwrap();
    let mut client = Client::connect(&path);
    client.read_map();
    sim.stall(Duration::from_secs(3600));
    let stalled = sim.wait_until(PATIENCE, |stats| stats.stalled_cycles >= 1).unwrap();
    let later = sim.wait_until(PATIENCE, |stats| stats.stalled_cycles >= stalled.stalled_cycles + 4).unwrap();
    assert_eq!(later.sent, stalled.sent, "no map during the stall");
    assert!(later.cycles > stalled.cycles, "the body goes on");
    sim.stall(Duration::ZERO);
    sim.wait_until(PATIENCE, |stats| stats.sent > later.sent).unwrap();
}

#[test]
fn delayed_maps_still_come_one_per_cycle() {
    let path = socket_path("delayed");
    let sim = LolaSim::start(Options::at(&path)).unwrap();
    let mut client = Client::connect(&path);
    sim.wait_for_client(PATIENCE).unwrap();
    sim.delay_maps(Duration::from_millis(8), 3);
    let stats = sim.wait_until(PATIENCE, |stats| stats.delayed_cycles == 3).unwrap();
    for _ in 0..stats.sent + 2 {
        client.read_map();
    }
}

#[test]
fn waiting_for_answers_counts_no_missing_map() {
    let path = socket_path("waiting");
    let cadence = Cadence::RealTimeWaitingForAnswers { timeout: Duration::from_secs(3600) };
    let sim = LolaSim::start(Options { cadence, ..Options::at(&path) }).unwrap();
    let mut client = Client::connect(&path);
    for _ in 0..3 {
        client.read_map();
        // Several cycles' worth: a free-running LoLA would have sent more maps meanwhile.
        std::thread::sleep(Duration::from_millis(50));
        assert!(client.nothing_pending(), "the next map waits for this answer");
        client.answer(&hold(0.0));
    }
    let stats = sim.wait_until(PATIENCE, |stats| stats.answers == 3).unwrap();
    assert_eq!((stats.missing, stats.late), (0, 3));
}

#[test]
fn a_served_socket_is_not_taken_over() {
    let path = socket_path("served");
    let _first = LolaSim::start(Options::at(&path)).unwrap();
    assert!(matches!(LolaSim::start(Options::at(&path)), Err(SimError::AlreadyServed(_))));
}

/// One stepped cycle answered by `client`.
trait StepWith {
    fn step_and_answer_with(&self, client: &mut Client);
}

impl StepWith for LolaSim {
    fn step_and_answer_with(&self, client: &mut Client) {
        self.step().unwrap();
        client.read_map();
        client.answer(&hold(0.0));
        self.wait_answer(PATIENCE).unwrap();
    }
}
