//! The whole body in the motion cycle (docs/whole-body.md): NAOqi's `wb*` settings, its
//! Cartesian paths of the torso and the feet, and `wbGoToBalance`, turned each cycle by
//! naobroker-balance into the legs' angles, so that the feet keep their states and the
//! centre of mass stays over the support polygon whatever the arms and the head (driven by
//! their own tasks) do. It drives the legs while it is enabled and nothing else has them:
//! a task on a leg joint, the walk and the fall manager take them back, and it starts again
//! from wherever they left the body.

use std::sync::Arc;

use naobroker_balance::{over_foot, ComGoal, FootState, Goal, Path, Side, WholeBody};
use naobroker_kinematics::{Chain, Transform};

use super::walking::WALKING_STIFFNESS;
use super::{limit_step, Channel, Engine, EngineOutput, FromEngine};
use crate::body::Body;
use crate::cartesian::Kinematics;

/// What the whole body moves along Cartesian paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effector {
    Torso = 0,
    LLeg = 1,
    RLeg = 2,
}

impl Effector {
    pub fn from_name(name: &str) -> Option<Effector> {
        match name {
            "Torso" => Some(Effector::Torso),
            "LLeg" => Some(Effector::LLeg),
            "RLeg" => Some(Effector::RLeg),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Effector::Torso => "Torso",
            Effector::LLeg => "LLeg",
            Effector::RLeg => "RLeg",
        }
    }

    /// The foot it is (0 left, 1 right), if it is one.
    pub fn foot_index(self) -> Option<usize> {
        match self {
            Effector::Torso => None,
            Effector::LLeg => Some(0),
            Effector::RLeg => Some(1),
        }
    }
}

/// The whole body's orders, from ALMotion's API: small, they travel by value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Order {
    /// `wbEnable`.
    Enable(bool),
    /// `wbFootState`: the state of these feet (left, right).
    FootState { state: FootState, feet: [bool; 2] },
    /// `wbEnableBalanceConstraint`: the balance on or off, over these feet (left, right).
    Balance { enable: bool, feet: [bool; 2] },
    /// `wbGoToBalance`: the centre of mass over one foot (or between both: `None`) within
    /// `duration` s; it stays there. Ends with `Finished { id }`.
    GoToBalance { id: u64, foot: Option<Side>, duration: f64 },
    /// One key of a path being sent (`first`: its first key): its time (s from the path's
    /// start) and its target, in FRAME_TORSO as the command model had it when the call came.
    Key { effector: Effector, first: bool, time: f64, target: Transform },
    /// The keys sent since the last path of `effector` make its path, from now; the axes
    /// out of `axis_mask` keep the start's. `borrowed`: the whole body is not enabled, and
    /// drives the legs for this path only (a torso moved with both feet fixed). Ends with
    /// `Finished { id }`.
    Path { id: u64, effector: Effector, axis_mask: u8, borrowed: bool },
}

/// The most reports the whole body makes in one cycle besides its orders': each path and
/// `wbGoToBalance` ends once.
pub const MAX_REPORTS: usize = 4;

struct Running {
    id: Option<u64>,
    borrowed: bool,
    /// The path's keys are still in FRAME_TORSO as the call had it, its start not taken:
    /// the first cycle driving the legs takes both from the body as it is then.
    placed: bool,
    axis_mask: u8,
    elapsed: f64,
    path: Path,
    /// Keys being sent.
    staged: Path,
}

struct GoTo {
    id: u64,
    foot: Option<Side>,
    duration: f64,
    elapsed: f64,
    /// From where the centre of mass was to where it goes: taken in the first cycle that
    /// drives the legs, from the body as it is then.
    from_to: Option<([f64; 2], [f64; 2])>,
}

/// The whole body's state, made at start.
pub(super) struct WholeBodyControl {
    kinematics: Arc<Kinematics>,
    solver: WholeBody,
    /// The model's angles, refilled each cycle.
    angles: Vec<f64>,
    /// Per model leg joint (model index, motor).
    leg_joints: Vec<(usize, usize)>,
    leg_motors: u64,
    enabled: bool,
    /// The ground frame is placed: cleared whenever something else had the legs.
    anchored: bool,
    feet_state: [FootState; 2],
    balance: Option<[bool; 2]>,
    /// Where `wbGoToBalance` left the centre of mass.
    com_point: Option<[f64; 2]>,
    go_to: Option<GoTo>,
    /// Targets in the ground frame.
    torso: Transform,
    feet: [Transform; 2],
    /// The last cycle's torso (after the balance) and centre of mass.
    solved_torso: Transform,
    com: [f64; 3],
    paths: [Running; 3],
}

