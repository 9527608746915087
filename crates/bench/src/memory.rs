//! `naobench memory`: ALMemory round trips and event delivery to 1 and 10 subscriber processes.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use naobroker_dcm::cycle::monotonic_ns;
use naobroker_framework::{ClientSession, Value};

use crate::helpers::{progress, spawn_helper, start_broker_with, time_calls, Guard};
use crate::stats::{print, Row, Samples};

/// Call `getDataListName` over and over from a client of its own, on this thread, while
/// `listing` holds: how many listings it made.
fn list_every_key_while(url: &str, listing: &AtomicBool) -> usize {
    actix_rt::System::new().block_on(async {
        let session = ClientSession::connect(url, "naobench lister").await.unwrap();
        let mut listings = 0;
        while listing.load(Ordering::Relaxed) {
            session.call("ALMemory", "getDataListName", Vec::new(), false).await.unwrap();
            listings += 1;
        }
        listings
    })
}

/// Between two raised events, and between two calls of the paced getData row.
const PACE: std::time::Duration = std::time::Duration::from_millis(2);

/// `calls` getData round trips, one every [`PACE`] as the events are raised (`paced`: the
/// round trip in the events' conditions, processes that sleep between messages waking
/// slower than busy ones) or back to back.
async fn get_data_turn(session: &ClientSession, calls: usize, paced: bool, samples: &mut Vec<f64>) {
    for _ in 0..calls {
        let started = std::time::Instant::now();
        session.call("ALMemory", "getData", vec!["Bench/Float".into()], false).await.unwrap();
        samples.push(started.elapsed().as_secs_f64() * 1e6);
        if paced {
            tokio::time::sleep(PACE).await;
        }
    }
}

/// Raise `event` `events` times, one every [`PACE`], its value the raise time
/// (CLOCK_MONOTONIC, ns).
async fn raise_paced(session: &ClientSession, event: &str, events: usize) {
    for _ in 0..events {
        let now = Value::from(monotonic_ns());
        session.call("ALMemory", "raiseEvent", vec![event.into(), now], false).await.unwrap();
        tokio::time::sleep(PACE).await;
    }
}

/// `naobench event-load`: the event rows' publisher alone, from a client of its own, against
/// a broker already running and subscribers started by hand (`naobench subscriber`), to
/// count each process's instructions, switches and system calls per event.
pub fn load(url: &str, event: &str, events: usize) {
    actix_rt::System::new().block_on(async {
        let session = ClientSession::connect(url, "naobench").await.unwrap();
        raise_paced(&session, event, events).await;
    });
}

/// Events in a row for one row of the event table before the next row takes its turn.
const BLOCK: usize = 100;

/// The event rows' floor: the same processes and hops without naobroker. A blocking std TCP
/// relay writes each 8-byte send time from the publisher (this process) to its subscriber
/// processes, which read it with blocking reads, and answers the publisher one byte, as the
/// broker answers raiseEvent once it has sent the event.
struct Relay {
    _relay: Guard,
    subscribers: Vec<Guard>,
    publisher: TcpStream,
}

impl Relay {
    fn start(subscribers: usize, count: &str) -> Relay {
        let (relay, port) = spawn_helper(&["tcp-relay", &subscribers.to_string()]);
        let subscribers =
            (0..subscribers).map(|_| spawn_helper(&["tcp-subscriber", &port, count]).0).collect();
        let publisher = TcpStream::connect(("127.0.0.1", port.parse::<u16>().unwrap())).unwrap();
        publisher.set_nodelay(true).unwrap();
        Relay { _relay: relay, subscribers, publisher }
    }

    /// `events` send times, one every [`PACE`], each answered before the pause.
    fn send_paced(&mut self, events: usize) {
        let mut answer = [0u8; 1];
        for _ in 0..events {
            self.publisher.write_all(&monotonic_ns().to_le_bytes()).unwrap();
            self.publisher.read_exact(&mut answer).unwrap();
            std::thread::sleep(PACE);
        }
    }
}

