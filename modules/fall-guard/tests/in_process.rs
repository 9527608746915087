//! FallGuard in a broker of one's own: `naobroker::start` in this process, the module
//! added beside the built-in ones, driven by a client under the manual clock.

use std::thread::JoinHandle;
use std::time::Duration;

use fall_guard::{FallGuard, FallGuardConfig};
use naobroker_framework::blocking::Session;
use naobroker_framework::{from_value, Value};

/// The broker with FallGuard on an actix system of its own thread; stopped on drop.
struct OwnBroker {
    url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl OwnBroker {
    fn start() -> OwnBroker {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let url = format!("tcp://127.0.0.1:{port}");
        // ALMotion's own fall manager off: FallGuard alone reacts to the tilt here.
        let config: naobroker::Config = toml::from_str(&format!(
            "[broker]\nlisten = [\"{url}\"]\n[dcm]\nclock = \"manual\"\npriority = 0\nstart_time_ms = 0\n\
             [motion.fall_manager]\nenabled = false\n"
        ))
        .unwrap();
        let (ready, started) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            actix_rt::System::new().block_on(async move {
                let running = naobroker::start(&config).await.expect("the broker starts");
                let guard = FallGuard::new(&running.dcm, running.broker.clone(), &FallGuardConfig::default())
                    .expect("the robot has an inertial unit");
                running.broker.add_module(guard).expect("FallGuard is added");
                ready.send(()).unwrap();
                let _ = stopped.await;
                drop(running);
            });
        });
        started.recv_timeout(Duration::from_secs(20)).expect("the broker is ready");
        OwnBroker { url, stop: Some(stop), thread: Some(thread) }
    }
}

impl Drop for OwnBroker {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn call(session: &Session, module: &str, method: &str, args: Vec<Value>) -> Value {
    session.call(module, method, args).unwrap_or_else(|error| panic!("{module}.{method}: {error}"))
}

#[test]
fn fall_guard_cuts_every_stiffness_from_the_cycle_that_senses_the_tilt() {
    let broker = OwnBroker::start();
    let session = Session::connect(&broker.url).unwrap();
    let step = |n: u64| call(&session, "DCM", "step", vec![n.into()]).as_i64().unwrap();
    let triggered = session.subscribe("FallGuard/Triggered").unwrap();
    let keys = call(&session, "ALMemory", "getDataList", vec!["/Hardness/Actuator/Value".into()]);
    let stiffness =
        || -> Vec<f64> { from_value(call(&session, "ALMemory", "getListData", vec![keys.clone()])).unwrap() };
    let set_all =
        |value: f64| call(&session, "ALMotion", "setStiffnesses", vec!["Body".into(), value.into()]);
    set_all(1.0);
    step(4);
    assert!(stiffness().len() >= 25 && stiffness().iter().all(|&s| s == 1.0), "{:?}", stiffness());

    let tilt = |value: Value| {
        call(&session, "DCM", "simulateSensor", vec!["InertialSensor/AngleX/Sensor/Value".into(), value])
    };
    tilt(0.9.into());
    let sensed_at = step(1);
    assert_eq!(
        call(&session, "FallGuard", "isTriggered", vec![]),
        Value::from(true),
        "sensed at {sensed_at}"
    );
    step(1);
    assert!(stiffness().iter().all(|&s| s == 0.0), "every joint limp one DCM cycle later: {:?}", stiffness());
    let event = triggered.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(event.value, Value::from(sensed_at), "raised off the cycle thread, naming the cycle");

    // Latched: ALMotion cannot stiffen the robot until FallGuard is reset.
    set_all(1.0);
    step(4);
    assert!(stiffness().iter().all(|&s| s == 0.0));
    tilt(Value::Nil);
    call(&session, "FallGuard", "reset", vec![]);
    set_all(1.0);
    step(4);
    assert!(stiffness().iter().all(|&s| s == 1.0), "{:?}", stiffness());
}

#[test]
fn the_settings_are_the_tilt_alone() {
    let config: FallGuardConfig = toml::from_str("tilt_rad = 0.5").unwrap();
    assert_eq!(config.tilt_rad, 0.5);
    // A switch FallGuard would not read is refused rather than silently ignored.
    let error = toml::from_str::<FallGuardConfig>("enabled = false").unwrap_err().to_string();
    assert!(error.contains("unknown field `enabled`"), "{error}");
}
