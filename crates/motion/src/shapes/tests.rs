//! shapes.rs's unit tests: every accepted shape, and the errors naming what is wrong.

use super::*;

const HEAD: [&str; 2] = ["HeadYaw", "HeadPitch"];
const YAW: [&str; 1] = ["HeadYaw"];

fn n(x: f64) -> Value {
    Value::F64(x)
}

fn list(items: impl IntoIterator<Item = Value>) -> Value {
    Value::Array(items.into_iter().collect())
}

fn numbers(xs: &[f64]) -> Value {
    list(xs.iter().map(|&x| n(x)))
}

/// A Choregraphe-style key with symmetric handles.
fn key(angle: f64, d_time: f64) -> Value {
    list([n(angle), list([3.into(), n(-d_time), n(0.0)]), list([3.into(), n(d_time), n(0.0)])])
}

fn frames(values: &[f64], times: &[f64]) -> KeyFrames {
    KeyFrames { values: values.to_vec(), times: times.to_vec() }
}

fn angles(joints: &[&str], values: Value, times: Value) -> Result<Vec<KeyFrames>, ShapeError> {
    key_frames(ANGLE_INTERPOLATION, joints, &values, &times)
}

fn error(result: Result<impl std::fmt::Debug, ShapeError>) -> String {
    result.unwrap_err().to_string()
}

#[test]
fn targets_a_number_for_all_or_one_per_joint() {
    assert_eq!(targets(("stiffnesses", STIFFNESS), &HEAD, &n(1.0)).unwrap(), [1.0, 1.0]);
    assert_eq!(targets(("angles", ANGLE), &HEAD, &numbers(&[0.2, 0.1])).unwrap(), [0.2, 0.1]);
    assert_eq!(targets(("angles", ANGLE), &YAW, &numbers(&[0.3])).unwrap(), [0.3]);
    assert_eq!(targets(("angles", ANGLE), &YAW, &1.into()).unwrap(), [1.0], "integers are numbers");
}

#[test]
fn targets_errors_name_the_argument_joint_and_shape() {
    assert_eq!(
        error(targets(("angles", ANGLE), &HEAD, &numbers(&[0.1]))),
        "angles: 1 number for 2 joints (HeadYaw, HeadPitch); \
         expected a number for all joints or a list of one number per joint"
    );
    assert_eq!(
        error(targets(("angles", ANGLE), &YAW, &numbers(&[0.1, 0.2]))),
        "angles: HeadYaw: expected one number, got [0.1, 0.2]"
    );
    assert_eq!(
        error(targets(("changes", ANGLE), &HEAD, &list([n(0.1), n(f64::NAN)]))),
        "changes: HeadPitch: expected a number within ±100 rad, got NaN"
    );
    assert_eq!(
        error(targets(("angles", ANGLE), &YAW, &"up".into())),
        "angles: expected a number for all joints or a list of one number per joint, got \"up\""
    );
}

#[test]
fn one_number_and_one_time_for_all_joints() {
    let body: Vec<String> = (0..26).map(|i| format!("J{i}")).collect();
    let body: Vec<&str> = body.iter().map(String::as_str).collect();
    let stiffness = key_frames(STIFFNESS_INTERPOLATION, &body, &n(1.0), &n(1.0)).unwrap();
    assert_eq!(stiffness, vec![frames(&[1.0], &[1.0]); 26]);
}

#[test]
fn one_joint_a_number_a_flat_list_or_a_list_holding_one_list() {
    assert_eq!(angles(&YAW, n(0.5), n(1.0)).unwrap(), [frames(&[0.5], &[1.0])]);
    let flat = angles(&YAW, numbers(&[1.0, 0.0]), numbers(&[1.0, 2.0])).unwrap();
    assert_eq!(flat, [frames(&[1.0, 0.0], &[1.0, 2.0])]);
    let choregraphe = angles(&YAW, list([numbers(&[0.5])]), list([numbers(&[1.0])])).unwrap();
    assert_eq!(choregraphe, [frames(&[0.5], &[1.0])]);
    let mixed = angles(&YAW, list([numbers(&[1.0, 0.0])]), numbers(&[1.0, 2.0])).unwrap();
    assert_eq!(mixed, [frames(&[1.0, 0.0], &[1.0, 2.0])]);
}

