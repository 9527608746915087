//! The simulated NAO: MuJoCo stepping the generated model, each joint's servo driven by its
//! position and stiffness commands, and what the robot's sensors read of the state. The
//! ground truth (`truth`) and the pushes are for tests and tools: the robot itself only
//! reads its sensors.

use naobroker_kinematics::transform::{rotate, rotation_to_rpy, Rotation};
use naobroker_mujoco::{Object, Simulation};
use naobroker_robot::physics::{PhysicsDescription, ServoGroup};
use naobroker_simbody::{JointLimits, Noise, SimJoint, POSITION_NOISE_RAD};

use crate::mjcf::{self, ACCELEROMETER, BUMPER_SIDES, FEET, FSR_NAMES, GYROSCOPE, IMU_SITE, TORSO};
use crate::robot::RobotModel;
use crate::world::World;
use crate::PhysicsError;

/// Standard gravity: the FSRs read kilograms.
pub const GRAVITY: f64 = 9.81;
/// The robot is fallen when its torso leans further than this from upright (rad, 57°):
/// past any posture it stands, crouches or sits in.
pub const FALLEN_TILT_RAD: f64 = 1.0;
/// A bumper reads pressed above this contact force (N).
const BUMPER_PRESSED_N: f64 = 1.0;
/// Motors warm by this many kelvin per A² at steady state, with this time constant (s):
/// a joint drawing 1 A for minutes ends 20 K above the room.
const HEATING_K_PER_A2: f64 = 20.0;
const THERMAL_TIME_CONSTANT_S: f64 = 120.0;
const ROOM_TEMPERATURE_C: f64 = 30.0;
/// Simulated time the robot settles on the ground, limp, before the first cycle: what a
/// NAO does before LoLA starts.
const SETTLE_S: f64 = 0.5;

/// What the robot's inertial unit reports, in LoLA's conventions: the accelerometer reads
/// (0, 0, -9.81) m/s² upright and still (the negated specific force), the gyroscope is
/// right-handed about the torso's axes (rad/s), the angles are the torso's roll (AngleX,
/// positive leaning right) and pitch (AngleY, positive leaning forward).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct InertialReading {
    pub accelerometer: [f64; 3],
    pub gyroscope: [f64; 3],
    pub angles: [f64; 2],
}

/// Ground truth, world frame (x forward of where the robot started, z up, origin at its
/// start): not something the robot can sense.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Truth {
    /// Simulated seconds since the first cycle.
    pub time_s: f64,
    /// The torso frame's origin and its roll, pitch, yaw (rad; yaw about z, then pitch
    /// about y, then roll about x).
    pub torso: [f64; 6],
    /// The whole robot's centre of mass.
    pub com: [f64; 3],
    /// The torso leans more than [`FALLEN_TILT_RAD`] from upright.
    pub fallen: bool,
    /// Each foot's (left, right) ankle on the ground: x, y and its yaw (rad), for a robot
    /// with NAO's legs.
    pub feet: Option<[[f64; 3]; 2]>,
    /// Each ankle's (left, right) height above the ground (m): a foot lifted shows here.
    pub ankle_heights: Option<[f64; 2]>,
}

/// One commanded joint.
enum Joint {
    /// Moved by MuJoCo through its servo.
    Physical(Servoed),
    /// A joint the model has no body for (the hands' fingers): its one value follows the
    /// command as the kinematic simulator's joints do.
    Kinematic { joint: SimJoint, target: f64, stiffness: f64 },
}

struct Servoed {
    qpos: usize,
    dof: usize,
    actuator: usize,
    servo: ServoGroup,
    min: f64,
    max: f64,
    /// The motor's no-load speed at the joint (rad/s): its torque falls to 0 there.
    max_velocity: f64,
    target: f64,
    stiffness: f64,
    torque: f64,
    temperature: f64,
    /// Where the gearbox's static friction holds the joint (see `gearbox_friction`).
    stuck_at: f64,
}

struct Sonar {
    site: usize,
    /// Its axis in the torso's frame.
    axis: [f64; 3],
    max_range_m: f64,
}

struct Push {
    force: [f64; 3],
    remaining_s: f64,
}

