//! Proof that `Pose::update` (and reading the pose) never allocates: the motion thread
//! calls it every cycle.

use naobroker_alloc_counter::{counted, start_counting, Counting};
use naobroker_kinematics::{Chain, Model, Part, Pose};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn updating_and_reading_a_pose_does_not_allocate() {
    let model = Model::nao_v6();
    let mut pose = Pose::new(&model);
    let frames: Vec<_> =
        ["Head", "LArm", "RLeg", "CameraTop", "Torso"].map(|name| model.frame(name).unwrap()).into();
    let mut angles = vec![0.0; model.joint_names().len()];
    let mut checksum = 0.0;
    start_counting();
    for cycle in 0..1000 {
        for (joint, angle) in angles.iter_mut().enumerate() {
            *angle = ((cycle * 7 + joint) as f64 * 0.01).sin();
        }
        pose.update(&model, &angles);
        for &frame in &frames {
            checksum += pose.transform(frame).to_position6d()[0];
        }
        checksum += pose.com(&model, Part::Body)[2] + pose.com(&model, Part::Chain(Chain::LLeg))[0];
        checksum += pose.torso_in_robot_frame(&model, 0.01, -0.02).translation[2];
    }
    let allocations = counted();
    assert!(checksum.is_finite());
    assert_eq!(allocations, 0, "Pose::update allocated");
}
