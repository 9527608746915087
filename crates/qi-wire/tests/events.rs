//! Events to qi subscribers follow the broker's window rule: a subscriber that does not read
//! loses events, counted, while another subscriber of the same event gets every one; once
//! the slow one reads again, new events reach it. A qi client, which sends nothing while
//! idle, keeps its subscriptions however long it is silent.

mod raw;

use std::time::Duration;

use naobroker_framework::{Limits, Value};
use naobroker_qi::{MessageType, Type};
use raw::{QiBroker, RawClient, MEMORY_SERVICE};

/// The events `client` reads until it has `count` of them; their values.
fn read_events(client: &mut RawClient, count: usize) -> Vec<Value> {
    let mut values = Vec::with_capacity(count);
    while values.len() < count {
        let message = client.read().expect("the broker keeps the connection");
        if message.kind == MessageType::Event {
            assert_eq!(message.address.service, MEMORY_SERVICE);
            let options = naobroker_qi::Options::default();
            values.push(naobroker_qi::decode_value(&Type::Dynamic, &message.payload, &options).unwrap());
        }
    }
    values
}

#[test]
fn a_subscriber_that_does_not_read_loses_events_counted_others_get_theirs() {
    let limits = Limits {
        event_window: 16,
        max_queued_messages: 1024,
        max_queued_bytes: 64 << 20,
        ..Limits::default()
    };
    let broker = QiBroker::start(limits);
    let mut slow = RawClient::authenticated(&broker);
    let mut reader = RawClient::authenticated(&broker);
    slow.subscribe("Flood");
    reader.subscribe("Flood");
    let payload = "z".repeat(32 * 1024);
    // Past the slow client's socket buffers (a few MiB), its window fills and drops begin.
    let mut published = 0;
    while broker.counter("events_dropped") == 0 {
        assert!(published < 20_000, "no event was ever dropped");
        for _ in 0..20 {
            broker.publish("Flood", Value::from(payload.as_str()));
        }
        published += 20;
        assert_eq!(read_events(&mut reader, 20), vec![Value::from(payload.as_str()); 20]);
    }
    assert_eq!(broker.clients(), 2, "no one was disconnected");
    // The slow client reads what it was sent; an event published then reaches it.
    let mut waiting = 0;
    loop {
        broker.publish("Flood", Value::from("after"));
        if read_events(&mut slow, 1) == [Value::from("after")] {
            break;
        }
        waiting += 1;
    }
    assert!(waiting > 0, "the slow client had events waiting");
}

#[test]
fn a_silent_qi_client_is_not_dropped() {
    let timeout = Duration::from_millis(100);
    let broker = QiBroker::start_with_timeout(Limits::default(), timeout);
    let mut idle = RawClient::authenticated(&broker);
    idle.subscribe("Later");
    // Ten client timeouts without a word: a client of naobroker's own wire would be gone.
    std::thread::sleep(timeout * 10);
    assert_eq!(broker.clients(), 1);
    broker.publish("Later", Value::from(7));
    assert_eq!(read_events(&mut idle, 1), [Value::from(7)]);
}
