//! ALMemory through the broker: data, events, NAOqi-style and SDK-style subscriptions,
//! DCM-owned keys and fast access.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use naobroker_framework::{
    remote, Broker, BrokerConfig, CallbackSubscription, ErrorKind, Methods, Module, Proxy, Session, Value,
};
use naobroker_memory::{ALMemory, MemoryConfig, Store};
use naobroker_rtslots::{RtSlots, SlotKind, SlotLayout};

fn free_url() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    format!("tcp://127.0.0.1:{port}")
}

async fn start() -> (String, Broker, Arc<Store>) {
    let url = free_url();
    let broker =
        Broker::start_with_directory(BrokerConfig { listen: vec![url.clone()], ..BrokerConfig::default() })
            .await
            .unwrap();
    let mut layout = SlotLayout::new();
    layout.add("Device/SubDeviceList/HeadYaw/Position/Sensor/Value", SlotKind::Float);
    layout.add("DCM/Time", SlotKind::Int);
    let config = MemoryConfig { event_history: 3, ..MemoryConfig::default() };
    let store = Store::new(RtSlots::new(layout), config.store_limits());
    broker.add_module(ALMemory::new(Arc::clone(&store), broker.clone(), config)).unwrap();
    (url, broker, store)
}

/// A module that records the events it is called back with.
struct Recorder {
    seen: Rc<RefCell<Vec<Value>>>,
}

impl Module for Recorder {
    fn name(&self) -> String {
        "Recorder".into()
    }

    fn methods(m: &mut Methods<Self>) {
        m.add(
            "onEvent",
            "Records (name, value, message).",
            |this, _, (name, value, message): (String, Value, Value)| {
                this.seen.borrow_mut().push(Value::Array(vec![name.into(), value, message]));
                Ok(())
            },
        )
        .add("seen", "What was recorded.", |this, _, ()| Ok(this.seen.borrow().clone()));
    }
}

#[actix_rt::test]
async fn data_round_trips_with_types_timestamps_and_filters() {
    let (url, _broker, _store) = start().await;
    let memory = Proxy::connect(&url, "ALMemory").await.unwrap();
    memory.call("insertData", ("Robot/Name", "nao")).await.unwrap();
    memory
        .call("insertListData", (vec![("Robot/Age", Value::from(3)), ("Other", Value::F64(0.5))],))
        .await
        .unwrap();
    assert_eq!(memory.call("getData", ("Robot/Name",)).await.unwrap(), Value::from("nao"));
    assert_eq!(
        memory.call("getListData", (vec!["Robot/Age", "Other"],)).await.unwrap(),
        Value::Array(vec![3.into(), Value::F64(0.5)])
    );
    let robot_keys: Vec<String> = memory.call_as("getDataList", ("Robot/",)).await.unwrap();
    assert_eq!(robot_keys, ["Robot/Age", "Robot/Name"]);
    let all: Vec<String> = memory.call_as("getDataListName", ()).await.unwrap();
    assert!(all.contains(&"DCM/Time".to_owned()) && all.contains(&"Other".to_owned()));
    assert_eq!(memory.call("getType", ("Robot/Name",)).await.unwrap(), Value::from("Data"));
    let stamped: (Value, u64, u64) = memory.call_as("getTimestamp", ("Robot/Name",)).await.unwrap();
    assert!(stamped.1 > 1_600_000_000);
    memory.call("removeData", ("Robot/Name",)).await.unwrap();
    assert_eq!(
        memory.call("getData", ("Robot/Name",)).await.unwrap_err().message,
        "ALMemory.getData: no key named Robot/Name"
    );
    assert_eq!(
        memory.call("getData", (5,)).await.unwrap_err().message,
        "ALMemory.getData: argument 1 must be String, got integer"
    );
    assert!(memory
        .call("getListData", (vec!["Other", "Nope"],))
        .await
        .unwrap_err()
        .message
        .contains("no key named Nope"));
}

