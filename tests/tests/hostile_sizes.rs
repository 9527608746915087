//! Input past the size limits, against the real `naobroker` binary over real sockets: a frame
//! header claiming a terabyte closes that connection alone, before anything is allocated, and
//! names, values and nesting past the limits are refused with short errors naming the limit.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use naobroker_e2e::hostile::{callback_method, counter, rss_mib, wait_until, RawClient};
use naobroker_e2e::TestBroker;
use naobroker_protocol::{Envelope, Value};
use serde_json::json;

// ---------------------------------------------------------------------------------------
// An oversized frame header.

/// A ZMTP 3.0 greeting (RFC 23): signature, version 3.0, mechanism NULL padded to 20
/// bytes, as-server 0, filler: 64 bytes.
fn zmtp_greeting() -> Vec<u8> {
    let mut greeting = vec![0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 3, 0];
    greeting.extend_from_slice(b"NULL");
    greeting.resize(12 + 20, 0);
    greeting.push(0);
    greeting.resize(64, 0);
    greeting
}

/// The READY command of a DEALER, as a short command frame.
fn zmtp_ready_of_a_dealer() -> Vec<u8> {
    let mut body = b"\x05READY\x0bSocket-Type".to_vec();
    body.extend_from_slice(&6u32.to_be_bytes());
    body.extend_from_slice(b"DEALER");
    let mut frame = vec![0x04, body.len() as u8];
    frame.extend(body);
    frame
}

/// Open a raw TCP connection, handshake as a DEALER and send one long-frame header that
/// claims `claimed` bytes, then nothing more. Answers once the broker closed the connection.
fn send_frame_header(broker: &TestBroker, claimed: u64) {
    let address = broker.url.strip_prefix("tcp://").unwrap();
    let mut attacker = TcpStream::connect(address).unwrap();
    let mut bytes = zmtp_greeting();
    bytes.extend(zmtp_ready_of_a_dealer());
    bytes.push(0x02);
    bytes.extend(claimed.to_be_bytes());
    attacker.write_all(&bytes).unwrap();
    attacker.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    let mut buffer = [0u8; 256];
    // The broker sends its own greeting and READY, then closes the connection.
    wait_until("the broker to close the connection", Duration::from_secs(10), || {
        match attacker.read(&mut buffer) {
            Ok(0) => true,
            Ok(_) => false,
            Err(error) => {
                !matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
            }
        }
    });
}

#[test]
fn a_frame_header_claiming_a_terabyte_closes_that_connection_and_nothing_else() {
    let mut broker = TestBroker::start("");
    let time_before = broker.step(1);
    send_frame_header(&broker, 1 << 40);
    assert!(broker.is_running(), "the broker died: {}", broker.log());
    let time_after = broker.step(10);
    assert!(time_after > time_before, "the DCM cycles on");
    assert_eq!(broker.call("ALMemory.getData", &["DCM/Time"]), json!(time_after), "others are served");
    assert_eq!(counter(&broker, "oversized_frames"), 1);
    // Just past max_frame_bytes (16 MiB by default) is refused as well, from the header.
    send_frame_header(&broker, (16 << 20) + 1);
    assert!(broker.is_running(), "the broker died: {}", broker.log());
    assert_eq!(counter(&broker, "oversized_frames"), 2);
    assert!(broker.step(1) > time_after);
    assert!(rss_mib(broker.pid()) < 200, "{} MiB after the attack", rss_mib(broker.pid()));
}

// ---------------------------------------------------------------------------------------
// Half-sent frames.

/// A small total for unfinished messages and a short stall timeout, so the test is quick.
const UNFINISHED_LIMITS: &str = "[broker.limits]\nmax_unfinished_bytes = 8388608\nstall_timeout_ms = 1000\n";
const UNFINISHED_LIMIT: u64 = 8 << 20;
/// What each attacker sends of the frame it announced (just under max_frame_bytes).
const HALF_SENT: usize = 1 << 20;
const ANNOUNCED: u32 = (16 << 20) - 64;
const ATTACKERS_PER_WIRE: usize = 8;

/// Greeting and READY on the ZeroMQ wire, then a long frame header announcing `ANNOUNCED`.
fn zmtp_announcing() -> Vec<u8> {
    let mut bytes = zmtp_greeting();
    bytes.extend(zmtp_ready_of_a_dealer());
    bytes.push(0x02);
    bytes.extend(u64::from(ANNOUNCED).to_be_bytes());
    bytes
}

/// A qi call's 28-byte header announcing a payload of `ANNOUNCED` bytes.
fn qi_announcing() -> Vec<u8> {
    let mut header = vec![0x42, 0xde, 0xad, 0x42];
    header.extend(1u32.to_le_bytes()); // id
    header.extend(ANNOUNCED.to_le_bytes());
    header.extend([0, 0, 1, 0]); // version 0, a call, no flags
    for part in [1u32, 1, 100] {
        header.extend(part.to_le_bytes()); // service, object, action
    }
    header
}

