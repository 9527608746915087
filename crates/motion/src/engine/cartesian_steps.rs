//! The engine's Cartesian steps (seed 004: "Cartesian data are updated and available", and
//! "intentions are executed on the model"): forward kinematics of the angles the sensors
//! measure and of the command model, on preallocated poses, without allocating.

use std::sync::Arc;

use naobroker_kinematics::{Pose, Transform};

use super::Engine;
use crate::body::Body;
use crate::cartesian::{CartesianPose, Kinematics, Published};

/// The Cartesian data the motion thread keeps, all allocated at start.
pub(super) struct CartesianState {
    kinematics: Arc<Kinematics>,
    /// The model's angles, refilled for each pose.
    angles: Vec<f64>,
    sensed: Pose,
    /// The command model as the cycle starts: each arm's last safe pose.
    pub(super) before: Pose,
    /// The command model with this cycle's intentions.
    pub(super) commanded: Pose,
    sensed_in_robot: Transform,
    commanded_in_robot: Transform,
}

impl CartesianState {
    /// For a body with a kinematic model; `None` without one.
    pub(super) fn new(body: &Body) -> Option<CartesianState> {
        let kinematics = body.kinematics.as_ref()?;
        let model = &kinematics.model;
        Some(CartesianState {
            kinematics: Arc::clone(kinematics),
            angles: vec![0.0; model.joint_names().len()],
            sensed: Pose::new(model),
            before: Pose::new(model),
            commanded: Pose::new(model),
            sensed_in_robot: Transform::IDENTITY,
            commanded_in_robot: Transform::IDENTITY,
        })
    }
}

impl Engine {
    /// The torso's inclination (AngleX, AngleY) from the inertial unit, or level.
    fn torso_angles(&self) -> (f64, f64) {
        self.angles.as_ref().map_or((0.0, 0.0), |angles| (angles.get(0), angles.get(1)))
    }

    /// Seed 004's "Cartesian data are updated": the sensed pose from the joint sensors, and
    /// the command model as the cycle starts (after it followed the DCM).
    pub(super) fn update_cartesian(&mut self) {
        let (angle_x, angle_y) = self.torso_angles();
        let Some(cartesian) = &mut self.cartesian else { return };
        let kinematics = &cartesian.kinematics;
        let model = &kinematics.model;
        let sensed = &self.sensed;
        kinematics.angles_from_motors(|motor| sensed[motor], &mut cartesian.angles);
        cartesian.sensed.update(model, &cartesian.angles);
        cartesian.sensed_in_robot = cartesian.sensed.torso_in_robot_frame(model, angle_x, angle_y);
        kinematics.angles_from_motors(|motor| self.motors[motor].position, &mut cartesian.angles);
        cartesian.before.update(model, &cartesian.angles);
    }

    /// The command model with the cycle's intentions (seed 004: "intentions are executed on
    /// the model"); again after collision protection held an arm back.
    pub(super) fn update_commanded_pose(&mut self) {
        let (angle_x, angle_y) = self.torso_angles();
        let Some(cartesian) = &mut self.cartesian else { return };
        let model = &cartesian.kinematics.model;
        cartesian.kinematics.angles_from_motors(|motor| self.motors[motor].position, &mut cartesian.angles);
        cartesian.commanded.update(model, &cartesian.angles);
        // The torso's inclination is measured, not commanded: both models use the sensors'.
        cartesian.commanded_in_robot = cartesian.commanded.torso_in_robot_frame(model, angle_x, angle_y);
    }

    /// The kinematic model, when the body has one.
    pub fn kinematics(&self) -> Option<&Arc<Kinematics>> {
        self.cartesian.as_ref().map(|cartesian| &cartesian.kinematics)
    }

    /// Publish the cycle's Cartesian data for the API side ([`Published`]: never waits).
    pub fn publish_cartesian(&self, published: &Published) {
        let Some(cartesian) = &self.cartesian else { return };
        published.write(
            &cartesian.kinematics,
            &CartesianPose { pose: &cartesian.commanded, torso_in_robot: cartesian.commanded_in_robot },
            &CartesianPose { pose: &cartesian.sensed, torso_in_robot: cartesian.sensed_in_robot },
        );
    }
}
