//! `naocli urdf`'s model read by a URDF library from PyPI (yourdfpy, not ours): its forward
//! kinematics agree with ALMotion.getTransform within 1 mm for 20 random postures.

use std::io::Write;
use std::process::{Command, Stdio};

use naobroker_e2e::cartesian::assert_close;
use naobroker_e2e::robot::Robot;
use naobroker_e2e::{bin, scratch_dir};
use naobroker_framework::Value;
use serde_json::{json, Value as Json};

const FRAME_TORSO: i64 = 0;
const POSTURES: usize = 20;
/// DCM cycles for the commanded angles to reach a posture at full speed (12 ms each).
const REACH_CYCLES: u64 = 150;

/// A deterministic stream of numbers in [0, 1) (a 64-bit LCG, Knuth's MMIX constants).
struct Draws(u64);

impl Draws {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn strings(value: &Value) -> Vec<String> {
    let Value::Array(items) = value else { panic!("not a list: {value}") };
    items.iter().map(|item| item.as_str().unwrap().to_owned()).collect()
}

#[test]
fn the_urdf_poses_the_robot_as_get_transform_does() {
    let dir = scratch_dir("urdf");
    let path = dir.join("nao.urdf");
    let written = Command::new(bin("naocli")).args(["urdf", "--out"]).arg(&path).output().unwrap();
    assert!(written.status.success(), "naocli urdf: {}", String::from_utf8_lossy(&written.stderr));

    let robot = Robot::start();
    let joints = strings(&robot.motion("getBodyNames", vec!["Body".into()]));
    let Value::Array(limits) = robot.motion("getLimits", vec!["Body".into()]) else { panic!("getLimits") };
    let mut frames: Vec<String> = joints.clone();
    frames.extend(["Head", "LArm", "RArm", "LLeg", "RLeg", "CameraTop", "CameraBottom"].map(String::from));

    let mut draws = Draws(28);
    let mut postures = Vec::new();
    let mut expected = Vec::new();
    for _ in 0..POSTURES {
        let targets: Vec<Value> = limits
            .iter()
            .map(|limit| {
                let (min, max) = (limit[0].as_f64().unwrap(), limit[1].as_f64().unwrap());
                (min + (max - min) * draws.next()).into()
            })
            .collect();
        let names: Vec<Value> = joints.iter().map(|name| name.as_str().into()).collect();
        robot.motion("setAngles", vec![Value::Array(names), Value::Array(targets), 1.0.into()]);
        robot.step(REACH_CYCLES);
        let angles = robot.angles("Body", false);
        let posture: serde_json::Map<String, Json> =
            joints.iter().zip(&angles).map(|(name, angle)| (name.clone(), json!(angle))).collect();
        postures.push(Json::Object(posture));
        expected
            .push(frames.iter().map(|frame| robot.transform(frame, FRAME_TORSO, false)).collect::<Vec<_>>());
    }

    let request = json!({"urdf": path, "root": "Torso", "links": frames, "postures": postures});
    let mut python = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/urdf_fk.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    python.stdin.take().unwrap().write_all(request.to_string().as_bytes()).unwrap();
    let output = python.wait_with_output().unwrap();
    assert!(output.status.success(), "yourdfpy: {}", String::from_utf8_lossy(&output.stderr));
    let answer: Json = serde_json::from_slice(&output.stdout).unwrap();
    // The hands and RHipYawPitch (which follows LHipYawPitch) are not actuated joints.
    let actuated = answer["actuated"].as_array().unwrap();
    assert_eq!(actuated.len(), joints.len() - 3, "{actuated:?}");
    let got = answer["transforms"].as_array().unwrap();
    for (posture, (got, expected)) in got.iter().zip(&expected).enumerate() {
        for (frame, expected) in frames.iter().zip(expected) {
            let matrix: Vec<f64> =
                got[frame].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
            let label = format!("posture {posture}, {frame}");
            let position = |m: &[f64]| [m[3], m[7], m[11]];
            assert_close(&position(&matrix), &position(expected), 1e-3, &label);
            let rotation = |m: &[f64]| [m[0], m[1], m[2], m[4], m[5], m[6], m[8], m[9], m[10]];
            assert_close(&rotation(&matrix), &rotation(expected), 1e-3, &label);
        }
    }
    assert_eq!(got.len(), POSTURES);
}
