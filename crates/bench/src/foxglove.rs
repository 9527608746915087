//! `naobench foxglove`: what the Foxglove live view costs the broker: its process's CPU time
//! per second of wall time and the DCM cycle's wake-up lateness, without the server, with it
//! and no viewer, and with 50 viewers coming and going, in alternating runs of the same
//! length (the real clock, the DCM's default period).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use naobroker_dcm::cycle::LATENESS_BUCKETS_US;
use naobroker_framework::{ClientSession, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

use crate::helpers::{cpu_seconds, free_port, progress, start_broker_with, ticks_per_second};
use crate::stats::{print, Row, Samples};

/// Time for the broker to settle after answering, before it is measured.
const SETTLE: Duration = Duration::from_secs(1);
/// Viewers coming and going in the third configuration.
const VIEWERS: usize = 50;
/// Messages each viewer reads before it leaves.
const MESSAGES_PER_VIEWER: usize = 20;

/// `DCM.stats`' lateness histogram: wake-ups per bucket, in `LATENESS_BUCKETS_US`' order.
fn lateness_histogram(url: &str) -> Vec<u64> {
    actix_rt::System::new().block_on(async {
        let session = ClientSession::connect(url, "naobench").await.expect("connect");
        let stats = session.call("DCM", "stats", vec![], false).await.expect("DCM.stats");
        session.shutdown().await;
        let Value::Map(entries) = stats else { panic!("DCM.stats: {stats}") };
        let histogram = entries.iter().find(|(key, _)| key.as_str() == Some("lateness_histogram"));
        let Some((_, Value::Map(buckets))) = histogram else { panic!("no lateness histogram") };
        buckets.iter().map(|(_, count)| count.as_u64().unwrap_or(0)).collect()
    })
}

/// The upper bound (µs) of the bucket holding the `p`th percentile of wake-ups.
fn percentile_bucket(counts: &[u64], p: f64) -> f64 {
    let total: u64 = counts.iter().sum();
    let wanted = (total as f64 * p / 100.0).ceil() as u64;
    let mut seen = 0;
    for (bucket, count) in counts.iter().enumerate() {
        seen += count;
        if seen >= wanted.max(1) {
            return LATENESS_BUCKETS_US.get(bucket).map_or(f64::INFINITY, |&upper| upper as f64);
        }
    }
    f64::NAN
}

/// One viewer: connect as Foxglove does, subscribe to the joints and the transforms, read
/// some messages, leave.
async fn viewer(port: u16) {
    let mut request = format!("ws://127.0.0.1:{port}").into_client_request().unwrap();
    request.headers_mut().insert("Sec-WebSocket-Protocol", "foxglove.sdk.v1".parse().unwrap());
    let (mut socket, _) = tokio_tungstenite::connect_async(request).await.expect("the view accepts");
    let mut wanted = Vec::new();
    while wanted.len() < 2 {
        let text = match socket.next().await {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(_)) => continue,
            // Refused (max_viewers) or gone: this viewer is done.
            _ => return,
        };
        let message: serde_json::Value = serde_json::from_str(&text).unwrap();
        for channel in message["channels"].as_array().into_iter().flatten() {
            if ["/tf", "/joint_states"].contains(&channel["topic"].as_str().unwrap_or("")) {
                wanted.push(channel["id"].clone());
            }
        }
    }
    let subscriptions: Vec<serde_json::Value> = wanted
        .iter()
        .enumerate()
        .map(|(id, channel)| serde_json::json!({"id": id, "channelId": channel}))
        .collect();
    let subscribe = serde_json::json!({"op": "subscribe", "subscriptions": subscriptions}).to_string();
    socket.send(Message::Text(subscribe.into())).await.unwrap();
    let mut read = 0;
    while read < MESSAGES_PER_VIEWER {
        match socket.next().await {
            Some(Ok(Message::Binary(_))) => read += 1,
            Some(Ok(_)) => {}
            _ => break,
        }
    }
    let _ = socket.close(None).await;
}

/// Viewers one after another until `stop`; how many came and went.
fn viewers_coming_and_going(
    port: u16,
    stop: Arc<AtomicBool>,
    served: Arc<AtomicU64>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        while !stop.load(Ordering::Relaxed) {
            // 50 at once, each reading its messages, then all gone.
            runtime.block_on(futures::future::join_all((0..VIEWERS).map(|_| viewer(port))));
            served.fetch_add(VIEWERS as u64, Ordering::Relaxed);
        }
    })
}