impl WholeBodyControl {
    /// For a body with NAO's legs and a kinematic model; `None` without them.
    pub(super) fn new(body: &Body) -> Option<WholeBodyControl> {
        let kinematics = body.kinematics.as_ref()?;
        let model = &kinematics.model;
        let joint = |name: &str| body.joints.iter().find(|joint| joint.name == name);
        let limits = model
            .joint_names()
            .iter()
            .map(|name| joint(name).map_or((0.0, 0.0), |joint| (joint.spec.min, joint.spec.max)))
            .collect();
        let solver = WholeBody::new(model, limits).ok()?;
        let mut leg_joints = Vec::new();
        for chain in [Chain::LLeg, Chain::RLeg] {
            for &index in model.chain_joints(chain) {
                leg_joints.push((index, joint(&model.joint_names()[index])?.motor));
            }
        }
        let leg_motors = leg_joints.iter().fold(0u64, |mask, (_, motor)| mask | 1 << motor);
        let running = || Running {
            id: None,
            borrowed: false,
            placed: false,
            axis_mask: 0,
            elapsed: 0.0,
            path: Path::new(),
            staged: Path::new(),
        };
        Some(WholeBodyControl {
            kinematics: Arc::clone(kinematics),
            solver,
            angles: vec![0.0; model.joint_names().len()],
            leg_joints,
            leg_motors,
            enabled: false,
            anchored: false,
            feet_state: [FootState::Fixed; 2],
            balance: None,
            com_point: None,
            go_to: None,
            torso: Transform::IDENTITY,
            feet: [Transform::IDENTITY; 2],
            solved_torso: Transform::IDENTITY,
            com: [0.0; 3],
            paths: [running(), running(), running()],
        })
    }

    /// The motors it drives while enabled.
    pub(super) fn leg_motors(&self) -> u64 {
        self.leg_motors
    }

    /// Enabled, or lent to a path while it runs.
    fn is_on(&self) -> bool {
        self.enabled || self.paths.iter().any(|running| running.id.is_some() && running.borrowed)
    }

    /// It drives the legs now.
    pub(super) fn is_driving(&self) -> bool {
        self.is_on() && self.anchored
    }

    /// End the paths and the `wbGoToBalance` with `id` (all of them: `None`).
    fn end(&mut self, id: Option<u64>, completed: bool, output: &mut EngineOutput) {
        for running in &mut self.paths {
            if running.id.is_some() && (id.is_none() || running.id == id) {
                output.reports.push(FromEngine::Finished { id: running.id.unwrap_or(0), completed });
                running.id = None;
            }
        }
        if let Some(go_to) = self.go_to.as_ref().filter(|go_to| id.is_none_or(|id| id == go_to.id)) {
            output.reports.push(FromEngine::Finished { id: go_to.id, completed });
            self.go_to = None;
        }
    }

    /// Each foot's state: the one `wbFootState` set, or, while the whole body is only lent
    /// to paths (NAOqi's classic Cartesian control), Free for a foot on a path and Fixed for
    /// the other.
    fn foot_states(&self) -> [FootState; 2] {
        if self.enabled {
            return self.feet_state;
        }
        [1, 2].map(|path| match self.paths[path].id {
            Some(_) => FootState::Free,
            None => FootState::Fixed,
        })
    }

    /// The feet that carry the robot (not free).
    fn support(&self) -> [bool; 2] {
        self.foot_states().map(|state| state != FootState::Free)
    }
}

