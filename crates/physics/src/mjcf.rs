//! The MJCF model generated from the robot description: one body per link of the kinematic
//! model (`[kinematics]`: offsets, axes, masses, centres of mass, inertias), the joints'
//! ranges, a motor per servo (`[physics]`), the collision shapes, the feet's force-sensor
//! spheres and bumpers, the inertial unit and the sonars. The kinematics, the collision
//! checker and the physics read the same numbers.

use std::fmt::Write;

use naobroker_robot::kinematics::Description;
use naobroker_robot::physics::{PhysicsDescription, ShapeKind, Touches};

use crate::world::World;
use crate::PhysicsError;

/// A joint's range (rad) and top speed (rad/s), as the robot description's `[[joint]]`
/// gives them.
#[derive(Debug, Clone, PartialEq)]
pub struct JointRange {
    pub name: String,
    pub min: f64,
    pub max: f64,
    pub max_velocity: f64,
}

/// Collision bits (MuJoCo's contype, conaffinity) of the robot's shapes. Two geoms collide
/// when one's contype shares a bit with the other's conaffinity: the world is (1, 3), so
/// (2, 1) touches the world only, (6, 1) the world and the (0, 4) shapes, which touch only
/// those.
fn collision_bits(touches: Touches) -> (u8, u8) {
    match touches {
        Touches::World => (2, 1),
        Touches::WorldAndBody => (6, 1),
        Touches::Arms => (0, 4),
    }
}
/// Geom group of the robot's own shapes (the world's are group 0).
pub const ROBOT_GROUP: usize = 1;
/// The foot force sensors' names, in LoLA's order, and the foot prefixes.
pub const FSR_NAMES: [&str; 4] = ["FrontLeft", "FrontRight", "RearLeft", "RearRight"];
pub const FEET: [(&str, &str); 2] = [("LFoot", "LAnkleRoll"), ("RFoot", "RAnkleRoll")];
pub const BUMPER_SIDES: [&str; 2] = ["Left", "Right"];
/// The site of the inertial unit and its two MuJoCo sensors.
pub const IMU_SITE: &str = "InertialSensor";
pub const ACCELEROMETER: &str = "Accelerometer";
pub const GYROSCOPE: &str = "Gyroscope";
/// The torso's body and free joint.
pub const TORSO: &str = "Torso";

/// The MJCF document of the robot in `world`.
pub fn generate(
    kinematics: &Description,
    ranges: &[JointRange],
    physics: &PhysicsDescription,
    world: World,
) -> Result<String, PhysicsError> {
    let mut out = String::new();
    let _ = writeln!(out, "<mujoco model=\"NAO V6 (naobroker)\">");
    let _ = writeln!(out, "  <compiler angle=\"radian\" autolimits=\"true\"/>");
    let _ = writeln!(out, "  <option timestep=\"{}\" integrator=\"implicitfast\"/>", physics.timestep_s);
    // Each robot shape says what it touches (collision_bits).
    let _ = writeln!(
        out,
        "  <default><geom group=\"{ROBOT_GROUP}\" condim=\"3\" \
         friction=\"{} 0.005 0.0001\"/></default>",
        physics.ground_friction
    );
    let _ = writeln!(out, "  <worldbody>");
    world.write_mjcf(physics.ground_friction, &mut out);
    let _ = writeln!(out, "    <body name=\"{TORSO}\">");
    let _ = writeln!(out, "      <freejoint name=\"{TORSO}\"/>");
    write_inertial(
        &mut out,
        TORSO,
        kinematics.torso.mass_kg,
        kinematics.torso.com_m,
        kinematics.torso.inertia_kg_m2,
    )?;
    write_link_extras(&mut out, TORSO, physics, 6);
    write_children(&mut out, TORSO, kinematics, ranges, physics, 6)?;
    let _ = writeln!(out, "    </body>");
    let _ = writeln!(out, "  </worldbody>");
    write_couplings(&mut out, physics)?;
    let _ = writeln!(out, "  <actuator>");
    for joint in kinematics.joints.iter().filter(|joint| joint.axis.is_some()) {
        if physics.coupled.contains_key(&joint.name) {
            continue;
        }
        let servo = physics.servo(&joint.name).ok_or_else(|| PhysicsError::NoServo(joint.name.clone()))?;
        // The motor's torque and the gearbox's friction (body.rs) go through one actuator.
        let torque = servo.stall_torque_nm + servo.friction_nm;
        let _ = writeln!(
            out,
            "    <motor name=\"{0}\" joint=\"{0}\" ctrlrange=\"{1} {torque}\"/>",
            joint.name, -torque
        );
    }
    let _ = writeln!(out, "  </actuator>");
    let _ = writeln!(out, "  <sensor>");
    let _ = writeln!(out, "    <accelerometer name=\"{ACCELEROMETER}\" site=\"{IMU_SITE}\"/>");
    let _ = writeln!(out, "    <gyro name=\"{GYROSCOPE}\" site=\"{IMU_SITE}\"/>");
    let _ = writeln!(out, "  </sensor>");
    let _ = writeln!(out, "</mujoco>");
    Ok(out)
}