#[test]
fn one_angle_and_one_time_per_joint() {
    let each = angles(&HEAD, numbers(&[0.2, 0.1]), numbers(&[1.0, 1.2])).unwrap();
    assert_eq!(each, [frames(&[0.2], &[1.0]), frames(&[0.1], &[1.2])]);
    let one_time = angles(&HEAD, numbers(&[0.2, 0.1]), n(1.0)).unwrap();
    assert_eq!(one_time, [frames(&[0.2], &[1.0]), frames(&[0.1], &[1.0])]);
}

#[test]
fn one_list_per_joint_or_one_time_list_shared() {
    let per_joint = angles(
        &HEAD,
        list([numbers(&[1.0, 0.0]), numbers(&[-0.5, 0.5, 0.0])]),
        list([numbers(&[1.0, 2.0]), numbers(&[1.0, 2.0, 3.0])]),
    )
    .unwrap();
    assert_eq!(per_joint, [frames(&[1.0, 0.0], &[1.0, 2.0]), frames(&[-0.5, 0.5, 0.0], &[1.0, 2.0, 3.0])]);
    // Two numbers for two joints that have two key frames each: the times they share.
    let shared =
        angles(&HEAD, list([numbers(&[0.3, 0.0]), numbers(&[0.2, 0.0])]), numbers(&[1.0, 2.0])).unwrap();
    assert_eq!(shared, [frames(&[0.3, 0.0], &[1.0, 2.0]), frames(&[0.2, 0.0], &[1.0, 2.0])]);
    let one_frame_each = angles(&HEAD, numbers(&[0.3, 0.2]), numbers(&[1.5])).unwrap();
    assert_eq!(one_frame_each, [frames(&[0.3], &[1.5]), frames(&[0.2], &[1.5])]);
}

#[test]
fn per_joint_entries_may_mix_numbers_and_lists() {
    let mixed =
        angles(&HEAD, list([numbers(&[0.3, 0.0]), n(0.2)]), list([numbers(&[1.0, 2.0]), n(1.0)])).unwrap();
    assert_eq!(mixed, [frames(&[0.3, 0.0], &[1.0, 2.0]), frames(&[0.2], &[1.0])]);
}

#[test]
fn key_frame_errors_name_the_argument_joint_and_shape() {
    assert_eq!(
        error(key_frames(STIFFNESS_INTERPOLATION, &HEAD, &list([numbers(&[1.0])]), &n(1.0))),
        "stiffnessLists: 1 list for 2 joints (HeadYaw, HeadPitch); \
         expected a number or a list for all joints, or a list of one number or list per joint"
    );
    assert_eq!(
        error(angles(&HEAD, numbers(&[0.1, 0.2, 0.3]), n(1.0))),
        "angleLists: 3 numbers for 2 joints (HeadYaw, HeadPitch); \
         expected a number or a list for all joints, or a list of one number or list per joint"
    );
    assert_eq!(
        error(angles(&YAW, numbers(&[0.1, 0.2]), numbers(&[1.0]))),
        "angleLists and timeLists: HeadYaw has 2 angles but 1 time; expected one time per key frame"
    );
    assert_eq!(
        error(angles(&HEAD, numbers(&[0.2, 0.1]), numbers(&[1.0, 2.0, 3.0]))),
        "angleLists and timeLists: HeadYaw has 1 angle but 3 times; expected one time per key frame"
    );
    assert_eq!(
        error(angles(&YAW, numbers(&[0.1, 0.2]), numbers(&[1.0, 1.0]))),
        "timeLists: HeadYaw: key-frame times must be positive and increasing by at least 0.001 s, got [1, 1]"
    );
    assert_eq!(
        error(angles(&YAW, n(0.1), n(0.0))),
        "timeLists: HeadYaw: key-frame times must be positive and increasing by at least 0.001 s, got [0]"
    );
    assert_eq!(
        error(angles(&HEAD, list([numbers(&[0.1, f64::NAN]), n(0.0)]), list([numbers(&[1.0, 2.0]), n(1.0)]))),
        "angleLists: HeadYaw key frame 2: expected a number within ±100 rad, got NaN"
    );
    assert_eq!(
        error(angles(&YAW, list([]), list([]))),
        "angleLists: HeadYaw: expected at least one key frame, got []"
    );
    assert_eq!(
        error(angles(&YAW, list([numbers(&[0.1]), numbers(&[0.2])]), numbers(&[1.0, 2.0]))),
        "angleLists: HeadYaw key frame 1: expected a number within ±100 rad, got [0.1]"
    );
    assert_eq!(
        error(angles(&HEAD, n(0.1), "soon".into())),
        "timeLists: expected a number or a list for all joints, or one per joint, got \"soon\""
    );
}