impl Engine {
    /// Apply a whole-body order; the paths and goToBalance it ends go into `output`.
    pub(super) fn whole_body_order(&mut self, order: Order, output: &mut EngineOutput) {
        let Some(control) = &mut self.whole_body else {
            if let Order::GoToBalance { id, .. } | Order::Path { id, .. } = order {
                output.reports.push(FromEngine::Finished { id, completed: false });
            }
            return;
        };
        match order {
            Order::Enable(enable) => {
                if !enable {
                    control.end(None, false, output);
                    control.com_point = None;
                }
                control.enabled = enable;
                control.anchored = false;
            }
            Order::FootState { state, feet } => {
                for (foot, named) in control.feet_state.iter_mut().zip(feet) {
                    if named {
                        *foot = state;
                    }
                }
            }
            Order::Balance { enable, feet } => control.balance = enable.then_some(feet),
            Order::GoToBalance { id, foot, duration } => {
                if let Some(previous) = control.go_to.take() {
                    output.reports.push(FromEngine::Finished { id: previous.id, completed: false });
                }
                control.go_to = Some(GoTo { id, foot, duration, elapsed: 0.0, from_to: None });
            }
            Order::Key { effector, first, time, target } => {
                let staged = &mut control.paths[effector as usize].staged;
                if first {
                    staged.clear();
                }
                // The API never sends more keys than a path holds.
                let _ = staged.push(time, target);
            }
            Order::Path { id, effector, axis_mask, borrowed } => {
                let running = &mut control.paths[effector as usize];
                if let Some(previous) = running.id.replace(id) {
                    output.reports.push(FromEngine::Finished { id: previous, completed: false });
                }
                running.path.copy_from(&running.staged);
                running.staged.clear();
                running.elapsed = 0.0;
                running.borrowed = borrowed;
                running.placed = false;
                running.axis_mask = axis_mask;
            }
        }
    }

    /// `Kill(id)`, `killAll` and the fall manager end whole-body paths too.
    pub(super) fn whole_body_kill(&mut self, id: Option<u64>, output: &mut EngineOutput) {
        if let Some(control) = &mut self.whole_body {
            control.end(id, false, output);
        }
    }

    /// One whole-body cycle, after the tasks: the legs' positions go into the command
    /// model. Returns the motors it drove.
    pub(super) fn whole_body_step(&mut self, dt: f64, output: &mut EngineOutput) -> u64 {
        let walking = self.walking.as_ref().is_some_and(|walking| walking.is_active());
        let falling = self.fall.under_way();
        let Some(control) = &self.whole_body else { return 0 };
        let legs = (0..self.motors.len()).filter(|motor| control.leg_motors & (1 << motor) != 0);
        let leg_task = legs.clone().any(|motor| self.owner(motor, Channel::Position).is_some());
        // A limp leg holds nothing: driving it would only store angles that a later stiffening
        // would jump to.
        let limp = legs.clone().any(|motor| self.motors[motor].stiffness < WALKING_STIFFNESS);
        let Some(control) = &mut self.whole_body else { return 0 };
        if !control.is_on() || walking || falling || leg_task || limp {
            // Something else has the legs: the whole body starts again from where they are.
            control.anchored = false;
            control.end(None, false, output);
            return 0;
        }
        let kinematics = Arc::clone(&control.kinematics);
        let model = &kinematics.model;
        let motors = &self.motors;
        kinematics.angles_from_motors(|motor| motors[motor].position, &mut control.angles);
        if !control.anchored {
            let (torso, feet) = control.solver.anchor(model, &control.angles);
            control.torso = torso;
            control.feet = feet;
            control.solved_torso = torso;
            control.com = control.solver.com(model, &torso, &control.angles);
            control.anchored = true;
        }
        let states = control.foot_states();
        for (index, running) in control.paths.iter_mut().enumerate() {
            let Some(id) = running.id else { continue };
            if !running.placed {
                // From the torso (after the balance) as it is now: its keys' FRAME_TORSO.
                let torso_now = control.solved_torso;
                let start = match index {
                    0 => {
                        control.torso = torso_now;
                        torso_now
                    }
                    foot => control.feet[foot - 1],
                };
                let mask = running.axis_mask;
                running.path.set_start(start);
                running.path.map_targets(|target| masked(&start, &torso_now.then(target), mask));
                running.placed = true;
            }
            running.elapsed += dt;
            let target = running.path.at(running.elapsed);
            match index {
                0 => control.torso = target,
                foot => {
                    control.feet[foot - 1] = on_the_ground(&target, states[foot - 1]);
                }
            }
            if running.elapsed >= running.path.duration() {
                running.id = None;
                output.reports.push(FromEngine::Finished { id, completed: true });
            }
        }
        let com = match control.go_to.as_mut() {
            Some(go_to) => {
                let (from, to) = *go_to.from_to.get_or_insert_with(|| {
                    let to = match go_to.foot {
                        Some(side) => over_foot(&control.feet, side),
                        None => naobroker_balance::support_polygon(&control.feet, [true, true]).centre(),
                    };
                    ([control.com[0], control.com[1]], to)
                });
                go_to.elapsed += dt;
                let fraction = (go_to.elapsed / go_to.duration).clamp(0.0, 1.0);
                let eased = fraction * fraction * (3.0 - 2.0 * fraction);
                let point = [0, 1].map(|axis| from[axis] + (to[axis] - from[axis]) * eased);
                if fraction >= 1.0 {
                    output.reports.push(FromEngine::Finished { id: go_to.id, completed: true });
                    control.com_point = Some(to);
                    control.go_to = None;
                }
                ComGoal::At(point)
            }
            None => match (control.com_point, control.balance) {
                (Some(point), _) => ComGoal::At(point),
                (None, Some(_)) => ComGoal::Within,
                // Lent to a torso path: the centre of mass stays over both feet; a foot moved
                // by the classic control is not balanced for, as NAOqi's is not.
                (None, None) if !control.enabled && control.support() == [true; 2] => ComGoal::Within,
                (None, None) => ComGoal::Free,
            },
        };
        let support = control.support();
        let support = match control.balance {
            Some(feet) if feet.iter().zip(support).any(|(&chosen, carries)| chosen && carries) => {
                [feet[0] && support[0], feet[1] && support[1]]
            }
            _ => support,
        };
        let goal = Goal { torso: control.torso, feet: control.feet, support, com };
        let solved = control.solver.solve(model, &goal, &mut control.angles);
        control.solved_torso = solved.torso;
        control.com = solved.com;
        let mut driven = 0u64;
        for &(joint, motor) in &control.leg_joints {
            let spec = &self.body.motors[motor].spec;
            let state = &mut self.motors[motor];
            let angle = limit_step(state.position, control.angles[joint], spec.max_velocity * dt);
            state.position = angle.max(spec.min).min(spec.max);
            state.sent_position = Some(state.position);
            state.idle_cycles = 0;
            driven |= 1 << motor;
        }
        driven
    }

