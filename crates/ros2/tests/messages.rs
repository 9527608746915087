//! The helpers that fill messages: ROS time from nanoseconds, and tf2's `setRPY` quaternion.

use naobroker_ros2::{Quaternion, Time};

fn product(a: Quaternion, b: Quaternion) -> Quaternion {
    Quaternion {
        w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
        x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
        y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
        z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
    }
}

fn assert_near(a: Quaternion, b: Quaternion) {
    let error = [a.x - b.x, a.y - b.y, a.z - b.z, a.w - b.w].map(f64::abs);
    assert!(error.iter().all(|e| *e < 1e-12), "{a:?} != {b:?}");
}

#[test]
fn rpy_is_yaw_then_pitch_then_roll_about_fixed_axes() {
    let (roll, pitch, yaw) = (0.3, -0.7, 2.1);
    let about = |axis: [f64; 3], angle: f64| {
        let (s, c) = (angle / 2.0).sin_cos();
        Quaternion { x: axis[0] * s, y: axis[1] * s, z: axis[2] * s, w: c }
    };
    let expected = product(
        about([0.0, 0.0, 1.0], yaw),
        product(about([0.0, 1.0, 0.0], pitch), about([1.0, 0.0, 0.0], roll)),
    );
    assert_near(Quaternion::from_rpy(roll, pitch, yaw), expected);
    assert_near(Quaternion::from_rpy(0.0, 0.0, yaw), about([0.0, 0.0, 1.0], yaw));
    assert_eq!(Quaternion::from_rpy(0.0, 0.0, 0.0), Quaternion::default());
}

#[test]
fn time_splits_nanoseconds_with_a_nonnegative_remainder() {
    assert_eq!(
        Time::from_nanos(1_764_270_000_123_456_789),
        Time { sec: 1_764_270_000, nanosec: 123_456_789 }
    );
    assert_eq!(Time::from_nanos(-1), Time { sec: -1, nanosec: 999_999_999 });
    assert_eq!(Time::from_nanos(0), Time::default());
}