#[test]
fn bezier_keys_one_list_per_joint() {
    let points = list([list([key(0.5, 0.3), key(0.0, 0.3)]), list([key(0.2, 0.4)])]);
    let times = list([numbers(&[1.0, 2.0]), numbers(&[1.2])]);
    let parsed = bezier_frames(&HEAD, &times, &points).unwrap();
    assert_eq!(parsed[0].values, [0.5, 0.0]);
    assert_eq!(parsed[0].times, [1.0, 2.0]);
    assert_eq!(parsed[0].handles, [[(-0.3, 0.0), (0.3, 0.0)]; 2]);
    assert_eq!(parsed[1].handles, [[(-0.4, 0.0), (0.4, 0.0)]]);
}

#[test]
fn bezier_one_joint_keys_flat_or_in_a_list() {
    let keys = [key(0.5, 0.3), key(0.0, 0.3)];
    let flat = bezier_frames(&YAW, &numbers(&[1.0, 2.0]), &list(keys.clone())).unwrap();
    let nested = bezier_frames(&YAW, &list([numbers(&[1.0, 2.0])]), &list([list(keys.clone())])).unwrap();
    assert_eq!(flat, nested);
    assert_eq!(flat[0].values, [0.5, 0.0]);
    let single = bezier_frames(&YAW, &n(1.0), &key(0.5, 0.3)).unwrap();
    assert_eq!(single[0].values, [0.5]);
}

#[test]
fn bezier_bare_angles_get_flat_handles_and_times_may_be_shared() {
    let bare = bezier_frames(&YAW, &list([numbers(&[1.0, 1.5])]), &list([numbers(&[0.5, 0.0])])).unwrap();
    assert_eq!(bare[0].values, [0.5, 0.0]);
    assert_eq!(
        bare[0].handles,
        [[(-1.0 / 3.0, 0.0), (0.5 / 3.0, 0.0)], [(-0.5 / 3.0, 0.0), (0.5 / 3.0, 0.0)]]
    );
    let points = list([list([key(0.3, 0.2), key(0.0, 0.2)]), list([key(0.2, 0.2), key(0.0, 0.2)])]);
    let shared = bezier_frames(&HEAD, &numbers(&[1.0, 2.0]), &points).unwrap();
    assert!(shared.iter().all(|joint| joint.times == [1.0, 2.0]));
}

#[test]
fn bezier_errors_name_the_key() {
    let missing_handle = list([n(0.5), list([3.into(), n(-0.3), n(0.0)])]);
    assert_eq!(
        error(bezier_frames(&YAW, &numbers(&[1.0, 2.0]), &list([key(0.1, 0.3), missing_handle]))),
        "controlPoints: HeadYaw key frame 2: expected an angle or [angle, [type, dTime, dAngle], \
         [type, dTime, dAngle]], got [0.5, [3, -0.3, 0]]"
    );
    let forward_in = list([n(0.5), list([3.into(), n(0.3), n(0.0)]), list([3.into(), n(0.3), n(0.0)])]);
    assert_eq!(
        error(bezier_frames(&YAW, &n(1.0), &forward_in)),
        "controlPoints: HeadYaw: expected an in handle [type, dTime <= 0 back to the previous key at most, \
         dAngle within ±100 rad], got [3, 0.3, 0]"
    );
    let short_out = list([n(0.5), list([3.into(), n(-0.3), n(0.0)]), list([n(0.3)])]);
    assert_eq!(
        error(bezier_frames(&YAW, &n(1.0), &short_out)),
        "controlPoints: HeadYaw: expected an out handle [type, dTime >= 0 up to the next key at most, \
         dAngle within ±100 rad], got [0.3]"
    );
    assert_eq!(
        error(bezier_frames(&HEAD, &n(1.0), &list([key(0.1, 0.3)]))),
        "controlPoints: 1 key for 2 joints (HeadYaw, HeadPitch); expected a key or a list of keys \
         for all joints, or a list of one key or list per joint"
    );
}