#[actix_rt::test]
async fn dcm_keys_are_read_from_slots_and_refused_to_writers() {
    let (url, _broker, store) = start().await;
    let memory = Proxy::connect(&url, "ALMemory").await.unwrap();
    let key = "Device/SubDeviceList/HeadYaw/Position/Sensor/Value";
    store.slots().set(0, 0.25);
    store.slots().set(1, 1234.0);
    assert_eq!(memory.call("getData", (key,)).await.unwrap(), Value::F64(0.25));
    assert_eq!(memory.call("getData", ("DCM/Time",)).await.unwrap(), Value::from(1234));
    for attempt in
        [memory.call("insertData", (key, 1.0)).await, memory.call("removeData", ("DCM/Time",)).await]
    {
        assert!(attempt.unwrap_err().message.contains("owned by DCM"));
    }
    let listed =
        memory.call("insertListData", (vec![("Mine", Value::from(1)), ("HAL/Ack", Value::from(2))],)).await;
    assert!(listed.unwrap_err().message.contains("HAL/Ack is owned by DCM"));
    assert!(memory.call("getData", ("Mine",)).await.is_err(), "refused whole, nothing half-written");
    let fast = store.slots().fast_access(&[key, "DCM/Time"]).unwrap();
    let mut values = [0.0; 2];
    fast.read(&mut values);
    assert_eq!(values, [0.25, 1234.0]);
}

#[actix_rt::test]
async fn clients_cannot_raise_declare_or_remove_the_dcms_data() {
    let (url, _broker, store) = start().await;
    let memory = Proxy::connect(&url, "ALMemory").await.unwrap();
    let key = "RobotConfig/Body/Type";
    store.insert_owned(key, Value::from("NAO")).unwrap();
    let value = || Value::from("Pepper");
    let attempts = [
        memory.call("raiseEvent", (key, value())).await,
        memory.call("raiseMicroEvent", (key, value())).await,
        memory.call("declareEvent", (key,)).await,
        memory.call("removeData", (key,)).await,
        memory.call("removeEvent", (key,)).await,
        memory.call("removeMicroEvent", (key,)).await,
        memory.call("raiseEvent", ("Device/DeviceList/Mine", value())).await,
        memory.call("declareEvent", ("HAL/Mine",)).await,
    ];
    for attempt in attempts {
        let error = attempt.unwrap_err().message;
        assert!(error.contains("owned by DCM: clients cannot write, raise or remove it"), "{error}");
    }
    assert_eq!(memory.call("getData", (key,)).await.unwrap(), Value::from("NAO"));
    assert_eq!(memory.call("getType", (key,)).await.unwrap(), Value::from("Data"));
    // Subscribing to a DCM key creates nothing under its prefixes: the DCM can still add it.
    let recorder = Recorder { seen: Rc::default() };
    let own_memory = Proxy::new(Session::Client(remote::serve(&url, recorder).await.unwrap()), "ALMemory");
    own_memory.call("subscribeToEvent", ("RobotConfig/Later", "Recorder", "onEvent")).await.unwrap();
    assert!(memory.call("getData", ("RobotConfig/Later",)).await.is_err());
    store.insert_owned("RobotConfig/Later", Value::from(1)).unwrap();
}