/// The physically simulated robot.
pub struct PhysicalBody {
    sim: Simulation,
    joints: Vec<Joint>,
    torso: usize,
    /// The LAnkleRoll and RAnkleRoll bodies, when the robot has them.
    ankles: Option<[usize; 2]>,
    accelerometer: usize,
    gyroscope: usize,
    imu_site: usize,
    /// Per foot (left, right), the FSR spheres in LoLA's order, and the bumpers (left, right).
    fsr_geoms: [[usize; 4]; 2],
    bumper_geoms: [[usize; 2]; 2],
    sonars: Vec<Sonar>,
    push: Option<Push>,
    noise: Noise,
    encoder_step_rad: f64,
    start_time_s: f64,
}

impl PhysicalBody {
    /// The robot of the description in `world`, commanded through `joints` (names, in the
    /// caller's order: LoLA's, say), resting crouched and limp on the ground.
    pub fn new(robot: &RobotModel, world: World, joints: &[&str]) -> Result<PhysicalBody, PhysicsError> {
        let RobotModel { kinematics, ranges, physics } = robot;
        let xml = mjcf::generate(kinematics, ranges, physics, world)?;
        let sim = Simulation::from_xml(&xml)?;
        let id = |kind: Object, name: &str| {
            sim.id(kind, name).ok_or_else(|| PhysicsError::NotInModel(name.to_owned()))
        };
        let mut commanded = Vec::with_capacity(joints.len());
        for &name in joints {
            let range = ranges
                .iter()
                .find(|range| range.name == name)
                .ok_or_else(|| PhysicsError::NoRange(name.into()))?;
            let joint = match (sim.id(Object::Joint, name), sim.id(Object::Actuator, name)) {
                (Some(joint), Some(actuator)) => Joint::Physical(Servoed {
                    qpos: sim.joint_qpos_address(joint),
                    dof: sim.joint_dof_address(joint),
                    actuator,
                    servo: physics.servo(name).ok_or_else(|| PhysicsError::NoServo(name.into()))?.clone(),
                    min: range.min,
                    max: range.max,
                    max_velocity: range.max_velocity,
                    target: 0.0,
                    stiffness: 0.0,
                    torque: 0.0,
                    temperature: ROOM_TEMPERATURE_C,
                    stuck_at: 0.0,
                }),
                _ => Joint::Kinematic {
                    joint: SimJoint::new(JointLimits {
                        min: range.min,
                        max: range.max,
                        max_velocity: range.max_velocity,
                    }),
                    target: 0.0,
                    stiffness: 0.0,
                },
            };
            commanded.push(joint);
        }
        let sensor = |name: &str| id(Object::Sensor, name).map(|sensor| sim.sensor_span(sensor).0);
        let fsr_geoms = [0, 1].map(|foot| FSR_NAMES.map(|fsr| format!("{}/FSR/{fsr}", FEET[foot].0)));
        let bumper_geoms =
            [0, 1].map(|foot| BUMPER_SIDES.map(|side| format!("{}/Bumper/{side}", FEET[foot].0)));
        let geoms =
            |names: &[String]| names.iter().map(|name| id(Object::Geom, name)).collect::<Result<Vec<_>, _>>();
        let sonars = physics
            .sonars
            .iter()
            .map(|sonar| {
                let (yaw, pitch) = (sonar.yaw_rad, sonar.pitch_down_rad);
                Ok(Sonar {
                    site: id(Object::Site, &format!("US/{}", sonar.side))?,
                    axis: [yaw.cos() * pitch.cos(), yaw.sin() * pitch.cos(), -pitch.sin()],
                    max_range_m: sonar.max_range_m,
                })
            })
            .collect::<Result<Vec<_>, PhysicsError>>()?;
        let mut body = PhysicalBody {
            torso: id(Object::Body, TORSO)?,
            ankles: sim
                .id(Object::Body, "LAnkleRoll")
                .zip(sim.id(Object::Body, "RAnkleRoll"))
                .map(|(l, r)| [l, r]),
            accelerometer: sensor(ACCELEROMETER)?,
            gyroscope: sensor(GYROSCOPE)?,
            imu_site: id(Object::Site, IMU_SITE)?,
            fsr_geoms: [geoms(&fsr_geoms[0])?, geoms(&fsr_geoms[1])?]
                .map(|ids| [ids[0], ids[1], ids[2], ids[3]]),
            bumper_geoms: [geoms(&bumper_geoms[0])?, geoms(&bumper_geoms[1])?].map(|ids| [ids[0], ids[1]]),
            sonars,
            sim,
            joints: commanded,
            push: None,
            noise: Noise::default(),
            encoder_step_rad: std::f64::consts::TAU / f64::from(physics.encoder_counts_per_turn.max(1)),
            start_time_s: 0.0,
        };
        body.place_on_the_ground(physics)?;
        for joint in &mut body.joints {
            if let Joint::Physical(servoed) = joint {
                servoed.stuck_at = body.sim.qpos()[servoed.qpos];
            }
        }
        for _ in 0..(SETTLE_S / body.sim.timestep()).round() as usize {
            body.step_once();
        }
        body.start_time_s = body.sim.time();
        for joint in &mut body.joints {
            if let Joint::Physical(servoed) = joint {
                servoed.target = body.sim.qpos()[servoed.qpos];
            }
        }
        Ok(body)
    }

