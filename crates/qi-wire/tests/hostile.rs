//! Hostile qi clients on raw sockets: a bad magic, version or type, a header claiming more
//! than `max_frame_bytes`, garbage payloads, values nested past `max_value_depth`, a client
//! that never reads its replies. Each is refused and counted, and a well-behaved client on
//! the same broker goes on being served.

mod raw;

use naobroker_framework::Limits;
use naobroker_qi::{Address, Message, MessageType, HEADER_SIZE, OBJECT_MAIN};
use raw::{dynamic_string, wait_until, QiBroker, RawClient, ECHO_SERVICE};

fn small_limits() -> Limits {
    Limits {
        max_frame_bytes: 64 * 1024,
        max_value_depth: 8,
        max_queued_messages: 64,
        max_queued_bytes: 256 * 1024,
        ..Limits::default()
    }
}

/// `Echo.echo("still here")` answers on `client`.
fn still_served(client: &mut RawClient) {
    let echo = client.echo_uid();
    let reply = client.call(Address::new(ECHO_SERVICE, OBJECT_MAIN, echo), dynamic_string("still here"));
    assert_eq!(reply.kind, MessageType::Reply, "{reply:?}");
    assert_eq!(reply.payload, dynamic_string("still here"));
}

fn header_with(edit: impl FnOnce(&mut [u8; HEADER_SIZE])) -> Vec<u8> {
    let message = Message::new(1, MessageType::Call, Address::new(ECHO_SERVICE, OBJECT_MAIN, 2), Vec::new());
    let mut header: [u8; HEADER_SIZE] = message.encode().unwrap().try_into().unwrap();
    edit(&mut header);
    header.to_vec()
}

#[test]
fn bad_headers_close_the_connection_and_are_counted() {
    let broker = QiBroker::start(small_limits());
    let mut good = RawClient::authenticated(&broker);
    let bad_headers: [(&str, Vec<u8>); 3] = [
        ("magic", header_with(|h| h[..4].copy_from_slice(b"GET "))),
        ("version", header_with(|h| h[12] = 1)),
        ("type", header_with(|h| h[14] = 42)),
    ];
    for (count, (what, bytes)) in bad_headers.into_iter().enumerate() {
        let mut hostile = RawClient::connect(&broker);
        hostile.write(&bytes).unwrap();
        hostile.wait_closed();
        assert_eq!(broker.counter("qi_bad_headers"), count as u64 + 1, "bad {what}");
    }
    let mut http = RawClient::connect(&broker);
    http.write(b"GET / HTTP/1.1\r\nHost: robot\r\n\r\n").unwrap();
    http.wait_closed();
    assert_eq!(broker.counter("qi_bad_headers"), 4);
    still_served(&mut good);
    still_served(&mut RawClient::authenticated(&broker));
}

#[test]
fn a_header_over_max_frame_bytes_is_refused_before_its_payload() {
    let broker = QiBroker::start(small_limits());
    let mut good = RawClient::authenticated(&broker);
    let mut hostile = RawClient::authenticated(&broker);
    // A terabyte claimed, nothing of it sent: the header alone closes the connection.
    hostile.write(&header_with(|h| h[8..12].copy_from_slice(&u32::MAX.to_le_bytes()))).unwrap();
    hostile.wait_closed();
    assert_eq!(broker.counter("qi_oversized_frames"), 1);
    // Exactly the limit is read.
    let echo = good.echo_uid();
    let text = "x".repeat(64 * 1024 - 9);
    let reply = good.call(Address::new(ECHO_SERVICE, OBJECT_MAIN, echo), dynamic_string(&text));
    assert_eq!(reply.kind, MessageType::Reply);
    still_served(&mut good);
}