/// `SubscribeCallback` and `UnsubscribeCallback`, the messages of their own, are ALMemory's
/// methods: the same checks, the same event declared, the same callbacks.
#[actix_rt::test]
async fn callback_messages_subscribe_as_almemory_s_methods_do() {
    let (url, _broker, _store) = start().await;
    let seen = Rc::new(RefCell::new(Vec::new()));
    let recorder_session = remote::serve(&url, Recorder { seen: Rc::clone(&seen) }).await.unwrap();
    let memory = Proxy::connect(&url, "ALMemory").await.unwrap();
    let micro = CallbackSubscription {
        event: "Tick".into(),
        module: "Recorder".into(),
        method: "onEvent".into(),
        micro_message: Some("my message".into()),
    };
    let Session::Client(stranger) = memory.session() else { panic!("a connection") };
    let refused = stranger.subscribe_callback(micro.clone()).await.unwrap_err();
    assert_eq!(refused.kind, ErrorKind::Refused, "{refused}");
    assert!(refused.message.contains("belongs to another client"), "{refused}");
    let wrong_method = CallbackSubscription { method: "nope".into(), ..micro.clone() };
    let missing = recorder_session.subscribe_callback(wrong_method).await.unwrap_err();
    assert_eq!(missing.kind, ErrorKind::NotFound, "{missing}");

    recorder_session.subscribe_callback(micro).await.unwrap();
    assert_eq!(memory.call("getType", ("Tick",)).await.unwrap(), Value::from("MicroEvent"));
    assert_eq!(
        memory.call("getSubscribers", ("Tick",)).await.unwrap(),
        Value::Array(vec!["Recorder".into()])
    );
    memory.call("raiseMicroEvent", ("Tick", "tock")).await.unwrap();
    let recorder = Proxy::connect(&url, "Recorder").await.unwrap();
    let mut calls = Vec::new();
    for _ in 0..100 {
        calls = recorder.call_as::<Vec<Value>, _>("seen", ()).await.unwrap();
        if !calls.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(calls, vec![Value::Array(vec!["Tick".into(), "tock".into(), "my message".into()])]);

    let refused = stranger.unsubscribe_callback("Tick", "Recorder").await.unwrap_err();
    assert_eq!(refused.kind, ErrorKind::Refused, "{refused}");
    recorder_session.unsubscribe_callback("Tick", "Recorder").await.unwrap();
    assert_eq!(memory.call("getSubscribers", ("Tick",)).await.unwrap(), Value::Array(vec![]));
    let gone = recorder_session.unsubscribe_callback("Tick", "Recorder").await.unwrap_err();
    assert_eq!(gone.kind, ErrorKind::NotFound, "{gone}");
}

#[actix_rt::test]
async fn events_call_naoqi_subscribers_in_another_process_and_stream_to_sdk_ones() {
    let (url, broker, _store) = start().await;
    let seen = Rc::new(RefCell::new(Vec::new()));
    let recorder_session = remote::serve(&url, Recorder { seen: Rc::clone(&seen) }).await.unwrap();
    let memory = Proxy::connect(&url, "ALMemory").await.unwrap();
    let mut stream = memory.subscribe("Hand/Touched").await.unwrap();
    // Only the client that serves Recorder may subscribe or unsubscribe its callbacks.
    let stranger = memory.call("subscribeToEvent", ("Hand/Touched", "Recorder", "onEvent")).await;
    assert!(stranger.unwrap_err().message.contains("belongs to another client"));
    let own_memory = Proxy::new(Session::Client(recorder_session.clone()), "ALMemory");

    assert!(own_memory
        .call("subscribeToEvent", ("Hand/Touched", "Nobody", "onEvent"))
        .await
        .unwrap_err()
        .message
        .contains("no module named Nobody"));
    assert!(own_memory
        .call("subscribeToEvent", ("Hand/Touched", "Recorder", "nope"))
        .await
        .unwrap_err()
        .message
        .contains("no method named nope"));
    own_memory.call("subscribeToEvent", ("Hand/Touched", "Recorder", "onEvent")).await.unwrap();
    own_memory.call("subscribeToMicroEvent", ("Tick", "Recorder", "my message", "onEvent")).await.unwrap();
    assert_eq!(
        memory.call("getSubscribers", ("Hand/Touched",)).await.unwrap(),
        Value::Array(vec!["Recorder".into()])
    );

    // Raising an undeclared event declares it, as NAOqi does.
    for i in 0..5 {
        memory.call("raiseEvent", ("Hand/Touched", i)).await.unwrap();
    }
    memory.call("raiseMicroEvent", ("Tick", "tock")).await.unwrap();
    for i in 0..5 {
        assert_eq!(stream.next().await.unwrap().value, Value::from(i));
    }
    assert_eq!(memory.call("getData", ("Hand/Touched",)).await.unwrap(), Value::from(4));
    assert_eq!(memory.call("getType", ("Tick",)).await.unwrap(), Value::from("MicroEvent"));
    assert_eq!(
        memory.call("getEventHistory", ("Hand/Touched",)).await.unwrap(),
        Value::Array(vec![2.into(), 3.into(), 4.into()])
    );
    assert_eq!(memory.call("getEventList", ()).await.unwrap(), Value::Array(vec!["Hand/Touched".into()]));
    assert_eq!(memory.call("getMicroEventList", ()).await.unwrap(), Value::Array(vec!["Tick".into()]));

    let recorder = Proxy::connect(&url, "Recorder").await.unwrap();
    let mut calls = Vec::new();
    for _ in 0..100 {
        calls = recorder.call_as::<Vec<Value>, _>("seen", ()).await.unwrap();
        if calls.len() == 6 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(calls[0], Value::Array(vec!["Hand/Touched".into(), 0.into(), "".into()]));
    assert!(calls.contains(&Value::Array(vec!["Tick".into(), "tock".into(), "my message".into()])));

    let stranger = memory.call("unsubscribeToEvent", ("Hand/Touched", "Recorder")).await;
    assert!(stranger.unwrap_err().message.contains("belongs to another client"));
    own_memory.call("unsubscribeToMicroEvent", ("Tick", "Recorder")).await.unwrap();
    assert!(own_memory.call("unsubscribeToMicroEvent", ("Tick", "Recorder")).await.is_err());
    // The subscriber goes away: its subscriptions go with it.
    recorder_session.close();
    for _ in 0..60 {
        if !broker.module_exists("Recorder") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(memory.call("getSubscribers", ("Hand/Touched",)).await.unwrap(), Value::Array(vec![]));
    memory.call("raiseEvent", ("Hand/Touched", 9)).await.unwrap();
    memory.call("removeEvent", ("Hand/Touched",)).await.unwrap();
    assert!(memory.call("getEventHistory", ("Hand/Touched",)).await.is_err());
}

#[actix_rt::test]
async fn get_data_on_change_waits_for_a_write_or_times_out() {
    let (url, _broker, _store) = start().await;
    let memory = Proxy::connect(&url, "ALMemory").await.unwrap();
    memory.call("insertData", ("Counter", 1)).await.unwrap();
    let waiting = actix_rt::spawn({
        let memory = memory.clone();
        async move { memory.call("getDataOnChange", ("Counter", 5000)).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    memory.call("insertData", ("Counter", 2)).await.unwrap();
    assert_eq!(waiting.await.unwrap().unwrap(), Value::from(2));
    let error = memory.call("getDataOnChange", ("Counter", 30)).await.unwrap_err();
    assert_eq!(error.message, "ALMemory.getDataOnChange: Counter did not change within 30 ms");
}

#[actix_rt::test]
async fn a_hundred_thousand_keys_and_huge_values() {
    let (url, _broker, store) = start().await;
    // Up to just under max_keys (100 000 by default), with room for the keys below.
    let bulk = MemoryConfig::default().max_keys - 10;
    for i in 0..bulk {
        store.insert(&format!("Bulk/{i}"), Value::from(i), naobroker_memory::EntryKind::Data, None).unwrap();
    }
    let memory = Proxy::connect(&url, "ALMemory").await.unwrap();
    let last = format!("Bulk/{}", bulk - 1);
    assert_eq!(memory.call("getData", (last,)).await.unwrap(), Value::from(bulk - 1));
    let big = Value::Binary(vec![7; 1024 * 1024 - 16]);
    memory.call("insertData", ("Big", big.clone())).await.unwrap();
    assert_eq!(memory.call("getData", ("Big",)).await.unwrap(), big);
    let too_big = Value::Binary(vec![7; 4 * 1024 * 1024]);
    let error = memory.call("insertData", ("TooBig", too_big)).await.unwrap_err();
    assert!(error.message.contains("more than max_value_bytes (1048576)"), "{}", error.message);
    let long_key = "K".repeat(1 << 20);
    let error = memory.call("insertData", (long_key, 1)).await.unwrap_err();
    assert!(error.message.contains("exceeds max_name_bytes (256)") && error.message.len() < 300);
}
