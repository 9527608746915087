//! Position6D and 4x4 matrices: round trips, NAOqi's rotation order, inverse, FRAME_ROBOT.

mod common;

use common::assert_mm;
use naobroker_kinematics::{Model, Pose, Transform};

#[test]
fn position6d_is_rz_ry_rx_and_round_trips() {
    // Rz(wz)·Ry(wy)·Rx(wx) applied to x̂ by hand: (cos wz cos wy, sin wz cos wy, -sin wy).
    let (wx, wy, wz): (f64, f64, f64) = (0.3, -0.5, 1.2);
    let t = Transform::from_position6d([0.1, -0.2, 0.3, wx, wy, wz]);
    let x = t.apply_rotation([1.0, 0.0, 0.0]);
    let expected = [wz.cos() * wy.cos(), wz.sin() * wy.cos(), -wy.sin()];
    for axis in 0..3 {
        assert!((x[axis] - expected[axis]).abs() < 1e-12, "{x:?} vs {expected:?}");
    }
    for k in 0..50 {
        let f = k as f64;
        let p =
            [0.01 * f, -0.02 * f, 0.3, (0.7 * f).sin() * 3.0, (0.3 * f).sin() * 1.5, (1.1 * f).cos() * 3.1];
        let back = Transform::from_position6d(p).to_position6d();
        for axis in 0..6 {
            assert!((back[axis] - p[axis]).abs() < 1e-9, "{p:?} came back {back:?}");
        }
    }
}

#[test]
fn matrix16_round_trips_and_refuses_what_is_not_rigid() {
    let t = Transform::from_position6d([0.05, 0.1, -0.2, 0.4, 0.2, -0.9]);
    let m = t.to_matrix16();
    assert_eq!(&m[12..], &[0.0, 0.0, 0.0, 1.0]);
    assert_eq!([m[3], m[7], m[11]], [0.05, 0.1, -0.2]);
    assert_eq!(Transform::from_matrix16(&m), Some(t));
    // As NAOqi sends it, in 32-bit floats.
    let single = m.map(|v| v as f32 as f64);
    let back = Transform::from_matrix16(&single).expect("a float32 rigid transform");
    assert!((back.to_position6d()[5] + 0.9).abs() < 1e-6);
    let mut scaled = m;
    scaled[0] *= 2.0;
    assert_eq!(Transform::from_matrix16(&scaled), None);
    let mut mirrored = m;
    for column in 0..3 {
        mirrored[4 + column] = -mirrored[4 + column];
    }
    assert_eq!(Transform::from_matrix16(&mirrored), None, "a reflection is no rotation");
    let mut projective = m;
    projective[12] = 0.5;
    assert_eq!(Transform::from_matrix16(&projective), None);
}

#[test]
fn inverse_undoes_and_then_composes() {
    let a = Transform::from_position6d([0.1, 0.2, 0.3, 0.5, -0.4, 2.0]);
    let b = Transform::from_position6d([-0.3, 0.0, 0.1, -1.0, 0.2, 0.3]);
    let identity = a.then(&a.inverse()).to_matrix16();
    for (value, expected) in identity.iter().zip(Transform::IDENTITY.to_matrix16()) {
        assert!((value - expected).abs() < 1e-12, "{identity:?}");
    }
    let point = [0.3, -0.1, 0.7];
    let composed = a.then(&b).apply(point);
    let stepwise = a.apply(b.apply(point));
    for axis in 0..3 {
        assert!((composed[axis] - stepwise[axis]).abs() < 1e-12);
    }
}

#[test]
fn robot_frame_is_on_the_ground_between_the_feet() {
    let model = Model::nao_v6();
    let pose = Pose::new(&model);
    // Straight legs: the torso is 85 + 100 + 102.9 + 45.19 mm above the ground.
    let upright = pose.torso_in_robot_frame(&model, 0.0, 0.0);
    assert_mm(upright.translation, [0.0, 0.0, 333.09], "upright");
    assert_eq!(upright.to_position6d()[3..], [0.0, 0.0, 0.0]);
    // Leaning forward by 0.1 rad about the feet: the torso moves ahead, Ry(0.1) of 333.09 mm.
    let leaning = pose.torso_in_robot_frame(&model, 0.0, 0.1);
    let (s, c) = 0.1f64.sin_cos();
    assert_mm(leaning.translation, [333.09 * s, 0.0, 333.09 * c], "leaning");
    assert!((leaning.to_position6d()[4] - 0.1).abs() < 1e-12);
}