/// Connect to `address`, send `prefix` and `HALF_SENT` bytes of the announced frame, then
/// nothing. The broker may close the connection while it writes (over the budget).
fn half_send(address: &str, prefix: &[u8]) -> TcpStream {
    let mut attacker = TcpStream::connect(address).unwrap();
    let mut bytes = prefix.to_vec();
    bytes.resize(prefix.len() + HALF_SENT, b'x');
    let _ = attacker.write_all(&bytes);
    attacker
}

/// Whether the broker closed `stream` (after what it sent first) within `limit`.
fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    stream.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let started = std::time::Instant::now();
    let mut buffer = [0u8; 256];
    while started.elapsed() < limit {
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(error) if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return true,
        }
    }
    false
}

#[test]
fn half_sent_frames_are_bounded_in_total_and_closed_when_they_stall() {
    let qi_port = naobroker_e2e::free_port();
    let config = format!("{UNFINISHED_LIMITS}[qi]\nlisten = [\"tcp://127.0.0.1:{qi_port}\"]\n");
    let broker = TestBroker::start_with(&config, "");
    let idle = rss_mib(broker.pid());
    let zeromq = broker.url.strip_prefix("tcp://").unwrap().to_owned();
    let qi = format!("127.0.0.1:{qi_port}");
    let mut attackers = Vec::new();
    for _ in 0..ATTACKERS_PER_WIRE {
        attackers.push(half_send(&zeromq, &zmtp_announcing()));
        attackers.push(half_send(&qi, &qi_announcing()));
    }
    // Everything is sent and read (or refused) by now; each attacker waits.
    let held = broker.call("ServiceDirectory.stats", &[]);
    let peak = rss_mib(broker.pid());
    let report = format!(
        "RSS idle {idle} MiB, with {} attackers {peak} MiB; held {}, refused {}",
        attackers.len(),
        held["unfinished_bytes"],
        held["unfinished_refused"]
    );
    eprintln!("{report}");
    // Nobody's frame arrives any more: every attacker is closed after the stall timeout.
    for (index, attacker) in attackers.iter_mut().enumerate() {
        assert!(closed_within(attacker, Duration::from_secs(10)), "attacker {index} still open: {report}");
    }
    let held_bytes = held["unfinished_bytes"].as_u64().expect("stats has unfinished_bytes");
    assert!(held_bytes <= UNFINISHED_LIMIT, "{report}");
    assert!(held["unfinished_refused"].as_u64().unwrap() >= 1, "{report}");
    let after = broker.call("ServiceDirectory.stats", &[]);
    eprintln!("RSS after the attackers were closed: {} MiB", rss_mib(broker.pid()));
    assert_eq!(after["unfinished_bytes"], json!(0), "{report}");
    // Which wire's attackers the budget went to depends on the order the broker read them in
    // (under load, one wire's may all have been refused): the held ones stalled, on either.
    // Each wire's own stall rule is proven by the trickle test below.
    let stalled = after["stalled_frames"].as_u64().unwrap() + after["qi_stalled_frames"].as_u64().unwrap();
    assert!(stalled >= 1, "{report}");
    // 8 MiB of budget, what the refused ones held before they were refused, a read chunk each.
    assert!(peak < idle + 24, "{report}");
    // Others are served.
    broker.call("ALMemory.getData", &["DCM/Time"]);
}

/// A short stall timeout, so that twelve of them pass quickly.
const TRICKLE_LIMITS: &str = "[broker.limits]\nstall_timeout_ms = 200\n";
/// What a trickler sends every `TRICKLE_EVERY`: more than the 64 KiB each stall timeout asks
/// for, so it never stalls, and its 16 MiB frame would take 25 s to arrive.
const TRICKLE_CHUNK: usize = 70 << 10;
const TRICKLE_EVERY: Duration = Duration::from_millis(100);

/// Send `prefix`, then `TRICKLE_CHUNK` bytes of the announced frame every `TRICKLE_EVERY`
/// until the broker closes the connection: how long that took, or `None` after `limit`.
fn trickle_until_closed(address: &str, prefix: &[u8], limit: Duration) -> Option<Duration> {
    let mut trickler = TcpStream::connect(address).unwrap();
    let started = std::time::Instant::now();
    if trickler.write_all(prefix).is_err() {
        return Some(started.elapsed());
    }
    while started.elapsed() < limit {
        if trickler.write_all(&[b'x'; TRICKLE_CHUNK]).is_err() || closed_within(&mut trickler, TRICKLE_EVERY)
        {
            return Some(started.elapsed());
        }
    }
    None
}

