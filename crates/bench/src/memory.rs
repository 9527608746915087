//! `naobench memory`: ALMemory round trips and event delivery to 1 and 10 subscriber processes.

use std::io::{BufRead, BufReader};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use naobroker_dcm::cycle::monotonic_ns;
use naobroker_framework::{ClientSession, Value};

use crate::helpers::{progress, spawn_helper, start_broker_with, time_calls};
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

/// getData round trips, one every [`PACE`] as the events are raised: the round trip in the
/// events' conditions (processes that sleep between messages wake slower than busy ones).
async fn paced_get_data(session: &ClientSession, calls: usize) -> Samples {
    let mut samples = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = std::time::Instant::now();
        session.call("ALMemory", "getData", vec!["Bench/Float".into()], false).await.unwrap();
        samples.push(started.elapsed().as_secs_f64() * 1e6);
        tokio::time::sleep(PACE).await;
    }
    Samples(samples)
}

/// Raise `events` events, one every [`PACE`], and collect the subscribers' latencies.
fn delivery(url: &str, subscribers: usize, events: usize) -> Samples {
    let event = format!("Bench/Event{subscribers}");
    let mut children: Vec<_> =
        (0..subscribers).map(|_| spawn_helper(&["subscriber", url, &event, &events.to_string()]).0).collect();
    let system = actix_rt::System::new();
    system.block_on(async {
        let session = ClientSession::connect(url, "naobench").await.unwrap();
        for _ in 0..events {
            let now = Value::from(monotonic_ns());
            session.call("ALMemory", "raiseEvent", vec![event.as_str().into(), now], false).await.unwrap();
            tokio::time::sleep(PACE).await;
        }
    });
    let mut all = Vec::new();
    for child in &mut children {
        let mut line = String::new();
        BufReader::new(child.0.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
        let latencies: Vec<f64> = serde_json::from_str(line.trim()).unwrap_or_default();
        all.extend(latencies);
    }
    Samples(all)
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
    let (get, paced, insert, list, get_crowded, get_listing) = system.block_on(async {
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
        progress("memory", "getData, 1000 calls, one every 2 ms");
        let paced = paced_get_data(&session, 1000).await;
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
        (get, paced, insert, list, get_crowded, get_listing)
    });
    progress("memory", "raiseEvent to 1 subscriber process, 1000 events");
    let one = delivery(&tcp, 1, 1000);
    progress("memory", "raiseEvent to 10 subscriber processes, 1000 events");
    let ten = delivery(&tcp, 10, 1000);
    let rows = vec![
        Row::latencies("getData (float key)", &get),
        Row::latencies("getData, one call every 2 ms (the events' pace)", &paced),
        Row::latencies("insertData (float)", &insert),
        Row::latencies("getListData, 150 DCM keys", &list),
        Row::latencies("getData with 100 000 more keys", &get_crowded),
        Row::latencies("getData while another client lists them", &get_listing),
        Row::latencies("raiseEvent → 1 subscriber process", &one),
        Row::latencies("raiseEvent → 10 subscriber processes", &ten),
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
            "raiseEvent → 1 subscriber p50 / getData p50: {:.2}; / paced getData p50: {:.2} (target ≤ 1.5)",
            one.p50() / get.p50(),
            one.p50() / paced.p50()
        ),
        format!(
            "raiseEvent p50, 10 subscriber processes / 1: {:.2} (target ≤ 1.5: {})",
            ten.p50() / one.p50(),
            if ten.p50() / one.p50() <= 1.5 { "met" } else { "missed" }
        ),
        "Delivery latency: raise time (CLOCK_MONOTONIC, carried in the event) to arrival in the subscriber."
            .to_owned(),
    ];
    print("memory", &rows, &notes, json);
}
