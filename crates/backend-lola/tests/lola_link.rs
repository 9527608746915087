//! The `lola` backend's link: one actuator map per sensor map, maps that waited answered
//! with the last commands, malformed and oversized maps counted and never fatal, LoLA
//! absent at start, closing, stalling, and the policy when the link comes back.

mod lola_peer;

use lola_peer::{config, sensor_map, wait_until, Bench, Peer, START_TIME_MS};
use naobroker_backend_lola::LinkLossPolicy;
use naobroker_dcm::cycle::Phase;
use naobroker_hardware::link::{LinkLoss, LinkState};

/// A bench whose HeadYaw target shows the cycle number (/100 rad) in every answer.
fn numbered(label: &str) -> (Bench, Peer) {
    let mut peer = Peer::new(label, true);
    let mut bench = Bench::start(config(&peer, LinkLossPolicy::Hold));
    let yaw = bench.model.actuator("HeadYaw/Position/Actuator/Value").unwrap();
    let hook = bench
        .channel
        .add_hook(
            Phase::Pre,
            "numbered",
            Box::new(move |cycle| {
                cycle.set(yaw, cycle.cycle as f64 / 100.0);
            }),
        )
        .unwrap();
    wait_until("the hook is in the cycle", || {
        bench.shared.stats.hooks.iter().any(|stats| stats.id() == hook)
    });
    peer.accept();
    (bench, peer)
}

/// The cycle number an answer carries.
fn number(answer: &naobroker_lola::ActuatorMap) -> u64 {
    (f64::from(answer.position[0]) * 100.0).round() as u64
}

#[test]
fn each_sensor_map_gets_one_answer_and_maps_that_waited_get_the_last_one() {
    let (bench, mut peer) = numbered("late");
    peer.send_map(&sensor_map(0.0));
    let (first, first_bytes) = peer.answer();
    assert_eq!(number(&first), 1);
    // Three maps at once: the cycle thread finds them waiting together.
    let map = lola_peer::map_bytes(&sensor_map(1.0));
    peer.send(&[map, map, map].concat());
    let answers: Vec<_> = (0..3).map(|_| peer.answer()).collect();
    assert_eq!(answers[0].1, first_bytes, "the older maps get the last actuator map sent");
    assert_eq!(answers[1].1, first_bytes);
    assert_eq!(number(&answers[2].0), 4, "the newest runs cycle 4: the robot had 4 cycles");
    bench.wait_for_cycle(4);
    assert_eq!(bench.shared.now(), START_TIME_MS + 4 * 12, "DCM time counts every sensor map");
    let link = bench.snapshot();
    assert_eq!((link.maps, link.answers, link.late_cycles), (4, 4, 2));
    assert_eq!(bench.shared.stats.overruns.load(std::sync::atomic::Ordering::Relaxed), 1);
    peer.send_map(&sensor_map(2.0));
    assert_eq!(number(&peer.answer().0), 5);
}

#[test]
fn a_malformed_map_is_counted_and_answered_and_the_stream_goes_on() {
    let (bench, mut peer) = numbered("malformed");
    peer.send_map(&sensor_map(0.0));
    let (_, last) = peer.answer();
    // {"Position": "x"}: a map, but no sensor map.
    let mut malformed = vec![0x81, 0xa8];
    malformed.extend_from_slice(b"Position");
    malformed.extend_from_slice(&[0xa1, b'x']);
    peer.send(&malformed);
    assert_eq!(peer.answer().1, last, "answered with the last commands");
    peer.send_map(&sensor_map(1.0));
    assert_eq!(number(&peer.answer().0), 2);
    let link = bench.snapshot();
    assert_eq!((link.malformed, link.oversized, link.reconnects, link.state), (1, 0, 0, LinkState::Up));
}

#[test]
fn an_oversized_map_or_bytes_that_are_no_map_reset_the_connection_which_comes_back() {
    let (bench, mut peer) = numbered("oversized");
    peer.send_map(&sensor_map(0.0));
    peer.answer();
    // {"Pad": <bin32 of 64 KiB>}: its header alone says it cannot be a map LoLA sends.
    peer.send(&[0x81, 0xa3, b'P', b'a', b'd', 0xc6, 0x00, 0x01, 0x00, 0x00, 0, 0, 0, 0]);
    assert!(peer.closed_by_backend());
    peer.accept();
    wait_until("reconnected", || bench.snapshot().reconnects == 1);
    let link = bench.snapshot();
    assert_eq!((link.oversized, link.loss), (1, LinkLoss::Oversized));
    peer.send_map(&sensor_map(1.0));
    assert_eq!(number(&peer.answer().0), 2);
    // 0xc1 starts no MessagePack value: the stream cannot be resynchronized.
    peer.send(&[0xc1]);
    assert!(peer.closed_by_backend());
    peer.accept();
    wait_until("reconnected again", || bench.snapshot().reconnects == 2);
    let link = bench.snapshot();
    assert_eq!((link.malformed, link.loss), (1, LinkLoss::Malformed));
    peer.send_map(&sensor_map(2.0));
    assert_eq!(number(&peer.answer().0), 3);
}

