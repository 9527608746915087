//! The `[physics]` section of a robot description: what the simulation adds to the
//! kinematic and mass model (`[kinematics]`): servos, collision shapes, the feet's force
//! sensors and bumpers, the inertial unit, the sonars, the pose the robot starts in.

use std::collections::BTreeMap;

use serde::Deserialize;

/// A `[physics]` step that does not divide LoLA's cycle.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("[physics] timestep_s {0} does not divide LoLA's 12 ms cycle")]
pub struct TimestepError(pub f64);

/// `[physics]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhysicsDescription {
    /// MuJoCo's step, seconds; a LoLA cycle (12 ms) must be a whole number of them.
    pub timestep_s: f64,
    /// Sliding friction between the robot and the ground.
    pub ground_friction: f64,
    /// Encoder counts per turn of a joint's angle sensor (its resolution).
    pub encoder_counts_per_turn: u32,
    #[serde(rename = "servo")]
    pub servos: Vec<ServoGroup>,
    #[serde(rename = "shape")]
    pub shapes: Vec<Shape>,
    pub feet: Feet,
    pub imu: Imu,
    #[serde(rename = "sonar")]
    pub sonars: Vec<Sonar>,
    /// Joints without a motor of their own, each following another's angle (NAO's
    /// RHipYawPitch follows LHipYawPitch: one motor moves both).
    #[serde(default)]
    pub coupled: BTreeMap<String, String>,
    /// Joint angles (rad) the robot starts in, resting on the ground; joints left out start at 0.
    pub start: BTreeMap<String, f64>,
}

/// The motors of some joints: a position servo whose torque is limited to stiffness ×
/// `stall_torque_nm` (NAOqi's stiffness is the motor's torque limit), behind a gearbox.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServoGroup {
    pub joints: Vec<String>,
    /// Torque at stiffness 1, N·m at the joint.
    pub stall_torque_nm: f64,
    /// Proportional gain of the position loop, N·m/rad.
    pub kp_nm_per_rad: f64,
    /// Derivative gain of the position loop, N·m·s/rad (limited with the rest of the torque).
    pub kd_nm_s_per_rad: f64,
    /// Passive viscous damping (the motor's back EMF and the gears), N·m·s/rad.
    pub damping_nm_s_per_rad: f64,
    /// The rotor's inertia seen through the gearbox, kg·m².
    pub armature_kg_m2: f64,
    /// Dry friction of the gearbox, N·m: what holds a limp joint.
    pub friction_nm: f64,
    /// Motor current per N·m of torque, A.
    pub amps_per_nm: f64,
}

/// A primitive collision shape on a link (the torso, or the link a joint moves), in that
/// joint's frame, metres.
/// (Unknown keys are refused by the shape's kind: serde cannot refuse them on a flattened struct.)
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Shape {
    /// "Torso" or a joint's name.
    pub link: String,
    /// What it touches (the world, by default).
    #[serde(default)]
    pub touches: Touches,
    #[serde(flatten)]
    pub kind: ShapeKind,
}

/// What a shape collides with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Touches {
    /// The ground and the world's objects: the shapes the robot stands, sits and lies on.
    #[default]
    World,
    /// The world and the robot's own body: an arm's (crouching, the hands rest on the knees).
    WorldAndBody,
    /// Only the arms: the body as the arms meet it (Aldebaran's self-collision shapes,
    /// slimmer than those the robot lies on).
    Arms,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum ShapeKind {
    Box {
        centre_m: [f64; 3],
        half_size_m: [f64; 3],
    },
    Sphere {
        centre_m: [f64; 3],
        radius_m: f64,
    },
    Capsule {
        from_m: [f64; 3],
        to_m: [f64; 3],
        radius_m: f64,
    },
    /// Flat-ended, as Aldebaran's self-collision cylinders are where a capsule's round ends
    /// would reach past them by a radius.
    Cylinder {
        from_m: [f64; 3],
        to_m: [f64; 3],
        radius_m: f64,
    },
}

/// The feet, on the ankle rolls' links. The left foot's numbers; the right foot's force
/// sensors are given too (the robot's are not mirrored exactly), its bumpers mirrored.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Feet {
    /// The sole's height below the ankle, m (positive).
    pub sole_below_ankle_m: f64,
    /// The sole's outline around the ankle, m: [back, front, right, left] extents (x, y).
    pub sole_m: [f64; 4],
    /// The force sensors' centres (x, y, m) in the ankle's frame, in LoLA's order: front
    /// left, front right, rear left, rear right.
    pub left_fsr_m: [[f64; 2]; 4],
    pub right_fsr_m: [[f64; 2]; 4],
    /// Each sensor is a small sphere under the sole: it carries the weight that lands there.
    pub fsr_radius_m: f64,
    /// The left foot's bumpers' centres (left, right; x, y, z in the ankle's frame) and
    /// half sizes, at the toe.
    pub bumper_m: [[f64; 3]; 2],
    pub bumper_half_size_m: [f64; 3],
}

/// The inertial unit, in the torso.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Imu {
    pub position_m: [f64; 3],
}

/// One sonar, in the torso: where it is and where it looks.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sonar {
    /// "Left" or "Right".
    pub side: String,
    pub position_m: [f64; 3],
    /// Its axis: turned left of straight ahead (rad), and down (rad).
    pub yaw_rad: f64,
    pub pitch_down_rad: f64,
    /// What it reports with nothing in range, m.
    pub max_range_m: f64,
}

impl PhysicsDescription {
    /// The step divides LoLA's 12 ms cycle: a simulator answers each cycle after a whole
    /// number of steps.
    pub(crate) fn check(&self) -> Result<(), TimestepError> {
        let cycle_steps = 0.012 / self.timestep_s;
        if !(self.timestep_s > 0.0 && (cycle_steps - cycle_steps.round()).abs() < 1e-9) {
            return Err(TimestepError(self.timestep_s));
        }
        Ok(())
    }

    /// The servo group of `joint`.
    pub fn servo(&self, joint: &str) -> Option<&ServoGroup> {
        self.servos.iter().find(|group| group.joints.iter().any(|name| name == joint))
    }
}