    /// The start pose, the feet flat on the ground, the torso above the origin.
    fn place_on_the_ground(&mut self, physics: &PhysicsDescription) -> Result<(), PhysicsError> {
        for (name, angle) in &physics.start {
            let joint =
                self.sim.id(Object::Joint, name).ok_or_else(|| PhysicsError::NotInModel(name.clone()))?;
            let address = self.sim.joint_qpos_address(joint);
            self.sim.qpos_mut()[address] = *angle;
        }
        // The torso's free joint: position, then orientation (w, x, y, z).
        let free = self.sim.id(Object::Joint, TORSO).ok_or_else(|| PhysicsError::NotInModel(TORSO.into()))?;
        let free = self.sim.joint_qpos_address(free);
        self.sim.qpos_mut()[free..free + 7].copy_from_slice(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
        self.sim.forward();
        // Turn the torso (about a horizontal axis only) so that the soles' mean normal points
        // up: the feet lie flat, the robot faces +x.
        let mut normal = [0.0; 3];
        for (_, ankle) in FEET {
            let foot =
                self.sim.id(Object::Body, ankle).ok_or_else(|| PhysicsError::NotInModel(ankle.into()))?;
            let rotation = rotation_of(self.sim.body_quaternion(foot));
            (0..3).for_each(|row| normal[row] += rotation[row][2]);
        }
        let length = normal.iter().map(|v| v * v).sum::<f64>().sqrt();
        let [nx, ny, nz] = normal.map(|v| v / length);
        // The rotation taking n to z: about n × z = (ny, -nx, 0) by acos(nz).
        let sine = (nx * nx + ny * ny).sqrt();
        let half = nz.clamp(-1.0, 1.0).acos() / 2.0;
        let quaternion = if sine < 1e-12 {
            [1.0, 0.0, 0.0, 0.0]
        } else {
            [half.cos(), half.sin() * ny / sine, -half.sin() * nx / sine, 0.0]
        };
        self.sim.qpos_mut()[free + 3..free + 7].copy_from_slice(&quaternion);
        self.sim.forward();
        let radius = physics.feet.fsr_radius_m;
        let lowest = self
            .fsr_geoms
            .iter()
            .flatten()
            .map(|&geom| self.sim.geom_position(geom)[2] - radius)
            .fold(f64::INFINITY, f64::min);
        self.sim.qpos_mut()[free + 2] = -lowest;
        self.sim.forward();
        Ok(())
    }

    /// Move every commanded joint, stiff, from where it is measured to `targets` (in the order
    /// given to [`PhysicalBody::new`]) over `seconds`, on a smooth ramp, one command per
    /// `cycle_s`, as ALMotion interpolates: how tests and tools stand the robot up.
    pub fn ramp_to(&mut self, targets: &[f64], seconds: f64, cycle_s: f64) {
        let from: Vec<f64> = (0..self.joints.len()).map(|joint| self.measured_position(joint)).collect();
        let cycles = (seconds / cycle_s).round().max(1.0) as usize;
        for cycle in 1..=cycles {
            let along = cycle as f64 / cycles as f64;
            let eased = along * along * (3.0 - 2.0 * along);
            for (joint, (from, to)) in from.iter().zip(targets).enumerate() {
                self.command(joint, from + (to - from) * eased, 1.0);
            }
            self.advance(cycle_s);
        }
    }

    /// Command `joint` (in the order given to [`PhysicalBody::new`]): a target angle (rad,
    /// within its range) and a stiffness (0..1, the fraction of the motor's torque).
    pub fn command(&mut self, joint: usize, position: f64, stiffness: f64) {
        match &mut self.joints[joint] {
            Joint::Physical(servoed) => {
                servoed.target = position.clamp(servoed.min, servoed.max);
                servoed.stiffness = stiffness.clamp(0.0, 1.0);
            }
            Joint::Kinematic { target, stiffness: kept, .. } => (*target, *kept) = (position, stiffness),
        }
    }

    /// Simulate `seconds` (whole MuJoCo steps) with the commands as they are.
    pub fn advance(&mut self, seconds: f64) {
        let steps = (seconds / self.sim.timestep()).round() as usize;
        for _ in 0..steps {
            self.step_once();
        }
        for joint in &mut self.joints {
            if let Joint::Kinematic { joint, target, stiffness } = joint {
                joint.drive(*target, *stiffness, seconds);
            }
        }
    }

    /// One MuJoCo step: each servo's torque, the push, the motors' heat.
    fn step_once(&mut self) {
        let dt = self.sim.timestep();
        for joint in &mut self.joints {
            let Joint::Physical(servoed) = joint else { continue };
            let (angle, speed) = (self.sim.qpos()[servoed.qpos], self.sim.qvel()[servoed.dof]);
            let servo = &servoed.servo;
            let wanted = servo.kp_nm_per_rad * (servoed.target - angle) - servo.kd_nm_s_per_rad * speed;
            // A DC motor's torque falls linearly with its speed, to nothing at its no-load
            // speed: driving the way it turns, the joint cannot outrun its top speed.
            let speeding = if wanted * speed > 0.0 { speed.abs() / servoed.max_velocity } else { 0.0 };
            let limit = servoed.stiffness * servo.stall_torque_nm * (1.0 - speeding).max(0.0);
            servoed.torque = wanted.clamp(-limit, limit);
            let amps_per_nm = servo.amps_per_nm;
            let friction = gearbox_friction(servoed, angle);
            self.sim.ctrl_mut()[servoed.actuator] = servoed.torque + friction;
            let current = servoed.torque.abs() * amps_per_nm;
            let heating = HEATING_K_PER_A2 * current * current - (servoed.temperature - ROOM_TEMPERATURE_C);
            servoed.temperature += dt * heating / THERMAL_TIME_CONSTANT_S;
        }
        let force = match &mut self.push {
            Some(push) if push.remaining_s > 0.0 => {
                push.remaining_s -= dt;
                push.force
            }
            _ => {
                self.push = None;
                [0.0; 3]
            }
        };
        let torso = self.torso;
        self.sim.applied_force_mut(torso)[..3].copy_from_slice(&force);
        self.sim.step();
    }

    /// Push the torso with `force` (N, world frame) for `seconds` of simulated time.
    pub fn push(&mut self, force: [f64; 3], seconds: f64) {
        self.push = Some(Push { force, remaining_s: seconds });
    }

    /// The angle `joint`'s encoder reads: the true angle with a little noise, in whole
    /// encoder counts (each call draws new noise).
    pub fn measured_position(&mut self, joint: usize) -> f64 {
        let angle = match &self.joints[joint] {
            Joint::Physical(servoed) => self.sim.qpos()[servoed.qpos],
            Joint::Kinematic { joint, .. } => joint.position(),
        };
        let noisy = angle + self.noise.draw() * POSITION_NOISE_RAD;
        (noisy / self.encoder_step_rad).round() * self.encoder_step_rad
    }

    /// The stiffness applied.
    pub fn stiffness(&self, joint: usize) -> f64 {
        match &self.joints[joint] {
            Joint::Physical(servoed) => servoed.stiffness,
            Joint::Kinematic { joint, .. } => joint.stiffness(),
        }
    }

    /// The motor's current (A): grows with the torque it gives.
    pub fn current(&self, joint: usize) -> f64 {
        match &self.joints[joint] {
            Joint::Physical(servoed) => servoed.torque.abs() * servoed.servo.amps_per_nm,
            Joint::Kinematic { joint, .. } => joint.current(),
        }
    }

    /// The motor's temperature (°C): warms with the current drawn, cools towards the room.
    pub fn temperature(&self, joint: usize) -> f64 {
        match &self.joints[joint] {
            Joint::Physical(servoed) => servoed.temperature,
            Joint::Kinematic { joint, .. } => joint.temperature(),
        }
    }

    /// The torque the motor gives now (N·m), for tests and tools.
    pub fn torque(&self, joint: usize) -> f64 {
        match &self.joints[joint] {
            Joint::Physical(servoed) => servoed.torque,
            Joint::Kinematic { .. } => 0.0,
        }
    }

    /// The inertial unit.
    pub fn inertial(&self) -> InertialReading {
        let data = self.sim.sensordata();
        let specific_force =
            [data[self.accelerometer], data[self.accelerometer + 1], data[self.accelerometer + 2]];
        let rotation = self.sim.site_rotation(self.imu_site);
        let [roll, pitch, _] = rotation_to_rpy(&rotation);
        InertialReading {
            accelerometer: specific_force.map(|value| -value),
            gyroscope: [data[self.gyroscope], data[self.gyroscope + 1], data[self.gyroscope + 2]],
            angles: [roll, pitch],
        }
    }

    /// The force sensors (kg), per foot (left, right) in LoLA's order: the weight each
    /// sensor's sphere carries.
    pub fn fsr(&self) -> [[f64; 4]; 2] {
        self.contact_forces(&self.fsr_geoms).map(|foot| foot.map(|newtons| newtons / GRAVITY))
    }

    /// The foot bumpers, per foot (left, right): [left, right] pressed.
    pub fn bumpers(&self) -> [[bool; 2]; 2] {
        self.contact_forces(&self.bumper_geoms).map(|foot| foot.map(|newtons| newtons > BUMPER_PRESSED_N))
    }

    /// Per foot, the normal force (N) of the last step's contacts on each of its `geoms`.
    fn contact_forces<const N: usize>(&self, geoms: &[[usize; N]; 2]) -> [[f64; N]; 2] {
        let mut forces = [[0.0; N]; 2];
        for contact in self.sim.contacts() {
            for (foot, geoms) in geoms.iter().enumerate() {
                if let Some(index) = geoms.iter().position(|geom| contact.geoms.contains(geom)) {
                    forces[foot][index] += contact.normal_force;
                }
            }
        }
        forces
    }

    /// What each sonar (in the description's order) measures: the distance to the nearest
    /// object of the world (not the ground) along its axis, or its maximum range; `None` for
    /// a sonar the description does not have.
    pub fn sonar(&self, sonar: usize) -> Option<f64> {
        let sonar = self.sonars.get(sonar)?;
        let from = self.sim.site_position(sonar.site);
        let rotation = self.sim.site_rotation(sonar.site);
        let axis = rotate(&rotation, sonar.axis);
        let objects = 0;
        let echo =
            self.sim.ray(from, axis, Some(objects), None).filter(|&distance| distance < sonar.max_range_m);
        Some(echo.unwrap_or(sonar.max_range_m))
    }

    /// Ground truth, for tests and tools.
    pub fn truth(&self) -> Truth {
        let position = self.sim.body_position(self.torso);
        let rotation = rotation_of(self.sim.body_quaternion(self.torso));
        let [roll, pitch, yaw] = rotation_to_rpy(&rotation);
        Truth {
            time_s: self.sim.time() - self.start_time_s,
            torso: [position[0], position[1], position[2], roll, pitch, yaw],
            com: self.sim.subtree_com(self.torso),
            fallen: rotation[2][2].clamp(-1.0, 1.0).acos() > FALLEN_TILT_RAD,
            feet: self.ankles.map(|ankles| {
                ankles.map(|ankle| {
                    let [x, y, _] = self.sim.body_position(ankle);
                    let [_, _, yaw] = rotation_to_rpy(&rotation_of(self.sim.body_quaternion(ankle)));
                    [x, y, yaw]
                })
            }),
            ankle_heights: self.ankles.map(|ankles| ankles.map(|ankle| self.sim.body_position(ankle)[2])),
        }
    }

    /// The model's total mass (kg).
    pub fn mass(&self) -> f64 {
        self.sim.subtree_mass(self.torso)
    }
}

/// How far a joint held by the gearbox's static friction gives before it slips (rad).
const FRICTION_SLACK_RAD: f64 = 0.005;

/// The gearbox's dry friction on `joint` at `angle` (N·m): a spring to where the joint stuck,
/// never stronger than the servo's `friction_nm`, so that it holds a limp joint against any load below that
/// for as long as it lasts (MuJoCo's own `frictionloss` is a soft constraint: under a steady
/// load a limp crouching robot crept and fell after minutes), and past it the joint slips,
/// dragging the sticking point along.
fn gearbox_friction(joint: &mut Servoed, angle: f64) -> f64 {
    let friction = joint.servo.friction_nm;
    let stiffness = friction / FRICTION_SLACK_RAD;
    let pull = stiffness * (joint.stuck_at - angle);
    if pull.abs() > friction {
        joint.stuck_at = angle + FRICTION_SLACK_RAD * pull.signum();
        return friction * pull.signum();
    }
    pull
}

/// A unit quaternion `[w, x, y, z]` as a rotation matrix.
fn rotation_of([w, x, y, z]: [f64; 4]) -> Rotation {
    [
        [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y)],
        [2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x)],
        [2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y)],
    ]
}
