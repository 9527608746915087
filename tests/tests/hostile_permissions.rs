//! What no client may do, against the real `naobroker` binary: act for another client's module,
//! write or raise another module's keys and events (the owner may do each), and start a
//! listener beyond loopback without authentication or over a regular file.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use naobroker_e2e::hostile::{callback_method, counter, wait_until, RawClient};
use naobroker_e2e::{bin, free_port, scratch_dir, Process, TestBroker};
use naobroker_protocol::{Envelope, Value};
use serde_json::{json, Value as Json};

// ---------------------------------------------------------------------------------------
// Forbidden actions.

#[test]
fn forbidden_actions_are_refused_naming_the_rule_and_the_owner_may_do_them() {
    let broker = TestBroker::start("");
    let mut echo = broker.module("echo", "Echo");
    let owner = RawClient::connect(&broker.url, "owner");
    owner
        .request(|id| Envelope::Register {
            id,
            module: "Owner".into(),
            methods: vec![callback_method("onEvent")],
        })
        .unwrap();
    let subscribe = |event: &str, module: &str| vec![event.into(), module.into(), "onEvent".into()];
    owner.call("ALMemory", "subscribeToEvent", subscribe("Test/Event", "Owner")).unwrap();
    let subscribers =
        || broker.call("ALMemory.getSubscribers", &["\"Test/Event\""]).as_array().unwrap().clone();
    assert_eq!(subscribers(), [json!("Owner")]);

    let intruder = RawClient::connect(&broker.url, "intruder");
    let refused = |result: Result<Value, String>, rule: &str| {
        let message = result.expect_err("refused");
        assert!(message.contains(rule), "{message:?} does not say {rule:?}");
    };
    refused(intruder.call("Echo", "exit", vec![]), "only the client that registered Echo may make it exit");
    assert!(echo.child.try_wait().unwrap().is_none(), "the echo process lives");
    assert_eq!(broker.call("Echo.echo", &["1"]), json!(1));
    refused(
        intruder.call("ALMemory", "raiseEvent", vec!["DCM/PostProcess".into(), 1.into()]),
        "DCM/PostProcess belongs to module DCM",
    );
    let fallen_before = intruder.call("ALMemory", "getData", vec!["ALMotion/Robot/Fallen".into()]);
    refused(
        intruder.call("ALMemory", "insertData", vec!["ALMotion/Robot/Fallen".into(), true.into()]),
        "ALMotion/Robot/Fallen belongs to module ALMotion",
    );
    assert_eq!(intruder.call("ALMemory", "getData", vec!["ALMotion/Robot/Fallen".into()]), fallen_before);
    refused(
        intruder.call("ALMemory", "insertData", vec!["Owner/Key".into(), 1.into()]),
        "Owner/Key belongs to module Owner",
    );
    // NAOqi's standard names have no module prefix: reserved for the module that raises them.
    for (name, module) in
        [("robotHasFallen", "ALMotion"), ("FrontTactilTouched", "ALSensors"), ("footContact", "ALSensors")]
    {
        refused(
            intruder.call("ALMemory", "raiseEvent", vec![name.into(), true.into()]),
            &format!("{name} belongs to module {module}"),
        );
        refused(
            intruder.call("ALMemory", "insertData", vec![name.into(), true.into()]),
            &format!("{name} belongs to module {module}"),
        );
    }
    refused(
        intruder.call("ALMemory", "raiseEvent", vec!["Echo/Shouted".into(), "forged".into()]),
        "Echo/Shouted belongs to module Echo",
    );
    refused(
        intruder.call("ALMemory", "subscribeToEvent", subscribe("Test/Event", "Echo")),
        "module Echo belongs to another client",
    );
    refused(
        intruder.call("ALMemory", "unsubscribeToEvent", vec!["Test/Event".into(), "Echo".into()]),
        "module Echo belongs to another client",
    );
    refused(
        intruder.call("ALMemory", "unsubscribeToEvent", vec!["Test/Event".into(), "Owner".into()]),
        "module Owner belongs to another client",
    );
    assert_eq!(subscribers(), [json!("Owner")], "the owner's callback is still there");
    refused(
        intruder.request(|id| Envelope::Unregister { id, module: "Owner".into() }),
        "module Owner is not registered by this client",
    );
    refused(
        intruder.request(|id| Envelope::Unregister { id, module: "Echo".into() }),
        "module Echo is not registered by this client",
    );
    assert!(broker.modules().iter().any(|m| m == "Owner") && broker.modules().iter().any(|m| m == "Echo"));
    let refusals = counter(&broker, "refused");
    assert!(refusals >= 3, "{refusals} refusals counted");

    // The owner may do each of these for its own module and prefix.
    owner.call("ALMemory", "insertData", vec!["Owner/Key".into(), 2.into()]).unwrap();
    assert_eq!(broker.call("ALMemory.getData", &["Owner/Key"]), json!(2));
    owner.call("ALMemory", "raiseEvent", vec!["Owner/Thing".into(), 3.into()]).unwrap();
    assert_eq!(broker.call("ALMemory.getData", &["Owner/Thing"]), json!(3));
    owner.call("ALMemory", "unsubscribeToEvent", vec!["Test/Event".into(), "Owner".into()]).unwrap();
    assert_eq!(subscribers(), Vec::<Json>::new());
    owner.call("ALMemory", "subscribeToEvent", subscribe("Test/Event", "Owner")).unwrap();
    assert_eq!(subscribers(), [json!("Owner")]);
    // Forwarded to the owner itself, which answers true.
    assert_eq!(owner.call("Owner", "exit", vec![]), Ok(Value::from(true)));
    assert_eq!(
        owner.request(|id| Envelope::Unregister { id, module: "Owner".into() }),
        Ok(Value::from(true))
    );
    assert!(!broker.modules().iter().any(|m| m == "Owner"));
    assert_eq!(
        broker.call("ALMemory.getSubscribers", &["\"Test/Event\""]),
        json!([]),
        "its callbacks went with it"
    );
}

// ---------------------------------------------------------------------------------------
// Listeners that must not start.

/// Run the broker with `args`, expecting it to exit; its status and standard error.
fn broker_exit(args: &[&str]) -> (ExitStatus, String) {
    let mut process = Process::spawn(
        Command::new(bin("naobroker"))
            .args(["--config", "/dev/null", "--clock", "manual"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped()),
    );
    let mut status = None;
    wait_until("the broker to exit", Duration::from_secs(20), || {
        status = process.child.try_wait().unwrap();
        status.is_some()
    });
    let mut stderr = String::new();
    process.child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    (status.unwrap(), stderr)
}

#[test]
fn a_listener_beyond_loopback_or_over_a_regular_file_is_refused() {
    let port = free_port();
    for endpoint in [format!("tcp://0.0.0.0:{port}"), format!("tcp://[::]:{port}")] {
        let (status, stderr) = broker_exit(&["--listen", &endpoint]);
        assert!(!status.success(), "{endpoint} was accepted");
        assert!(stderr.contains("needs authentication"), "{endpoint}: {stderr}");
    }
    let dir = scratch_dir("hostile-ipc");
    let precious = dir.join("precious.txt");
    std::fs::write(&precious, "keep me").unwrap();
    let (status, stderr) = broker_exit(&["--listen", &format!("ipc://{}", precious.display())]);
    assert!(!status.success(), "an ipc path over a regular file was accepted");
    assert!(
        stderr.contains(&precious.display().to_string()) && stderr.contains("is not a socket"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me");
    std::fs::remove_dir_all(&dir).unwrap();
}
