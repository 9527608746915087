//! The broker on `backend = "lola"`: the shipped broker.toml with only the backend changed
//! starts (ALMotion every LoLA cycle), LoLA absent is waited for while everything else
//! is served, the link and the robot's identity reach ALMemory and `DCM.stats`, `DCM.step`
//! says why it cannot run, and a manual clock is refused. The LoLA here is the test's own
//! listener, in lockstep: no assertion depends on timing.

use std::io::{Read, Write};
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use naobroker::{Config, Running};
use naobroker_lola::{decode_actuator_map, encode_sensor_map, ActuatorMap, ConfigText, SensorMap};
use naobroker_lola::{RobotConfig, SENSOR_MAP_BYTES};
use naobroker_lolasim::{LolaSim, Options};
use naobroker_protocol::Value;

const DEADLINE: Duration = Duration::from_secs(20);

fn scratch(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("naobroker-lola-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The shipped broker.toml with `backend = "lola"`; the test's socket, listener and
/// priority keep it off a real robot's LoLA and scheduler, and a loaded machine's pauses
/// are no stall.
fn shipped_on_lola(label: &str, socket: PathBuf) -> Config {
    let shipped = include_str!("../../../broker.toml");
    assert!(shipped.contains("backend = \"sim\""));
    let mut config: Config =
        toml::from_str(&shipped.replace("backend = \"sim\"", "backend = \"lola\"")).unwrap();
    config.dcm.lola.socket = socket;
    config.dcm.priority = 0;
    config.dcm.lola.stall_ms = 3_600_000;
    config.broker.listen = vec![format!("ipc://{}", scratch(label).join("broker").display())];
    config
}

fn sensor_map() -> SensorMap {
    let mut map = SensorMap::default();
    map.position[0] = 0.375;
    map.robot_config = RobotConfig {
        body_id: ConfigText::new("P0000073A03S83I00011").unwrap(),
        body_version: ConfigText::new("6.0.0").unwrap(),
        head_id: ConfigText::new("P0000074A05S93M00061").unwrap(),
        head_version: ConfigText::new("6.0.0").unwrap(),
    };
    map
}

/// LoLA in lockstep on `socket`: a map, its answer, until told to close.
fn lola(socket: PathBuf, close: mpsc::Receiver<()>) -> std::thread::JoinHandle<()> {
    let listener = UnixListener::bind(&socket).unwrap();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream.set_read_timeout(Some(DEADLINE)).unwrap();
        let mut bytes = [0u8; SENSOR_MAP_BYTES];
        encode_sensor_map(&sensor_map(), &mut bytes).unwrap();
        let mut received = Vec::new();
        while close.try_recv().is_err() {
            stream.write_all(&bytes).unwrap();
            loop {
                let mut answer = ActuatorMap::default();
                if let Ok(decoded) = decode_actuator_map(&received, &mut answer) {
                    received.drain(..decoded.consumed);
                    break;
                }
                let mut chunk = [0u8; 2048];
                let read = stream.read(&mut chunk).unwrap();
                assert!(read > 0, "the broker answers every sensor map");
                received.extend_from_slice(&chunk[..read]);
            }
        }
    })
}

async fn wait_for(what: &str, mut condition: impl FnMut() -> bool) {
    let started = Instant::now();
    while !condition() {
        assert!(started.elapsed() < DEADLINE, "{what}");
        actix_rt::time::sleep(Duration::from_millis(5)).await;
    }
}

fn memory(running: &Running, key: &str) -> Option<Value> {
    running.store.get(key)
}

async fn call(running: &Running, module: &str, method: &str, args: Vec<Value>) -> Result<Value, String> {
    running.broker.call(module, method, args, false).await.map_err(|error| error.to_string())
}

fn entry<'a>(map: &'a Value, key: &str) -> &'a Value {
    let entries = map.as_map().unwrap_or_else(|| panic!("{map} is no map"));
    &entries.iter().find(|(name, _)| name.as_str() == Some(key)).unwrap_or_else(|| panic!("no {key}")).1
}