/// The bodies of the links that hang from `parent`, recursively.
fn write_children(
    out: &mut String,
    parent: &str,
    kinematics: &Description,
    ranges: &[JointRange],
    physics: &PhysicsDescription,
    indent: usize,
) -> Result<(), PhysicsError> {
    let pad = " ".repeat(indent);
    for joint in kinematics.joints.iter().filter(|joint| joint.parent == parent) {
        // A joint that moves nothing of the model (a hand's fingers) has no body.
        let Some(axis) = joint.axis else { continue };
        let ranged = physics.coupled.get(&joint.name).unwrap_or(&joint.name);
        let range = ranges
            .iter()
            .find(|range| &range.name == ranged)
            .ok_or_else(|| PhysicsError::NoRange(joint.name.clone()))?;
        let servo = physics.servo(ranged).ok_or_else(|| PhysicsError::NoServo(joint.name.clone()))?;
        let [x, y, z] = joint.offset_mm.map(|mm| mm / 1000.0);
        let _ = writeln!(out, "{pad}<body name=\"{}\" pos=\"{x} {y} {z}\">", joint.name);
        let _ = writeln!(
            out,
            "{pad}  <joint name=\"{}\" axis=\"{} {} {}\" range=\"{} {}\" \
             armature=\"{}\" damping=\"{}\"/>",
            joint.name,
            axis[0],
            axis[1],
            axis[2],
            range.min,
            range.max,
            servo.armature_kg_m2,
            servo.damping_nm_s_per_rad,
        );
        write_inertial(out, &joint.name, joint.mass_kg, joint.com_m, joint.inertia_kg_m2)?;
        write_link_extras(out, &joint.name, physics, indent + 2);
        write_children(out, &joint.name, kinematics, ranges, physics, indent + 2)?;
        let _ = writeln!(out, "{pad}</body>");
    }
    Ok(())
}

fn write_inertial(
    out: &mut String,
    link: &str,
    mass: f64,
    com: [f64; 3],
    inertia: Option<[f64; 6]>,
) -> Result<(), PhysicsError> {
    let [ixx, iyy, izz, ixy, ixz, iyz] = inertia.ok_or_else(|| PhysicsError::NoInertia(link.to_owned()))?;
    let _ = writeln!(
        out,
        "<inertial pos=\"{} {} {}\" mass=\"{mass}\" fullinertia=\"{ixx} {iyy} {izz} {ixy} {ixz} {iyz}\"/>",
        com[0], com[1], com[2]
    );
    Ok(())
}