/// The latencies every subscriber process printed (one JSON array each) once it had all
/// its events.
fn latencies(subscribers: &mut [Guard]) -> Samples {
    let mut all = Vec::new();
    for child in subscribers {
        let mut line = String::new();
        BufReader::new(child.0.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
        let latencies: Vec<f64> = serde_json::from_str(line.trim()).unwrap_or_default();
        all.extend(latencies);
    }
    Samples(all)
}

/// The event rows: naobroker's event to 1 and to 10 subscriber processes, the relay floor
/// to 1 and to 10, and their getData peers (back to back, and paced as the events), about
/// `events` of each, [`BLOCK`] at a time in turn so that the machine's state (other
/// processes, the host) weighs on all six alike.
fn deliveries(url: &str, events: usize) -> [Samples; 6] {
    let rounds = events.div_ceil(BLOCK);
    let count = (rounds * BLOCK).to_string();
    let subscribe = |event: &str, processes: usize| -> Vec<Guard> {
        (0..processes).map(|_| spawn_helper(&["subscriber", url, event, &count]).0).collect()
    };
    let (mut one, mut ten) = (subscribe("Bench/Event1", 1), subscribe("Bench/Event10", 10));
    let (mut relay_one, mut relay_ten) = (Relay::start(1, &count), Relay::start(10, &count));
    let (mut back_to_back, mut paced) = (Vec::new(), Vec::new());
    actix_rt::System::new().block_on(async {
        let session = ClientSession::connect(url, "naobench").await.unwrap();
        for _ in 0..rounds {
            get_data_turn(&session, BLOCK, false, &mut back_to_back).await;
            get_data_turn(&session, BLOCK, true, &mut paced).await;
            raise_paced(&session, "Bench/Event1", BLOCK).await;
            raise_paced(&session, "Bench/Event10", BLOCK).await;
            // Blocking this thread for a block holds the session's tasks back, not the
            // broker: its liveness connection beats on a thread of its own.
            relay_one.send_paced(BLOCK);
            relay_ten.send_paced(BLOCK);
        }
    });
    [
        Samples(back_to_back),
        Samples(paced),
        latencies(&mut one),
        latencies(&mut ten),
        latencies(&mut relay_one.subscribers),
        latencies(&mut relay_ten.subscribers),
    ]
}

/// The defaults but for ALMemory's key totals: the crowded row puts 100 000 keys through one
/// client, past a client's share (25 000) and the total (100 000) of the defaults.
const CROWDED_CONFIG: &str = "[memory]\nmax_keys = 200000\nclient_share_percent = 100\n";

pub fn run(calls: usize, json: bool) {
    let config = std::env::temp_dir().join(format!("naobench-memory-{}.toml", std::process::id()));
    std::fs::write(&config, CROWDED_CONFIG).expect("the bench's broker configuration is written");
    let (_broker, tcp, _ipc) = start_broker_with(&config);
    let _ = std::fs::remove_file(&config);
    let system = actix_rt::System::new();
    let (get, insert, list, get_crowded, get_listing) = system.block_on(async {
        let session = ClientSession::connect(&tcp, "naobench").await.unwrap();
        session
            .call("ALMemory", "insertData", vec!["Bench/Float".into(), Value::F64(0.5)], false)
            .await
            .unwrap();
        progress("memory", format_args!("getData, {calls} calls"));
        let get = time_calls(calls, || {
            let s = session.clone();
            async move { s.call("ALMemory", "getData", vec!["Bench/Float".into()], false).await.unwrap() }
        })
        .await;
        progress("memory", format_args!("insertData, {calls} calls"));
        let insert = time_calls(calls, || {
            let s = session.clone();
            async move {
                s.call("ALMemory", "insertData", vec!["Bench/Float".into(), Value::F64(0.25)], false)
                    .await
                    .unwrap()
            }
        })
        .await;
        let keys: Vec<String> = naobroker_framework::from_value(
            session
                .call("ALMemory", "getDataList", vec!["Device/SubDeviceList/".into()], false)
                .await
                .unwrap(),
        )
        .unwrap();
        let keys: Value = Value::Array(keys.iter().take(150).map(|k| Value::from(k.as_str())).collect());
        progress("memory", format_args!("getListData of 150 keys, {calls} calls"));
        let list = time_calls(calls, || {
            let s = session.clone();
            let keys = keys.clone();
            async move { s.call("ALMemory", "getListData", vec![keys], false).await.unwrap() }
        })
        .await;
        progress("memory", format_args!("getData with 100 000 more keys, {calls} calls"));
        let bulk: Vec<Value> = (0..100_000)
            .map(|i| Value::Array(vec![format!("Bench/Bulk/{i}").into(), Value::from(i)]))
            .collect();
        session.call("ALMemory", "insertListData", vec![Value::Array(bulk)], false).await.unwrap();
        let get_crowded = time_calls(calls, || {
            let s = session.clone();
            async move { s.call("ALMemory", "getData", vec!["Bench/Float".into()], false).await.unwrap() }
        })
        .await;
        progress("memory", format_args!("getData while another client lists every key, {calls} calls"));
        let listing = Arc::new(AtomicBool::new(true));
        let lister = {
            let (listing, url) = (Arc::clone(&listing), tcp.clone());
            std::thread::spawn(move || list_every_key_while(&url, &listing))
        };
        let get_listing = time_calls(calls, || {
            let s = session.clone();
            async move { s.call("ALMemory", "getData", vec!["Bench/Float".into()], false).await.unwrap() }
        })
        .await;
        listing.store(false, Ordering::Relaxed);
        let listings = lister.join().expect("the lister ends");
        progress("memory", format_args!("{listings} listings of every key meanwhile"));
        (get, insert, list, get_crowded, get_listing)
    });
    progress(
        "memory",
        "raiseEvent to 1 and to 10 subscriber processes, the TCP relay floor, getData back to back and \
         paced: 1000 of each, 100 at a time in turn",
    );
    let [get_turns, paced, one, ten, floor_one, floor_ten] = deliveries(&tcp, 1000);
    let rows = vec![
        Row::latencies("getData (float key)", &get),
        Row::latencies("insertData (float)", &insert),
        Row::latencies("getListData, 150 DCM keys", &list),
        Row::latencies("getData with 100 000 more keys", &get_crowded),
        Row::latencies("getData while another client lists them", &get_listing),
        Row::latencies("getData, back to back, in turn with the events", &get_turns),
        Row::latencies("getData, one call every 2 ms (the events' pace), in turn with them", &paced),
        Row::latencies("raiseEvent → 1 subscriber process", &one),
        Row::latencies("raiseEvent → 10 subscriber processes", &ten),
        Row::latencies("floor: blocking TCP relay → 1 process", &floor_one),
        Row::latencies("floor: blocking TCP relay → 10 processes", &floor_ten),
    ];
    let notes = vec![
        format!(
            "getData with 100 000 more keys / getData: {:.2} (O(1): ≈ 1 within run-to-run noise)",
            get_crowded.p50() / get.p50()
        ),
        format!(
            "getData while another client lists the 100 000 keys (getDataListName, 2.5 MB, in a loop), \
             max / p50 alone: {:.1} (the listing is encoded off the broker's thread)",
            get_listing.max() / get.p50()
        ),
        format!(
            "raiseEvent → 1 subscriber p50 / getData p50 (back to back, in turn): {:.2}; / paced getData \
             p50: {:.2} (target ≤ 1.5)",
            one.p50() / get_turns.p50(),
            one.p50() / paced.p50()
        ),
        format!(
            "raiseEvent p50, 10 subscriber processes / 1: {:.2} (target ≤ 1.5: {}); the floor's own: {:.2}",
            ten.p50() / one.p50(),
            if ten.p50() / one.p50() <= 1.5 { "met" } else { "missed" },
            floor_ten.p50() / floor_one.p50()
        ),
        format!(
            "raiseEvent p50 / floor p50: → 1 {:.2}, → 10 {:.2}",
            one.p50() / floor_one.p50(),
            ten.p50() / floor_ten.p50()
        ),
        "Delivery latency: raise time (CLOCK_MONOTONIC, carried in the event) to arrival in the subscriber. \
         The floor: the same processes and hops (publisher → relay → subscribers, the publisher answered) \
         over blocking std TCP, without naobroker; its blocks of 100 events take turns with the events'."
            .to_owned(),
    ];
    print("memory", &rows, &notes, json);
}