    /// The motors the whole body drives this cycle (the command model follows them, not the
    /// DCM's echo of last cycle's command).
    pub(super) fn whole_body_motors(&self) -> u64 {
        self.whole_body.as_ref().filter(|control| control.is_driving()).map_or(0, |c| c.leg_motors())
    }
}

/// A foot target as its state allows it: on the ground, flat (Fixed, Plane), or anywhere.
fn on_the_ground(target: &Transform, state: FootState) -> Transform {
    match state {
        FootState::Free => *target,
        FootState::Fixed | FootState::Plane => {
            let [x, y, _, _, _, yaw] = target.to_position6d();
            Transform::from_position6d([x, y, 0.0, 0.0, 0.0, yaw])
        }
    }
}

/// `target` with the Position6D components out of `axis_mask` (bit 0 x … bit 5 wz) taken
/// from `start`.
fn masked(start: &Transform, target: &Transform, axis_mask: u8) -> Transform {
    let (from, to) = (start.to_position6d(), target.to_position6d());
    Transform::from_position6d([0, 1, 2, 3, 4, 5].map(|axis| {
        if axis_mask & 1 << axis != 0 {
            to[axis]
        } else {
            from[axis]
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plane_foot_stays_flat_on_the_ground_a_free_one_goes_anywhere() {
        let target = Transform::from_position6d([0.05, -0.1, 0.03, 0.2, -0.1, 0.3]);
        let flat = on_the_ground(&target, FootState::Plane).to_position6d();
        assert!(
            flat.iter().zip([0.05, -0.1, 0.0, 0.0, 0.0, 0.3]).all(|(a, b)| (a - b).abs() < 1e-12),
            "{flat:?}"
        );
        assert_eq!(on_the_ground(&target, FootState::Free), target);
    }

    #[test]
    fn an_axis_mask_keeps_the_start_on_the_axes_it_leaves_out() {
        let start = Transform::from_position6d([0.1, 0.2, 0.3, 0.0, 0.0, 0.1]);
        let target = Transform::from_position6d([0.4, 0.5, 0.6, 0.1, 0.2, 0.3]);
        let position_only = masked(&start, &target, 7).to_position6d();
        let expected = [0.4, 0.5, 0.6, 0.0, 0.0, 0.1];
        assert!(position_only.iter().zip(expected).all(|(a, b)| (a - b).abs() < 1e-12), "{position_only:?}");
        let z_only = masked(&start, &target, 4).to_position6d();
        assert!((z_only[0] - 0.1).abs() < 1e-12 && (z_only[2] - 0.6).abs() < 1e-12, "{z_only:?}");
    }
}
