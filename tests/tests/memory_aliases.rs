//! NAOqi 2.1's inertial key names through the real broker: each alias gives its key's value
//! under the manual clock and, with lolasim stepped, follows it live as the scripted
//! inertial unit changes; listed, described, waited on and refused to writers as its key is.

use naobroker_e2e::lola::LolaBench;
use naobroker_e2e::TestBroker;
use naobroker_framework::blocking::Session;
use naobroker_framework::Value;

const INERTIAL: &str = "Device/SubDeviceList/InertialSensor/";

/// NAOqi 2.1's name and today's, under `Device/SubDeviceList/InertialSensor/`.
const ALIASES: [(&str, &str); 6] = [
    ("AccX", "AccelerometerX"),
    ("AccY", "AccelerometerY"),
    ("AccZ", "AccelerometerZ"),
    ("GyrX", "GyroscopeX"),
    ("GyrY", "GyroscopeY"),
    ("GyrZ", "GyroscopeZ"),
];

fn key(name: &str) -> String {
    format!("{INERTIAL}{name}/Sensor/Value")
}

fn call(session: &Session, module: &str, method: &str, args: Vec<Value>) -> Value {
    session.call(module, method, args).unwrap_or_else(|error| panic!("{module}.{method}: {error}"))
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().unwrap().iter().map(|name| name.as_str().unwrap().to_owned()).collect()
}

#[test]
fn the_aliases_read_their_keys_under_the_manual_clock() {
    let broker = TestBroker::start("start_time_ms = 0\n");
    let session = Session::connect(&broker.url).unwrap();
    call(&session, "ALMotion", "setStiffnesses", vec!["Body".into(), 1.0.into()]);
    call(&session, "ALMotion", "setAngles", vec!["HeadYaw".into(), 1.0.into(), 0.5.into()]);
    for _ in 0..10 {
        call(&session, "DCM", "step", vec![3.into()]);
        for (old, new) in ALIASES {
            let alias = call(&session, "ALMemory", "getData", vec![key(old).into()]);
            assert_eq!(alias, call(&session, "ALMemory", "getData", vec![key(new).into()]), "{old}");
            assert!(alias.as_f64().is_some(), "{old}: {alias}");
        }
        let aliases: Vec<Value> = ALIASES.iter().map(|(old, _)| key(old).into()).collect();
        let keys: Vec<Value> = ALIASES.iter().map(|(_, new)| key(new).into()).collect();
        assert_eq!(
            call(&session, "ALMemory", "getListData", vec![Value::Array(aliases)]),
            call(&session, "ALMemory", "getListData", vec![Value::Array(keys)])
        );
    }
    // The simulated inertial unit is upright: gravity on Z.
    let z = call(&session, "ALMemory", "getData", vec![key("AccZ").into()]).as_f64().unwrap();
    assert!(z < -9.0, "AccZ {z}");

    let mut listed = strings(&call(&session, "ALMemory", "getDataList", vec!["InertialSensor/Gyr".into()]));
    // Gain and offset keep today's names only: NAOqi 2.1's lists name the values.
    listed.retain(|name| name.ends_with("/Sensor/Value"));
    let expected: Vec<String> = ["GyrX", "GyrY", "GyrZ", "GyroscopeX", "GyroscopeY", "GyroscopeZ"]
        .iter()
        .map(|name| key(name))
        .collect();
    assert_eq!(listed, expected);
    let every_key = strings(&call(&session, "ALMemory", "getDataListName", vec![]));
    assert!(ALIASES.iter().all(|(old, _)| every_key.contains(&key(old))), "{every_key:?}");

    let described =
        call(&session, "ALMemory", "getDescriptionList", vec![Value::Array(vec![key("AccX").into()])]);
    let row = strings(&described.as_array().unwrap()[0]);
    assert_eq!(row[1], "Data");
    assert!(row[2].contains(&key("AccelerometerX")), "{row:?}");
    assert_eq!(call(&session, "ALMemory", "getType", vec![key("GyrZ").into()]), Value::from("Data"));

    for method in ["insertData", "removeData"] {
        let args = match method {
            "insertData" => vec![key("AccX").into(), 1.0.into()],
            _ => vec![key("AccX").into()],
        };
        let error = session.call("ALMemory", method, args).unwrap_err().message;
        assert!(error.contains("owned by DCM"), "{method}: {error}");
    }
    let error =
        session.call("ALMemory", "raiseEvent", vec![key("GyrX").into(), 1.0.into()]).unwrap_err().message;
    assert!(error.contains("owned by DCM"), "{error}");
    assert!(z == call(&session, "ALMemory", "getData", vec![key("AccZ").into()]).as_f64().unwrap());
}

/// lolasim's scripted inertial unit, a new reading every step: the alias follows it.
#[test]
fn the_aliases_follow_the_inertial_unit_live() {
    let mut bench = LolaBench::start("");
    for step in 1..=6 {
        let (a, g) = (0.25 * step as f32, -0.125 * step as f32);
        let accelerometer = format!("Accelerometer={a},{},{}", -a, a - 9.5);
        let gyroscope = format!("Gyroscope={g},{},{}", -g, g / 2.0);
        bench
            .sim
            .script(|script| {
                script.assign(&accelerometer).unwrap();
                script.assign(&gyroscope).unwrap();
            })
            .unwrap();
        bench.step();
        let expected = [a, -a, a - 9.5, g, -g, g / 2.0];
        for ((old, new), expected) in ALIASES.iter().zip(expected) {
            let alias = bench.number(&key(old));
            assert_eq!(alias, bench.number(&key(new)), "{old} at step {step}");
            assert_eq!(alias as f32, expected, "{old} at step {step}");
        }
    }

    // getDataOnChange on an alias wakes when its key changes: GyrZ takes a new value every
    // step until the waiting call answers, whenever it began to wait.
    let url = bench.broker.url.clone();
    let waiter = std::thread::spawn(move || {
        let session = Session::connect(&url).unwrap();
        call(&session, "ALMemory", "getDataOnChange", vec![key("GyrZ").into(), 0.into()])
    });
    let mut scripted = Vec::new();
    while !waiter.is_finished() {
        let value = 1.0 + scripted.len() as f32 / 4.0;
        assert!(scripted.len() < 2_000, "getDataOnChange on GyrZ never answered");
        let assignment = format!("Gyroscope=0,0,{value}");
        bench.sim.script(|script| script.assign(&assignment).unwrap()).unwrap();
        bench.step();
        scripted.push(value);
    }
    let answer = waiter.join().unwrap().as_f64().unwrap() as f32;
    assert!(scripted.contains(&answer), "{answer} is none of {scripted:?}");
}
