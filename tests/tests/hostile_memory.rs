//! ALMemory's totals against the real `naobroker` binary over real sockets: keys, bytes of
//! values and bytes of event history are bounded in total and per client, each refusal names
//! the limit, what a client removes is given back, and other clients keep their shares;
//! listings of every key or event leave the broker's thread to others.

use naobroker_e2e::hostile::counter;
use naobroker_e2e::TestBroker;
use naobroker_framework::blocking::Proxy;
use naobroker_framework::{CallError, Value};

/// Small totals so that a client meets them quickly; a client's share is a quarter of each.
const MEMORY_LIMITS: &str = "[memory]\nmax_keys = 2000\nmax_data_bytes = 8388608\n\
                             max_history_bytes = 4194304\nclient_share_percent = 25\n";
const KEY_SHARE: usize = 500;

fn almemory(broker: &TestBroker) -> Proxy {
    Proxy::connect(&broker.url, "ALMemory").expect("connects")
}

/// Insert `prefix/0`, `prefix/1`... with `value` until one is refused: how many went in, and
/// the refusal. Fails after `most` without one.
fn insert_until_refused(memory: &Proxy, prefix: &str, value: &Value, most: usize) -> (usize, CallError) {
    for count in 0..most {
        if let Err(error) = memory.call("insertData", (format!("{prefix}/{count}"), value.clone())) {
            return (count, error);
        }
    }
    panic!("{most} keys of {prefix} went in: no bound");
}

#[test]
fn keys_are_bounded_per_client_and_in_total_and_removal_gives_them_back() {
    let broker = TestBroker::start_with(MEMORY_LIMITS, "");
    let first = almemory(&broker);
    let (inserted, refusal) = insert_until_refused(&first, "First", &Value::from(1), 10 * KEY_SHARE);
    assert_eq!(inserted, KEY_SHARE, "{refusal}");
    assert!(refusal.message.contains("its share of max_keys (25% = 500)"), "{refusal}");
    // Another client has its own share.
    let second = almemory(&broker);
    let (inserted, refusal) = insert_until_refused(&second, "Second", &Value::from(1), 10 * KEY_SHARE);
    assert_eq!(inserted, KEY_SHARE, "{refusal}");
    // Overwriting one's own key costs no new key.
    first.call("insertData", ("First/0", 2)).unwrap();
    // What is removed is given back.
    for count in 0..10 {
        first.call("removeData", (format!("First/{count}"),)).unwrap();
    }
    let (inserted, _) = insert_until_refused(&first, "Again", &Value::from(1), 10 * KEY_SHARE);
    assert_eq!(inserted, 10);
    // More clients fill the total (the broker's own keys count toward it too).
    let (third, fourth) = (almemory(&broker), almemory(&broker));
    insert_until_refused(&third, "Third", &Value::from(1), 10 * KEY_SHARE);
    let (inserted, refusal) = insert_until_refused(&fourth, "Fourth", &Value::from(1), 10 * KEY_SHARE);
    assert!(inserted < KEY_SHARE, "{inserted} keys: the total is not reached");
    assert!(refusal.message.contains("past max_keys (2000)"), "{refusal}");
}

#[test]
fn bytes_of_values_are_bounded_per_client_and_in_total() {
    let broker = TestBroker::start_with(MEMORY_LIMITS, "");
    let big = Value::Binary(vec![7; 200 << 10]);
    let first = almemory(&broker);
    let (inserted, refusal) = insert_until_refused(&first, "First", &big, 100);
    // A share of 2 MiB holds ten values of 200 KiB.
    assert_eq!(inserted, 10, "{refusal}");
    assert!(refusal.message.contains("its share of max_data_bytes (25% = 2097152)"), "{refusal}");
    // Three more clients reach the 8 MiB total.
    let others: Vec<Proxy> = (0..3).map(|_| almemory(&broker)).collect();
    let refusals: Vec<CallError> = others
        .iter()
        .enumerate()
        .map(|(index, memory)| insert_until_refused(memory, &format!("Other{index}"), &big, 100).1)
        .collect();
    let last = refusals.last().unwrap();
    assert!(last.message.contains("past max_data_bytes (8388608)"), "{last}");
    // A small value overwriting a big one makes room.
    first.call("insertData", ("First/0", 1)).unwrap();
    others[2].call("insertData", ("Other2/Small", 1)).unwrap();
}

#[test]
fn the_event_history_is_bounded_per_client_and_in_total() {
    let broker = TestBroker::start_with(MEMORY_LIMITS, "");
    let value = Value::Binary(vec![7; 100 << 10]);
    let raiser = almemory(&broker);
    let mut refusal = None;
    let mut raised = 0;
    // 20 events of up to 32 kept values each: 64 MiB of history without a bound.
    'raising: for round in 0..32 {
        for event in 0..20 {
            match raiser.call("raiseEvent", (format!("Raiser/Event{event}"), value.clone())) {
                Ok(_) => raised += 1,
                Err(error) => {
                    refusal = Some((round, error));
                    break 'raising;
                }
            }
        }
    }
    let (_, refusal) = refusal.unwrap_or_else(|| panic!("{raised} values of 100 KiB kept: no bound"));
    // A share of 1 MiB keeps ten values of 100 KiB (the key's own value counts apart).
    assert_eq!(raised, 10, "{refusal}");
    assert!(refusal.message.contains("its share of max_history_bytes (25% = 1048576)"), "{refusal}");
    let history = raiser.call("getEventHistory", ("Raiser/Event0",)).unwrap();
    assert_eq!(history, Value::Array(vec![value.clone()]));
    // Another client still raises; a small value in a full history of one's own is kept.
    let other = almemory(&broker);
    other.call("raiseEvent", ("Other/Event", value.clone())).unwrap();
    raiser.call("removeEvent", ("Raiser/Event0",)).unwrap();
    raiser.call("raiseEvent", ("Raiser/Event1", 1)).unwrap();
}

/// Listings of every key and of every event are encoded away from the broker's thread (one
/// of 100 000 keys took it for over 100 ms, and every other client waited): each comes back
/// whole and sorted, and the broker counts it among the replies it encoded aside; a small
/// reply is still encoded at once.
#[test]
fn listings_of_every_key_and_event_are_encoded_aside() {
    let broker = TestBroker::start_with("", "");
    let memory = almemory(&broker);
    const LISTED: usize = 10_000;
    let pairs =
        (0..LISTED).map(|i| Value::Array(vec![format!("Listed/{i}").into(), Value::from(i)])).collect();
    memory.call("insertListData", (Value::Array(pairs),)).unwrap();
    for i in 0..LISTED {
        memory.call("declareEvent", (format!("ListedEvent/{i}"),)).unwrap();
    }
    let aside = counter(&broker, "replies_encoded_aside");
    memory.call("getData", ("Listed/7",)).unwrap();
    assert_eq!(counter(&broker, "replies_encoded_aside"), aside, "a small reply");
    for (method, prefix) in [("getDataListName", "Listed/"), ("getEventList", "ListedEvent/")] {
        let names: Vec<String> = memory.call_as(method, ()).unwrap();
        assert!(names.windows(2).all(|pair| pair[0] < pair[1]), "{method}: sorted, each once");
        assert_eq!(names.iter().filter(|name| name.starts_with(prefix)).count(), LISTED, "{method}");
    }
    assert_eq!(counter(&broker, "replies_encoded_aside"), aside + 2);
}
