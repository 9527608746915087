//! `naocli record` against the real broker under the manual clock: every stepped cycle
//! once per key, in order, with the DCM time as log time, an event recorded as it arrived,
//! the robot's channels (the live view's), the file read back with the `mcap` crate after
//! Ctrl-C; then `naocli plot` draws it, and a recording of the earlier format too.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use foxglove::messages::{FrameTransforms, JointStates};
use naobroker_e2e::{bin, Process, TestBroker};
use prost::Message as _;
use serde_json::Value as Json;

const COMMAND: &str = "Device/SubDeviceList/HeadYaw/Position/Actuator/Value";
const SENSOR: &str = "Device/SubDeviceList/HeadYaw/Position/Sensor/Value";
const CYCLES: u64 = 100;

/// Wait for a stderr line of naocli containing `text`; the lines seen, for the message.
fn wait_for_line(lines: &mpsc::Receiver<String>, text: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        match lines.recv_timeout(Duration::from_millis(200)) {
            Ok(line) if line.contains(text) => return,
            Ok(line) => seen.push(line),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    panic!("naocli record never said {text:?}; it said {seen:?}");
}

/// The robot's channels (the live view's, with Foxglove's protobuf schemas), each message's
/// payload by topic.
type RobotMessages = BTreeMap<String, Vec<Vec<u8>>>;

/// Every JSON message of the file as (topic, schema name, log time, JSON), after checking the
/// encodings Foxglove needs; and the protobuf ones by topic.
fn read_back(path: &std::path::Path) -> (Vec<(String, String, u64, Json)>, RobotMessages) {
    let bytes = std::fs::read(path).unwrap();
    let (mut messages, mut robot) = (Vec::new(), RobotMessages::new());
    for message in mcap::MessageStream::new(&bytes).unwrap() {
        let message = message.unwrap();
        let schema = message.channel.schema.as_ref().expect("every channel has a schema");
        if schema.encoding == "protobuf" {
            assert!(schema.name.starts_with("foxglove."), "Foxglove's own schema: {}", schema.name);
            robot.entry(message.channel.topic.clone()).or_default().push(message.data.to_vec());
            continue;
        }
        assert_eq!(schema.encoding, "jsonschema");
        assert_eq!(message.channel.message_encoding, "json");
        let json_schema: Json = serde_json::from_slice(&schema.data).expect("the schema is JSON");
        assert_eq!(json_schema["type"], "object", "Foxglove wants an object schema");
        let json: Json = serde_json::from_slice(&message.data).unwrap();
        messages.push((message.channel.topic.clone(), schema.name.clone(), message.log_time, json));
    }
    (messages, robot)
}

#[test]
fn record_writes_every_cycle_once_and_plot_draws_it() {
    let broker = TestBroker::start("start_time_ms = 0\n");
    let out = broker.dir.join("ramp.mcap");
    let mut recorder = Process::spawn(
        Command::new(bin("naocli"))
            .args(["--url", &broker.url, "record", COMMAND, SENSOR, "--event", "Test/Marker", "--out"])
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::piped()),
    );
    let (sender, lines) = mpsc::channel();
    let stderr = recorder.child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = sender.send(line);
        }
    });
    wait_for_line(&lines, "Ctrl-C stops");
    let now = broker.call("DCM.getTime", &["0"]).as_i64().unwrap();
    broker.call("DCM.set", &[&format!(r#"["HeadYaw/Hardness/Actuator/Value", "ClearAll", [[1.0, {now}]]]"#)]);
    broker.call(
        "DCM.set",
        &[&format!(r#"["HeadYaw/Position/Actuator/Value", "ClearAll", [[0.5, {}]]]"#, now + 600)],
    );
    broker.step(CYCLES / 2);
    broker.call("ALMemory.raiseEvent", &["Test/Marker", "7"]);
    broker.step(CYCLES / 2);
    wait_for_line(&lines, &format!("recorded {CYCLES} cycles, 0 gaps"));
    let interrupted = Command::new("kill").args(["-INT", &recorder.child.id().to_string()]).status().unwrap();
    assert!(interrupted.success());
    assert!(recorder.child.wait().unwrap().success(), "Ctrl-C finishes the file and exits cleanly");

    let (messages, robot) = read_back(&out);
    let mut per_key: BTreeMap<&str, Vec<(u64, i64, u64, f64)>> = BTreeMap::new();
    for (topic, schema, log_time, json) in &messages {
        if schema == "naobroker.RecordedValue" {
            let row = (json["cycle"].as_u64().unwrap(), json["dcm_time_ms"].as_i64().unwrap(), *log_time);
            per_key.entry(topic).or_default().push((row.0, row.1, row.2, json["value"].as_f64().unwrap()));
        }
    }
    assert_eq!(per_key.keys().copied().collect::<Vec<_>>(), vec![COMMAND, SENSOR]);
    for (key, rows) in &per_key {
        assert_eq!(rows.len() as u64, CYCLES, "{key}: one message per stepped cycle");
        for pair in rows.windows(2) {
            assert_eq!(pair[1].0, pair[0].0 + 1, "{key}: consecutive cycles");
            assert!(pair[1].1 > pair[0].1, "{key}: DCM time goes forward");
        }
        for &(_, dcm_time_ms, log_time, _) in rows {
            assert_eq!(log_time, dcm_time_ms as u64 * 1_000_000, "{key}: log time is the DCM time");
        }
    }
    let commands = &per_key[COMMAND];
    assert!(
        commands.first().unwrap().3.abs() < 0.1 && commands.last().unwrap().3 > 0.3,
        "the ramp is recorded"
    );
    let sensor_end = per_key[SENSOR].last().unwrap().3;
    assert!(sensor_end > 0.2, "the simulated joint followed: {sensor_end}");
    let events: Vec<&Json> =
        messages.iter().filter(|m| m.1 == "naobroker.RecordedEvent").map(|m| &m.3).collect();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["event"], "Test/Marker");
    assert_eq!(events[0]["value"], 7);
    // The robot, as the live view shows it: every cycle's joints, posed links, sensors.
    let joint_states = &robot["/joint_states"];
    assert_eq!(joint_states.len() as u64, CYCLES);
    let last = JointStates::decode(joint_states.last().unwrap().as_slice()).unwrap();
    let head = last.joints.iter().find(|joint| joint.name == "HeadYaw").unwrap();
    assert_eq!(head.position, Some(sensor_end), "the joint states' HeadYaw is the sensor's key");
    let transforms = FrameTransforms::decode(robot["/tf"].last().unwrap().as_slice()).unwrap();
    let neck = transforms.transforms.iter().find(|t| t.child_frame_id == "HeadYaw").unwrap();
    assert_eq!(neck.parent_frame_id, "Torso");
    let turn = neck.rotation.as_ref().unwrap();
    assert!((2.0 * turn.z.atan2(turn.w) - sensor_end).abs() < 1e-9, "the neck turned by the sensed angle");
    let description = messages.iter().find(|m| m.0 == "/robot_description").unwrap();
    assert_eq!(
        description.2, per_key[COMMAND][0].2,
        "the description comes with the first cycle, not at time 0"
    );
    for topic in ["/imu", "/fsr", "/battery", "/sonar", "/joint_motors", "/robot_description"] {
        let count = messages.iter().filter(|m| m.0 == topic).count() as u64;
        assert_eq!(count, if topic == "/robot_description" { 1 } else { CYCLES }, "{topic}");
    }

    let png = broker.dir.join("ramp.png");
    let plotted =
        broker.naocli(&["plot", out.to_str().unwrap(), COMMAND, SENSOR, "--out", png.to_str().unwrap()]);
    assert!(plotted.status.success(), "{}", String::from_utf8_lossy(&plotted.stderr));
    assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
    let missing = broker.naocli(&["plot", out.to_str().unwrap(), "Nope", "--out", png.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("Nope: not in"));
}

/// How many recording hooks `DCM.stats` lists.
fn recording_hooks(broker: &TestBroker) -> usize {
    let stats = broker.call("DCM.stats", &[]);
    let hooks = stats["hooks"].as_array().unwrap();
    hooks.iter().filter(|hook| hook["name"].as_str().unwrap().starts_with("DCM/Record/")).count()
}

fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !condition() {
        assert!(Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_recording_ends_with_its_client_and_refuses_what_it_cannot_record() {
    let broker = TestBroker::start("");
    let refused = broker.call_error("DCM.record", &[r#"["Robot/Anything"]"#]);
    assert!(refused.contains("Robot/Anything"), "{refused}");
    assert!(broker.call_error("DCM.record", &["[]"]).contains("at least one key"));
    assert!(broker.call_error("DCM.stopRecord", &["99"]).contains("no recording 99"));

    let out = broker.dir.join("killed.mcap");
    let mut recorder = Process::spawn(
        Command::new(bin("naocli"))
            .args(["--url", &broker.url, "record", "DCM/Time", "--out"])
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    wait_until("the recording's hook is on the cycle", || recording_hooks(&broker) == 1);
    recorder.kill();
    wait_until("the recording ended with its client", || recording_hooks(&broker) == 0);
}

/// A recording as naocli wrote them before the robot's channels (one JSON channel per key,
/// written with the `mcap` crate as naocli did): `naocli plot` still draws it.
#[test]
fn a_recording_of_the_earlier_format_still_plots() {
    let dir = naobroker_e2e::scratch_dir("old-recording");
    let path = dir.join("old.mcap");
    let mut writer = mcap::WriteOptions::new()
        .profile("")
        .library("naocli 0.1.0")
        .create(std::io::BufWriter::new(std::fs::File::create(&path).unwrap()))
        .unwrap();
    let schema = br#"{"title": "naobroker.RecordedValue", "type": "object"}"#;
    let schema = writer.add_schema("naobroker.RecordedValue", "jsonschema", schema).unwrap();
    let channel = writer.add_channel(schema, COMMAND, "json", &BTreeMap::new()).unwrap();
    for cycle in 0..50u32 {
        let time = u64::from(cycle) * 10_000_000;
        let header = mcap::records::MessageHeader {
            channel_id: channel,
            sequence: cycle,
            log_time: time,
            publish_time: time,
        };
        let value = format!(
            r#"{{"dcm_time_ms": {}, "cycle": {cycle}, "value": {}}}"#,
            cycle * 10,
            f64::from(cycle) / 50.0
        );
        writer.write_to_known_channel(&header, value.as_bytes()).unwrap();
    }
    writer.finish().unwrap();
    drop(writer);
    let png = dir.join("old.png");
    let plotted = Command::new(bin("naocli"))
        .args(["plot", path.to_str().unwrap(), "--out", png.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(plotted.status.success(), "{}", String::from_utf8_lossy(&plotted.stderr));
    assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
}

/// `--robot FILE`: the recording's and the URDF's robot description. A description of another
/// robot than the broker runs is refused before anything is recorded, naming both.
#[test]
fn a_recording_of_another_robots_description_is_refused_and_urdf_takes_the_file() {
    let broker = TestBroker::start("");
    let shipped = concat!(env!("CARGO_MANIFEST_DIR"), "/../robots/nao-v6.toml");
    let description = std::fs::read_to_string(shipped).unwrap();
    let other = broker.dir.join("other.toml");
    std::fs::write(&other, description.replacen("name = \"NAO V6\"", "name = \"Other NAO\"", 1)).unwrap();
    let out = broker.dir.join("other.mcap");
    let output = Command::new(bin("naocli"))
        .args(["--url", &broker.url, "record", "DCM/Time", "--robot"])
        .arg(&other)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{said}");
    assert!(
        said.contains("\"NAO V6\"") && said.contains("\"Other NAO\"") && said.contains("--robot"),
        "{said}"
    );
    assert!(!out.exists(), "nothing recorded");
    let urdf = Command::new(bin("naocli")).args(["urdf", "--robot"]).arg(&other).output().unwrap();
    assert!(String::from_utf8(urdf.stdout).unwrap().contains("<robot name=\"Other NAO\">"));
}