#[test]
fn lola_absent_at_start_is_waited_for_and_found() {
    let mut peer = Peer::new("absent", false);
    let bench = Bench::start(config(&peer, LinkLossPolicy::Hold));
    wait_until("a failed attempt is reported", || bench.snapshot().connect_error.is_some());
    let link = bench.snapshot();
    assert_eq!((link.state, link.connect_error), (LinkState::Absent, Some(nix::errno::Errno::ENOENT as i32)));
    assert_eq!(
        (bench.shared.cycles(), bench.shared.now()),
        (0, START_TIME_MS),
        "no cycle, time stands still"
    );
    peer.listen();
    peer.accept();
    wait_until("connected", || bench.snapshot().state == LinkState::Waiting);
    peer.send_map(&sensor_map(0.0));
    peer.answer();
    bench.wait_for_cycle(1);
    let link = bench.snapshot();
    assert_eq!((link.state, link.connect_error, link.reconnects), (LinkState::Up, None, 0));
}

#[test]
fn lola_closing_is_followed_by_a_reconnection() {
    let (bench, mut peer) = numbered("restart");
    peer.send_map(&sensor_map(0.0));
    peer.answer();
    peer.close();
    peer.accept();
    wait_until("reconnected", || bench.snapshot().reconnects == 1);
    assert_eq!(bench.snapshot().loss, LinkLoss::Closed);
    peer.send_map(&sensor_map(1.0));
    assert_eq!(number(&peer.answer().0), 2);
}

const JOINT: &str = "HeadPitch";

fn stiffness(bench: &Bench) -> f64 {
    bench.actuator(&format!("{JOINT}/Hardness/Actuator/Value"))
}

fn position(bench: &Bench) -> f64 {
    bench.actuator(&format!("{JOINT}/Position/Actuator/Value"))
}

/// A map where the robot holds `JOINT` at `position` with `stiffness`.
fn holding(position: f32, stiffness: f32) -> naobroker_lola::SensorMap {
    let mut map = sensor_map(0.0);
    map.position[1] = position;
    map.stiffness[1] = stiffness;
    map
}

#[test]
fn relax_ramps_the_stiffness_the_robot_applies_to_0_and_holds_the_joints_where_they_are() {
    let mut peer = Peer::new("relax", true);
    let bench = Bench::start(config(&peer, LinkLossPolicy::Relax));
    peer.accept();
    // Gaining the link is coming back to it: the policy applies at the first map.
    peer.send_map(&holding(0.25, 0.5));
    peer.answer();
    bench.wait_for_cycle(1);
    assert_eq!((stiffness(&bench), position(&bench)), (0.5, 0.25));
    peer.send_map(&holding(0.0, 0.5));
    let (answer, _) = peer.answer();
    bench.wait_for_cycle(2);
    assert!((stiffness(&bench) - 0.5 * (1.0 - 12.0 / 240.0)).abs() < 1e-9, "linear to 0 in 240 ms");
    assert_eq!(position(&bench), 0.25, "held, whatever the joint does now");
    assert_eq!((answer.position[1], answer.stiffness[1]), (0.25, 0.475));
    for _ in 0..20 {
        peer.send_map(&holding(0.0, 0.5));
        peer.answer();
    }
    bench.wait_for_cycle(22);
    assert_eq!(stiffness(&bench), 0.0);
}

/// A bench that stalls after 30 ms without a map, with `policy`, connected.
fn stalling(label: &str, policy: LinkLossPolicy) -> (Bench, Peer) {
    let mut peer = Peer::new(label, true);
    let mut lola = config(&peer, policy);
    lola.stall_ms = 30;
    let bench = Bench::start(lola);
    peer.accept();
    (bench, peer)
}

#[test]
fn a_stall_is_counted_and_relax_takes_over_when_the_maps_come_back() {
    let (bench, mut peer) = stalling("stall", LinkLossPolicy::Relax);
    peer.send_map(&holding(0.25, 0.5));
    peer.answer();
    bench.wait_for_cycle(1);
    wait_until("the stall is seen", || bench.snapshot().state == LinkState::Stalled);
    let (stalls, now) = (bench.snapshot().stalls, bench.shared.now());
    assert!(stalls >= 1);
    assert_eq!((bench.shared.cycles(), now), (1, START_TIME_MS + 12), "no cycle, time stands still");
    peer.send_map(&holding(-0.125, 0.75));
    peer.answer();
    bench.wait_for_cycle(2);
    assert_eq!((stiffness(&bench), position(&bench)), (0.75, -0.125));
    assert_eq!(bench.snapshot().state, LinkState::Up);
}

#[test]
fn hold_keeps_the_commands_as_they_are() {
    let (bench, mut peer) = stalling("hold", LinkLossPolicy::Hold);
    peer.send_map(&holding(0.25, 0.5));
    peer.answer();
    bench.wait_for_cycle(1);
    wait_until("the stall is seen", || bench.snapshot().state == LinkState::Stalled);
    peer.send_map(&holding(0.25, 0.5));
    peer.answer();
    bench.wait_for_cycle(2);
    assert_eq!((stiffness(&bench), position(&bench)), (0.0, 0.0), "the DCM's own commands: initial");
    assert!(bench.snapshot().stalls >= 1);
}
