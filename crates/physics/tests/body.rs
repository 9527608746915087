//! The simulated NAO on MuJoCo, driven as a LoLA client drives it (targets and stiffness
//! every 12 ms): it rests crouched and limp, stands at StandInit with its weight on its
//! feet, falls when limp or pushed, senses walls, and repeats itself bit for bit.

use naobroker_physics::{PhysicalBody, RobotModel, World, GRAVITY, ROOM_WALL_X_M};
use naobroker_posture::library::{self, Posture};

/// LoLA's joints, in its order (what `naobroker-lolasim` commands).
const JOINTS: [&str; 25] = naobroker_lola::names::JOINTS;
const CYCLE_S: f64 = 0.012;

fn robot(world: World) -> PhysicalBody {
    PhysicalBody::new(&RobotModel::nao_v6(), world, &JOINTS).expect("MuJoCo from the README's test command")
}

fn angle(posture: &Posture, joint: &str) -> f64 {
    posture.joints.iter().find(|(name, _)| *name == joint).map(|(_, angle)| *angle).unwrap()
}

fn cycles(body: &mut PhysicalBody, count: usize) {
    (0..count).for_each(|_| body.advance(CYCLE_S));
}

/// From where the joints are to `posture` in `seconds`, stiff, as ALMotion interpolates.
fn go_to(body: &mut PhysicalBody, posture: &Posture, seconds: f64) {
    let targets: Vec<f64> = JOINTS.iter().map(|name| angle(posture, name)).collect();
    body.ramp_to(&targets, seconds, CYCLE_S);
}

fn standing() -> PhysicalBody {
    standing_in(World::Flat)
}

/// Woken up from the crouch to StandInit in 2 s, then still for 1.2 s.
fn standing_in(world: World) -> PhysicalBody {
    let mut body = robot(world);
    go_to(&mut body, &library::STAND_INIT, 2.0);
    cycles(&mut body, 100);
    body
}

/// The torso's pitch when `posture`'s legs stand with both soles flat: the sum of the leg's
/// pitch joints, since every other joint of a leg leaves the sole's pitch alone at these angles.
fn flat_footed_pitch(posture: &Posture) -> f64 {
    -(angle(posture, "LHipPitch") + angle(posture, "LKneePitch") + angle(posture, "LAnklePitch"))
}

#[test]
fn the_robot_starts_crouched_and_limp_and_stays_so() {
    let mut body = robot(World::Flat);
    let start = body.truth();
    assert!(!start.fallen);
    assert!((0..JOINTS.len()).all(|joint| body.stiffness(joint) == 0.0));
    let knee = JOINTS.iter().position(|&name| name == "LKneePitch").unwrap();
    assert!((body.measured_position(knee) - angle(&library::CROUCH, "LKneePitch")).abs() < 0.05);
    // Three minutes: a friction that merely slowed a slump (MuJoCo's frictionloss) let it
    // lean back and fall after a few.
    for _ in 0..180 {
        cycles(&mut body, 83);
        let later = body.truth();
        assert!(!later.fallen, "{later:?}");
        assert!(
            (later.torso[2] - start.torso[2]).abs() < 0.005,
            "crouching without motors: {start:?} → {later:?}"
        );
        assert!((later.torso[4] - start.torso[4]).abs() < 0.01, "not leaning: {start:?} → {later:?}");
    }
}

#[test]
fn standing_at_stand_init_holds_for_60_s_with_the_weight_on_both_feet() {
    let mut body = standing();
    let expected_pitch = flat_footed_pitch(&library::STAND_INIT);
    let five_degrees = 5f64.to_radians();
    for second in 0..60 {
        cycles(&mut body, 83);
        let truth = body.truth();
        assert!(!truth.fallen, "second {second}: {truth:?}");
        assert!(truth.torso[3].abs() < five_degrees, "roll at {second} s: {truth:?}");
        assert!((truth.torso[4] - expected_pitch).abs() < five_degrees, "pitch at {second} s: {truth:?}");
        let inertial = body.inertial();
        assert!(
            (inertial.angles[1] - truth.torso[4]).abs() < 0.01,
            "the inertial unit's AngleY is the torso's pitch"
        );
    }
    let fsr = body.fsr();
    let (left, right): (f64, f64) = (fsr[0].iter().sum(), fsr[1].iter().sum());
    let weight = body.mass();
    assert!(((left + right) - weight).abs() < 0.05 * weight, "FSRs {left} + {right} kg, robot {weight} kg");
    assert!(left > 0.3 * weight && right > 0.3 * weight, "shared between the feet: {left} / {right} kg");
    let accelerometer = body.inertial().accelerometer;
    let norm = accelerometer.iter().map(|a| a * a).sum::<f64>().sqrt();
    assert!((norm - GRAVITY).abs() < 0.1 && accelerometer[2] < -9.0, "still and upright: {accelerometer:?}");
}