/// A client that sends just enough each stall timeout never stalls, but its message may not
/// stay unfinished for more than twelve of them (`STALL_MAX_PERIODS`): otherwise a few such
/// clients would hold the unfinished budget for as long as they like (issue 25).
#[test]
fn a_frame_trickled_in_is_closed_after_twelve_stall_timeouts() {
    let qi_port = naobroker_e2e::free_port();
    let config = format!("{TRICKLE_LIMITS}[qi]\nlisten = [\"tcp://127.0.0.1:{qi_port}\"]\n");
    let broker = TestBroker::start_with(&config, "");
    let zeromq = broker.url.strip_prefix("tcp://").unwrap().to_owned();
    let qi = format!("127.0.0.1:{qi_port}");
    for (wire, address, prefix) in [("zeromq", &zeromq, zmtp_announcing()), ("qi", &qi, qi_announcing())] {
        let closed = trickle_until_closed(address, &prefix, Duration::from_secs(10));
        // Twelve periods of 200 ms: 2.4 s, and the broker's thread may be late to see it.
        assert!(
            closed.is_some_and(|after| after >= Duration::from_secs(2)),
            "{wire}: the trickler was closed after {closed:?}"
        );
    }
    let after = broker.call("ServiceDirectory.stats", &[]);
    assert!(after["stalled_frames"].as_u64().unwrap() >= 1, "{after}");
    assert!(after["qi_stalled_frames"].as_u64().unwrap() >= 1, "{after}");
    broker.call("ALMemory.getData", &["DCM/Time"]);
}

// ---------------------------------------------------------------------------------------
// Names and values past the limits.

/// The error names `limit` and quotes only a short excerpt of the bad input.
fn refused_by_limit(result: Result<Value, String>, limit: &str) {
    let message = result.expect_err("refused");
    assert!(message.len() < 300, "a {}-byte error: {}…", message.len(), &message[..300]);
    assert!(message.contains(limit), "{message:?} does not name {limit}");
}

fn nested(depth: usize) -> Value {
    (0..depth).fold(Value::from(0), |inner, _| Value::Array(vec![inner]))
}

/// `ALMemory.insertData("Test/Deep", [[[...0...]]])` with `depth` arrays, written byte by byte
/// (building so deep a `Value` would overflow this test's own stack).
fn deep_insert(id: u64, depth: usize) -> Vec<u8> {
    let args = vec!["Test/Deep".into(), Value::Nil];
    let mut frame =
        Envelope::Call { id, module: "ALMemory".into(), method: "insertData".into(), args }.encode();
    assert_eq!(frame.pop(), Some(0xc0), "nil, the placeholder, is the last byte");
    frame.extend(std::iter::repeat_n(0x91, depth));
    frame.push(0);
    frame
}

#[test]
fn names_and_values_past_the_limits_are_refused_with_short_errors() {
    let broker = TestBroker::start("");
    let client = RawClient::connect(&broker.url, "limits");
    let huge_name = "M".repeat(10 << 20);
    refused_by_limit(
        client.request(|id| Envelope::Register { id, module: huge_name.clone(), methods: vec![] }),
        "max_name_bytes",
    );
    let long_method = vec![callback_method(&"m".repeat(100_000))];
    refused_by_limit(
        client.request(|id| Envelope::Register { id, module: "Fine".into(), methods: long_method }),
        "max_name_bytes",
    );
    let listed = broker.modules();
    assert!(
        listed.iter().all(|name| name.len() <= 256) && !listed.contains(&"Fine".to_owned()),
        "{listed:?}"
    );

    let long_key = format!("Test/{}", "k".repeat(1 << 20));
    refused_by_limit(
        client.call("ALMemory", "insertData", vec![long_key.as_str().into(), 1.into()]),
        "max_name_bytes",
    );
    refused_by_limit(
        client.call("ALMemory", "raiseEvent", vec![long_key.as_str().into(), 1.into()]),
        "max_name_bytes",
    );
    refused_by_limit(
        client.request(|id| Envelope::Subscribe { id, event: long_key.clone() }),
        "max_name_bytes",
    );
    refused_by_limit(client.call(&huge_name, "ping", vec![]), "max_name_bytes");
    // Errors that are not about a limit quote little of the input either.
    for (module, method) in
        [("ALMemory", "getData"), ("ALMemory", "getType"), ("ServiceDirectory", "methods")]
    {
        refused_by_limit(client.call(module, method, vec![long_key.as_str().into()]), "kkkk");
    }
    refused_by_limit(client.call("ALMemory", &huge_name, vec![]), "max_name_bytes");

    // Deep enough to overflow a recursive decoder's stack, too: the refusal still answers
    // the request it refuses.
    for depth in [40, 100_000] {
        refused_by_limit(client.request_frame(|id| deep_insert(id, depth)), "max_value_depth");
    }
    let big = Value::from("x".repeat(2 << 20));
    refused_by_limit(
        client.call("ALMemory", "insertData", vec!["Test/Big".into(), big.clone()]),
        "max_value_bytes",
    );
    refused_by_limit(client.call("ALMemory", "raiseEvent", vec!["Test/Big".into(), big]), "max_value_bytes");
    assert!(client.call("ALMemory", "getData", vec!["Test/Big".into()]).is_err(), "nothing was stored");
    // Within the limits all is well.
    client.call("ALMemory", "insertData", vec!["Test/Deep".into(), nested(32)]).unwrap();
    assert_eq!(client.call("ALMemory", "getData", vec!["Test/Deep".into()]), Ok(nested(32)));
    assert_eq!(broker.modules(), listed);
}