/// A link's collision shapes, and on the torso the inertial unit and the sonars, on the
/// ankles the feet.
fn write_link_extras(out: &mut String, link: &str, physics: &PhysicsDescription, indent: usize) {
    let pad = " ".repeat(indent);
    for (index, shape) in physics.shapes.iter().filter(|shape| shape.link == link).enumerate() {
        let name = format!("{link}/shape{index}");
        let bits = collision_bits(shape.touches);
        let _ = match &shape.kind {
            ShapeKind::Box { centre_m: [x, y, z], half_size_m: [a, b, c] } => write_geom(
                out,
                &pad,
                &name,
                bits,
                "box",
                &format!("pos=\"{x} {y} {z}\""),
                &format!("{a} {b} {c}"),
            ),
            ShapeKind::Sphere { centre_m: [x, y, z], radius_m } => write_geom(
                out,
                &pad,
                &name,
                bits,
                "sphere",
                &format!("pos=\"{x} {y} {z}\""),
                &radius_m.to_string(),
            ),
            ShapeKind::Capsule { from_m: [a, b, c], to_m: [d, e, f], radius_m } => {
                let ends = format!("fromto=\"{a} {b} {c} {d} {e} {f}\"");
                write_geom(out, &pad, &name, bits, "capsule", &ends, &radius_m.to_string())
            }
            ShapeKind::Cylinder { from_m: [a, b, c], to_m: [d, e, f], radius_m } => {
                let ends = format!("fromto=\"{a} {b} {c} {d} {e} {f}\"");
                write_geom(out, &pad, &name, bits, "cylinder", &ends, &radius_m.to_string())
            }
        };
    }
    if link == TORSO {
        let [x, y, z] = physics.imu.position_m;
        let _ = writeln!(out, "{pad}<site name=\"{IMU_SITE}\" pos=\"{x} {y} {z}\"/>");
        for sonar in &physics.sonars {
            let [x, y, z] = sonar.position_m;
            let _ = writeln!(out, "{pad}<site name=\"US/{}\" pos=\"{x} {y} {z}\"/>", sonar.side);
        }
    }
    let feet = &physics.feet;
    for (index, (foot, ankle)) in FEET.iter().enumerate() {
        if *ankle != link {
            continue;
        }
        let sole = -feet.sole_below_ankle_m;
        let radius = feet.fsr_radius_m;
        let fsrs = if index == 0 { &feet.left_fsr_m } else { &feet.right_fsr_m };
        for (name, [x, y]) in FSR_NAMES.iter().zip(fsrs) {
            let z = sole + radius;
            let position = format!("pos=\"{x} {y} {z}\"");
            let _ = write_geom(
                out,
                &pad,
                &format!("{foot}/FSR/{name}"),
                collision_bits(Touches::World),
                "sphere",
                &position,
                &radius.to_string(),
            );
        }
        // The sole: a plate just above the sensors' lowest points, so that a flat foot
        // stands on its sensors and a tilted one lands on its edge.
        let [back, front, right, left] = feet.sole_m;
        let (right, left) = if index == 0 { (right, left) } else { (-left, -right) };
        let half_z = 0.005;
        let position =
            format!("pos=\"{} {} {}\"", (back + front) / 2.0, (right + left) / 2.0, sole + 0.002 + half_z);
        let size = format!("{} {} {half_z}", (front - back) / 2.0, (left - right) / 2.0);
        let _ = write_geom(
            out,
            &pad,
            &format!("{foot}/Sole"),
            collision_bits(Touches::World),
            "box",
            &position,
            &size,
        );
        let [a, b, c] = feet.bumper_half_size_m;
        for (side_index, side) in BUMPER_SIDES.iter().enumerate() {
            // The right foot mirrors the left: its left bumper is the left foot's right one.
            let [x, y, z] =
                if index == 0 { feet.bumper_m[side_index] } else { feet.bumper_m[1 - side_index] };
            let y = if index == 0 { y } else { -y };
            let position = format!("pos=\"{x} {y} {z}\"");
            let _ = write_geom(
                out,
                &pad,
                &format!("{foot}/Bumper/{side}"),
                collision_bits(Touches::World),
                "box",
                &position,
                &format!("{a} {b} {c}"),
            );
        }
    }
}

/// One collision shape: `placement` is its `pos` or `fromto` attribute.
fn write_geom(
    out: &mut String,
    pad: &str,
    name: &str,
    (contype, conaffinity): (u8, u8),
    kind: &str,
    placement: &str,
    size: &str,
) -> std::fmt::Result {
    writeln!(
        out,
        "{pad}<geom name=\"{name}\" type=\"{kind}\" contype=\"{contype}\" conaffinity=\"{conaffinity}\" \
         {placement} size=\"{size}\"/>"
    )
}

/// Joints without a motor of their own that follow another's angle (NAO's RHipYawPitch).
fn write_couplings(out: &mut String, physics: &PhysicsDescription) -> Result<(), PhysicsError> {
    if physics.coupled.is_empty() {
        return Ok(());
    }
    let _ = writeln!(out, "  <equality>");
    for (follower, leader) in &physics.coupled {
        // Stiff: the two joints are one motor; 2 steps is as stiff as MuJoCo stays stable.
        let _ = writeln!(
            out,
            "    <joint joint1=\"{follower}\" joint2=\"{leader}\" polycoef=\"0 1 0 0 0\" solref=\"{} 1\"/>",
            2.0 * physics.timestep_s
        );
    }
    let _ = writeln!(out, "  </equality>");
    Ok(())
}