#[test]
fn garbage_payloads_are_answered_with_errors_counted() {
    let broker = QiBroker::start(small_limits());
    let mut hostile = RawClient::authenticated(&broker);
    let echo = hostile.echo_uid();
    let address = Address::new(ECHO_SERVICE, OBJECT_MAIN, echo);
    let bad_frames = broker.counter("bad_frames");
    let garbage: [Vec<u8>; 4] = [
        vec![0xff; 3],                                       // too short for a signature length
        [&100u32.to_le_bytes()[..], b"s"].concat(),          // a signature longer than the payload
        [&1u32.to_le_bytes()[..], b"Q"].concat(),            // no such type letter
        [dynamic_string("fine"), vec![0xde, 0xad]].concat(), // bytes after the value
    ];
    for (count, payload) in garbage.into_iter().enumerate() {
        let reply = hostile.call(address, payload);
        assert_eq!(reply.kind, MessageType::Error, "{reply:?}");
        assert!(naobroker_qi::error_message(&reply.payload).unwrap().starts_with("echo: "));
        assert_eq!(broker.counter("bad_frames"), bad_frames + count as u64 + 1);
    }
    // An argument nested past max_value_depth (8): a dynamic list in a list in ...
    let mut deep = Vec::new();
    for _ in 0..40 {
        deep.extend_from_slice(&[3, 0, 0, 0, b'[', b'm', b']', 1, 0, 0, 0]);
    }
    deep.extend_from_slice(&[0, 0, 0, 0]);
    let reply = hostile.call(address, deep);
    assert_eq!(reply.kind, MessageType::Error);
    // Unknown services, objects and methods are refused, not fatal.
    for address in
        [Address::new(99, 1, 100), Address::new(ECHO_SERVICE, 77, 0), Address::new(ECHO_SERVICE, 1, 9999)]
    {
        assert_eq!(hostile.call(address, Vec::new()).kind, MessageType::Error, "{address}");
    }
    // A dynamic payload that is not a tuple of arguments still reaches the method.
    let id = hostile.send_dynamic(address, dynamic_string("alone"));
    let reply = std::iter::from_fn(|| hostile.read()).find(|m| m.id == id).unwrap();
    assert_eq!(reply.payload, dynamic_string("alone"));
    // An answer to a call the broker never made, and an event: counted, nothing else.
    let bad_frames = broker.counter("bad_frames");
    hostile.send(MessageType::Reply, address, dynamic_string("unasked"));
    hostile.send(MessageType::Event, address, Vec::new());
    still_served(&mut hostile);
    assert_eq!(broker.counter("bad_frames"), bad_frames + 2);
}

#[test]
fn a_client_that_never_reads_is_disconnected_others_go_on() {
    let broker = QiBroker::start(small_limits());
    let mut good = RawClient::authenticated(&broker);
    let mut hostile = RawClient::authenticated(&broker);
    let echo = hostile.echo_uid();
    let address = Address::new(ECHO_SERVICE, OBJECT_MAIN, echo);
    let payload = dynamic_string(&"y".repeat(60 * 1024));
    // Replies pile up: past the socket buffers, then past max_queued_bytes (256 KiB).
    let mut sent = 0;
    while broker.counter("clients_disconnected") == 0 {
        assert!(sent < 10_000, "never disconnected");
        if hostile
            .write(&Message::new(sent + 10, MessageType::Call, address, payload.clone()).encode().unwrap())
            .is_err()
        {
            break;
        }
        sent += 1;
    }
    wait_until("the hostile client disconnected", || broker.counter("clients_disconnected") == 1);
    wait_until("the hostile client forgotten", || broker.clients() == 1);
    still_served(&mut good);
}

#[test]
fn subscribers_and_links_past_max_subscriptions_are_refused() {
    let broker = QiBroker::start(Limits { max_subscriptions: 3, ..small_limits() });
    let mut hostile = RawClient::authenticated(&broker);
    let object = hostile.subscriber("Many").unwrap();
    for link in 0..3 {
        assert_eq!(hostile.link(object, link).kind, MessageType::Reply);
    }
    let refused = hostile.link(object, 3);
    assert_eq!(refused.kind, MessageType::Error);
    let text = naobroker_qi::error_message(&refused.payload).unwrap();
    assert!(text.contains("max_subscriptions (3)"), "{text}");
    hostile.subscriber("Many").unwrap();
    hostile.subscriber("Many").unwrap();
    let text = hostile.subscriber("Many").unwrap_err();
    assert!(text.contains("max_subscriptions (3)"), "{text}");
    still_served(&mut hostile);
}