#[test]
fn every_stiffness_off_and_a_standing_robot_falls() {
    let mut body = standing();
    for (joint, name) in JOINTS.iter().enumerate() {
        body.command(joint, angle(&library::STAND_INIT, name), 0.0);
    }
    cycles(&mut body, 250);
    let truth = body.truth();
    assert!(truth.fallen, "{truth:?}");
    assert!(body.inertial().angles.iter().any(|angle| angle.abs() > 1.0), "the inertial unit sees it");
}

#[test]
fn a_push_of_40_n_for_100_ms_topples_a_standing_robot_and_4_n_does_not() {
    for (newtons, falls) in [(4.0, false), (40.0, true)] {
        let mut body = standing();
        body.push([-newtons, 0.0, 0.0], 0.1);
        cycles(&mut body, 250);
        assert_eq!(body.truth().fallen, falls, "{newtons} N backwards: {:?}", body.truth());
    }
}

#[test]
fn the_same_commands_give_bit_identical_sensors() {
    let run = || {
        let mut body = robot(World::Room);
        go_to(&mut body, &library::STAND_INIT, 1.0);
        body.push([10.0, 5.0, 0.0], 0.05);
        cycles(&mut body, 50);
        let positions: Vec<u64> =
            (0..JOINTS.len()).map(|joint| body.measured_position(joint).to_bits()).collect();
        let inertial = body.inertial();
        let fsr = body.fsr();
        (positions, format!("{inertial:?} {fsr:?} {:?} {:?}", body.sonar(0), body.truth()))
    };
    assert_eq!(run(), run());
}

#[test]
fn the_sonars_hear_the_rooms_wall_and_nothing_on_open_ground() {
    let room = standing_in(World::Room);
    for sonar in 0..2 {
        let distance = room.sonar(sonar).unwrap();
        // 22.5° out from straight ahead, from the chest, to a wall 1.5 m ahead.
        let expected = ROOM_WALL_X_M / 0.3924f64.cos();
        assert!(
            (distance - expected).abs() < 0.1,
            "sonar {sonar}: {distance} m, about {expected} m expected"
        );
    }
    let flat = standing_in(World::Flat);
    assert_eq!([flat.sonar(0), flat.sonar(1), flat.sonar(2)], [Some(5.0), Some(5.0), None]);
}

#[test]
fn the_start_pose_is_naoqis_crouch() {
    let model = RobotModel::nao_v6();
    for (name, angle) in library::CROUCH.joints {
        if let Some(start) = model.physics.start.get(*name) {
            assert!((start - angle).abs() < 1e-9, "{name}");
        }
    }
}

#[test]
fn a_joint_driven_far_at_once_turns_no_faster_than_its_top_speed() {
    let mut body = robot(World::Flat);
    let yaw = JOINTS.iter().position(|&name| name == "HeadYaw").unwrap();
    let top_speed = 8.0;
    let mut last = body.measured_position(yaw);
    let mut fastest: f64 = 0.0;
    body.command(yaw, 2.0, 1.0);
    for _ in 0..50 {
        body.advance(CYCLE_S);
        let now = body.measured_position(yaw);
        fastest = fastest.max((now - last).abs() / CYCLE_S);
        last = now;
    }
    assert!((last - 2.0).abs() < 0.05, "it got there: {last}");
    assert!(
        fastest > 0.5 * top_speed && fastest < 1.02 * top_speed,
        "{fastest} rad/s, top speed {top_speed}"
    );
}

#[test]
fn fallen_on_its_belly_the_robot_presses_its_toes_bumpers_and_weighs_nothing_on_its_soles() {
    let mut body = standing();
    assert_eq!(body.bumpers(), [[false; 2]; 2], "standing, nothing touches the toes");
    body.push([40.0, 0.0, 0.0], 0.1);
    cycles(&mut body, 150);
    let truth = body.truth();
    assert!(truth.fallen && truth.torso[4] > 1.0, "on its belly: {truth:?}");
    let bumpers = body.bumpers();
    assert!(bumpers.iter().all(|foot| foot.contains(&true)), "each foot's toe on the floor: {bumpers:?}");
    let weight: f64 = body.fsr().iter().flatten().sum();
    assert!(weight < 0.1, "the soles carry nothing: {weight} kg");
}