#[test]
fn long_inputs_are_quoted_short() {
    let long = numbers(&vec![0.5; 10_000]);
    let message = error(targets(("angles", ANGLE), &YAW, &long));
    assert!(message.len() < 200, "{message}");
    let names: Vec<String> = (0..100).map(|i| format!("Joint{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let message = error(targets(("angles", ANGLE), &names, &numbers(&[0.1])));
    assert!(message.len() < 250, "{message}");
}

#[test]
fn angles_and_changes_are_bounded_stiffnesses_clamped_later() {
    assert_eq!(targets(("angles", ANGLE), &YAW, &n(-100.0)).unwrap(), [-100.0]);
    assert_eq!(
        error(targets(("changes", ANGLE), &YAW, &n(-2000.0))),
        "changes: HeadYaw: expected a number within ±100 rad, got -2000"
    );
    assert_eq!(targets(("stiffnesses", STIFFNESS), &YAW, &n(1e308)).unwrap(), [1e308]);
    assert_eq!(
        error(angles(&YAW, numbers(&[0.1, 100.5]), numbers(&[1.0, 2.0]))),
        "angleLists: HeadYaw key frame 2: expected a number within ±100 rad, got 100.5"
    );
}

#[test]
fn key_frame_times_are_at_least_a_millisecond_apart_and_at_most_an_hour() {
    let close = angles(&YAW, numbers(&[0.1, 0.2, 0.3]), numbers(&[0.001, 1.0, 1.001])).unwrap();
    assert_eq!(close[0].times, [0.001, 1.0, 1.001], "1 ms apart, whatever the rounding");
    assert_eq!(angles(&YAW, n(0.1), n(3600.0)).unwrap()[0].times, [3600.0]);
    assert_eq!(
        error(angles(&YAW, numbers(&[0.1, 0.2]), numbers(&[1.0, 1.0005]))),
        "timeLists: HeadYaw: key-frame times must be positive and increasing by at least 0.001 s, \
         got [1, 1.0005]"
    );
    assert_eq!(
        error(angles(&YAW, n(0.1), n(0.0001))),
        "timeLists: HeadYaw: key-frame times must be positive and increasing by at least 0.001 s, \
         got [0.0001]"
    );
    assert_eq!(
        error(angles(&YAW, n(0.1), n(3600.5))),
        "timeLists: HeadYaw: expected a number of seconds up to 3600, got 3600.5"
    );
}

#[test]
fn bezier_handles_stay_between_their_keys_and_their_angles_are_bounded() {
    let with = |value: f64, d_in: (f64, f64), d_out: (f64, f64)| {
        list([n(value), list([3.into(), n(d_in.0), n(d_in.1)]), list([3.into(), n(d_out.0), n(d_out.1)])])
    };
    // Handles reaching exactly the start and the next key.
    let keys = list([with(0.5, (-1.0, 0.2), (0.5, -100.0)), with(0.0, (-0.5, 0.0), (0.0, 0.0))]);
    let parsed = bezier_frames(&YAW, &numbers(&[1.0, 1.5]), &keys).unwrap();
    assert_eq!(parsed[0].handles, [[(-1.0, 0.2), (0.5, -100.0)], [(-0.5, 0.0), (0.0, 0.0)]]);
    let past_the_start = list([with(0.5, (-1.1, 0.0), (0.3, 0.0))]);
    let message = error(bezier_frames(&YAW, &n(1.0), &past_the_start));
    assert!(message.starts_with("controlPoints: HeadYaw: expected an in handle"), "{message}");
    let past_the_next = list([with(0.5, (-0.3, 0.0), (0.6, 0.0)), with(0.0, (-0.1, 0.0), (0.1, 0.0))]);
    let message = error(bezier_frames(&YAW, &numbers(&[1.0, 1.5]), &past_the_next));
    assert!(message.starts_with("controlPoints: HeadYaw key frame 1: expected an out handle"), "{message}");
    let steep = with(0.5, (-0.3, 100.5), (0.3, 0.0));
    let message = error(bezier_frames(&YAW, &n(1.0), &steep));
    assert!(message.starts_with("controlPoints: HeadYaw: expected an in handle"), "{message}");
    assert!(message.ends_with("got [3, -0.3, 100.5]"), "{message}");
    assert_eq!(
        error(bezier_frames(&YAW, &n(1.0), &with(-150.0, (-0.3, 0.0), (0.3, 0.0)))),
        "controlPoints: HeadYaw: expected a number within ±100 rad, got -150"
    );
}

#[test]
fn fraction_of_the_maximum_speed_from_a_thousandth_to_all_of_it() {
    assert_eq!(fraction(0.001).unwrap(), 0.001);
    assert_eq!(fraction(1.0).unwrap(), 1.0);
    for refused in [1e-320, 0.0, -0.5, 1.5, f64::NAN] {
        let message = error(fraction(refused));
        assert!(message.starts_with("fractionMaxSpeed: expected a number in [0.001, 1], got "), "{message}");
    }
}