#[test]
fn the_shipped_configuration_runs_on_lola_and_shows_the_link() {
    let socket = scratch("shipped").join("robocup");
    let config = shipped_on_lola("shipped-listen", socket.clone());
    actix_rt::System::new().block_on(async move {
        let running = naobroker::start(&config).await.expect("the shipped broker.toml starts on lola");
        // LoLA absent: everything else is served.
        wait_for("the link shows absent", || {
            memory(&running, "HAL/Link/State") == Some("absent".into())
                && memory(&running, "HAL/Link/Connected") == Some(false.into())
                && memory(&running, "HAL/Link/Stale") == Some(true.into())
        })
        .await;
        assert_eq!(call(&running, "ALMotion", "getMotionCycleTime", vec![]).await, Ok(12.into()));
        let step = call(&running, "DCM", "step", vec![1.into()]).await.unwrap_err();
        assert!(step.contains("the robot clocks this DCM"), "{step}");
        let before = call(&running, "DCM", "getTime", vec![0.into()]).await.unwrap();
        actix_rt::time::sleep(Duration::from_millis(50)).await;
        let after = call(&running, "DCM", "getTime", vec![0.into()]).await.unwrap();
        assert_eq!(before, after, "no robot, no cycle: DCM time stands still");

        let (close, closing) = mpsc::channel();
        let peer = lola(socket, closing);
        let yaw = "Device/SubDeviceList/HeadYaw/Position/Sensor/Value";
        wait_for("30 cycles ran", || running.dcm.shared().cycles() >= 30).await;
        wait_for("the link shows up", || memory(&running, "HAL/Link/State") == Some("up".into())).await;
        assert_eq!(memory(&running, "HAL/Link/Stale"), Some(false.into()));
        assert_eq!(memory(&running, yaw), Some(0.375.into()));
        wait_for("the identity is shown", || {
            memory(&running, "Device/DeviceList/ChestBoard/BodyId") == Some("P0000073A03S83I00011".into())
        })
        .await;
        assert_eq!(memory(&running, "RobotConfig/Head/FullHeadId"), Some("P0000074A05S93M00061".into()));
        assert_eq!(memory(&running, "RobotConfig/Body/Version"), Some("6.0.0".into()));
        let stats = call(&running, "DCM", "stats", vec![]).await.unwrap();
        assert_eq!(entry(&stats, "period_us"), &Value::from(12_000));
        let link = entry(&stats, "link");
        assert_eq!((entry(link, "state"), entry(link, "late_cycles")), (&Value::from("up"), &Value::from(0)));
        assert!(entry(link, "actuator_maps").as_u64().unwrap() >= 30);

        // LoLA goes: the values stay, marked stale.
        close.send(()).unwrap();
        peer.join().unwrap();
        wait_for("the link shows lost", || memory(&running, "HAL/Link/Stale") == Some(true.into())).await;
        assert_eq!(memory(&running, yaw), Some(0.375.into()));
    });
}

/// The broker on the LoLA simulator, stepped: each step is one DCM cycle and one answer;
/// a timed command reaches LoLA's `Position`, a scripted touch reaches ALMemory.
#[test]
fn the_broker_drives_the_lola_simulator_one_step_at_a_time() {
    let socket = scratch("lolasim").join("robocup");
    let sim = LolaSim::start(Options::at(&socket).stepped()).unwrap();
    let mut config = shipped_on_lola("lolasim-listen", socket);
    config.dcm.lola.on_link_loss = naobroker_backend_lola::LinkLossPolicy::Hold;
    actix_rt::System::new().block_on(async move {
        let running = naobroker::start(&config).await.unwrap();
        sim.wait_for_client(DEADLINE).unwrap();
        sim.step_and_answer(DEADLINE).unwrap();
        let now = call(&running, "DCM", "getTime", vec![0.into()]).await.unwrap().as_i64().unwrap();
        let command = Value::Array(vec![0.5.into(), (now + 120).into()]);
        let set = vec![Value::Array(vec![
            "HeadYaw/Position/Actuator/Value".into(),
            "ClearAll".into(),
            Value::Array(vec![command]),
        ])];
        call(&running, "DCM", "set", set).await.unwrap();
        let mut targets = Vec::new();
        for _ in 0..12 {
            targets.push(sim.step_and_answer(DEADLINE).unwrap().map.position[0]);
        }
        assert!(targets.windows(2).all(|pair| pair[1] >= pair[0]), "{targets:?}");
        assert!((targets[11] - 0.5).abs() < 1e-3, "{targets:?}");
        sim.assign("Touch[1]=1").unwrap();
        sim.step_and_answer(DEADLINE).unwrap();
        let front = "Device/SubDeviceList/Head/Touch/Front/Sensor/Value";
        wait_for("the touch reaches ALMemory", || memory(&running, front) == Some(1.0.into())).await;
        let stats = sim.stats();
        assert_eq!((stats.sent, stats.answers, stats.missing, stats.double), (14, 14, 0, 0));
    });
}

#[test]
fn a_manual_clock_under_lola_is_refused_with_why() {
    let path = scratch("manual").join("broker.toml");
    std::fs::write(&path, "[dcm]\nbackend = \"lola\"\nclock = \"manual\"\n").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_naobroker")).arg("--config").arg(&path).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot drive backend = \"lola\"") && stderr.contains("DCM.step"), "{stderr}");
}
