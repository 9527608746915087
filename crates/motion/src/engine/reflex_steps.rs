//! The engine's reflex steps within a motion cycle: the fall manager's detection and
//! sequence, and collision protection holding an arm at its last safe pose.

use naobroker_dcm::core::{Request, TimedCommand, UpdateType};
use naobroker_dcm::time::DcmTime;

use super::Engine;
use crate::fall::{self, Direction, FallStep};
use crate::self_collision::{self, Level};

impl Engine {
    /// The fall manager's step for this cycle, from the inertial unit's angles and
    /// gyroscope as the DCM last read them.
    pub(super) fn fall_step(&mut self) -> FallStep {
        let Some(angles) = &self.angles else { return FallStep::Idle };
        let (angle_x, angle_y) = (angles.get(0), angles.get(1));
        let gyroscope = self.gyroscope.as_ref().map(|rates| [rates.get(0), rates.get(1), rates.get(2)]);
        self.fall.step(self.switches.fall_manager(), angle_x, angle_y, gyroscope)
    }

    /// Move toward the protective posture as fast as each joint can; the motors moved.
    pub(super) fn drive_protective_posture(&mut self, direction: Direction, dt: f64) -> u64 {
        let mut moved = 0u64;
        for entry in &self.protective {
            let Some(target) = fall::target(entry, direction) else { continue };
            let motor = entry.0;
            let step = self.body.motors[motor].spec.max_velocity * dt;
            let state = &mut self.motors[motor];
            state.position = super::limit_step(state.position, target, step);
            state.sent_position = Some(state.position);
            state.idle_cycles = 0;
            moved |= 1 << motor;
        }
        moved
    }

    /// The end of a fall: every joint limp; the motors whose stiffness was sent.
    pub(super) fn all_stiffness_off(&mut self, target_time: DcmTime, request: &mut Request) -> u64 {
        let mut sent = 0u64;
        for (index, state) in self.motors.iter_mut().enumerate() {
            state.stiffness = 0.0;
            state.sent_stiffness = Some(0.0);
            state.external_stiffness = false;
            state.smart_lowered = false;
            let command = TimedCommand { time: target_time, value: 0.0 };
            request.push_command(self.body.motors[index].stiffness_actuator, UpdateType::ClearAll, command);
            sent |= 1 << index;
        }
        sent
    }

    /// Collision protection: an arm whose new pose (the commanded pose just updated) would
    /// come within the margin of the body or the other arm, and closer than it was, is held
    /// at its pose of the start of the cycle; the commanded pose is updated again when one
    /// was. Then each arm's level, for `isCollision`.
    pub(super) fn hold_arms_out_of_the_body(&mut self, positions_sent: u64) {
        let (Some(cartesian), Some(shapes)) = (&self.cartesian, &self.body.collision) else { return };
        let mut held = false;
        for arm in self.arms.iter().flatten() {
            if positions_sent & arm.mask == 0 || !self.switches.collision_protection(arm.arm) {
                continue;
            }
            let from = shapes.clearance(arm.arm, &cartesian.before);
            if self_collision::allowed(from, shapes.clearance(arm.arm, &cartesian.commanded)) {
                continue;
            }
            for &motor in arm.motors.iter().filter(|&&motor| positions_sent & (1 << motor) != 0) {
                let state = &mut self.motors[motor];
                state.position = self.previous[motor];
                state.sent_position = Some(state.position);
            }
            self.collision_stops += 1;
            held = true;
        }
        if held {
            self.update_commanded_pose();
        }
        let (Some(cartesian), Some(shapes)) = (&self.cartesian, &self.body.collision) else { return };
        for arm in self.arms.iter().flatten() {
            self.collision_levels.set(arm.arm, Level::of(shapes.clearance(arm.arm, &cartesian.commanded)));
        }
    }
}