/// What one run measured.
struct Measured {
    cpu_ms_per_s: f64,
    lateness: Vec<u64>,
}

/// One run: a broker with `config`, measured for `seconds`; with viewers coming and going on
/// the view's `port` when given.
fn measure(config: &str, port: Option<u16>, seconds: f64, ticks: f64) -> Measured {
    let path = std::env::temp_dir().join(format!("naobench-{}-foxglove.toml", std::process::id()));
    std::fs::write(&path, config).expect("write the broker's configuration");
    let (broker, tcp, _ipc) = start_broker_with(&path);
    std::thread::sleep(SETTLE);
    let stop = Arc::new(AtomicBool::new(false));
    let served = Arc::new(AtomicU64::new(0));
    let churn = port.map(|port| viewers_coming_and_going(port, Arc::clone(&stop), Arc::clone(&served)));
    let pid = broker.0.id();
    let before = lateness_histogram(&tcp);
    let (started, cpu_before) = (Instant::now(), cpu_seconds(pid, ticks));
    std::thread::sleep(Duration::from_secs_f64(seconds));
    let cpu = cpu_seconds(pid, ticks) - cpu_before;
    let elapsed = started.elapsed().as_secs_f64();
    let after = lateness_histogram(&tcp);
    stop.store(true, Ordering::Relaxed);
    if let Some(churn) = churn {
        churn.join().expect("the viewers' thread");
        progress("foxglove", format_args!("{} viewers came and went", served.load(Ordering::Relaxed)));
    }
    let _ = std::fs::remove_file(&path);
    let lateness = after.iter().zip(&before).map(|(after, before)| after - before).collect();
    Measured { cpu_ms_per_s: 1000.0 * cpu / elapsed, lateness }
}

pub fn run(seconds: f64, runs: usize, json: bool) {
    let ticks = ticks_per_second();
    let mut measured: [Vec<Measured>; 3] = Default::default();
    for run in 1..=runs {
        progress("foxglove", format_args!("run {run} of {runs}: without the server, {seconds} s"));
        measured[0].push(measure("", None, seconds, ticks));
        progress("foxglove", format_args!("run {run} of {runs}: with it, no viewer, {seconds} s"));
        let port = free_port();
        let config = format!("[foxglove]\nlisten = \"127.0.0.1:{port}\"\n");
        measured[1].push(measure(&config, None, seconds, ticks));
        progress("foxglove", format_args!("run {run} of {runs}: with {VIEWERS} viewers coming and going"));
        let port = free_port();
        // All of them let in (the default max_viewers is 8), a batch while the last one's
        // connections are still closing too.
        let config = format!("[foxglove]\nlisten = \"127.0.0.1:{port}\"\nmax_viewers = {}\n", 2 * VIEWERS);
        measured[2].push(measure(&config, Some(port), seconds, ticks));
    }
    let names = [
        "naobroker, no Foxglove server".to_owned(),
        "naobroker, server, no viewer".to_owned(),
        format!("naobroker, {VIEWERS} viewers at a time coming and going"),
    ];
    let rows: Vec<Row> = names
        .iter()
        .zip(&measured)
        .map(|(name, runs)| {
            let cpu = Samples(runs.iter().map(|run| run.cpu_ms_per_s).collect());
            let p99 = Samples(runs.iter().map(|run| percentile_bucket(&run.lateness, 99.0)).collect());
            let p50 = Samples(runs.iter().map(|run| percentile_bucket(&run.lateness, 50.0)).collect());
            Row {
                name: name.clone(),
                fields: vec![
                    ("CPU ms/s p50", cpu.p50()),
                    ("min", cpu.percentile(0.0)),
                    ("max", cpu.max()),
                    ("DCM lateness p50 ≤ µs", p50.p50()),
                    ("p99 ≤ µs", p99.p50()),
                ],
            }
        })
        .collect();
    let cpu = |runs: &[Measured]| Samples(runs.iter().map(|run| run.cpu_ms_per_s).collect()).p50();
    let notes = [format!(
        "Server without a viewer / no server, CPU p50: {:.2} ({runs} runs of {seconds} s each, alternating; \
         the broker's whole process: DCM cycle, motion thread, broker thread, the view's threads). DCM \
         lateness: the bucket of DCM.stats' histogram holding the percentile, median over the runs.",
        cpu(&measured[1]) / cpu(&measured[0])
    )];
    print("foxglove", &rows, &notes, json);
}
