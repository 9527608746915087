//! `naocli top`: calls per second, errors and latency per module, from two samples of
//! `ServiceDirectory.stats` (the broker counts each module's calls since it started).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use naobroker_framework::{CallError, ClientSession, Value};

use crate::output::{field, Output};

/// One module's counters at one sample.
#[derive(Clone, Default)]
struct Counts {
    calls: u64,
    errors: u64,
    total_latency_us: u64,
    latency_buckets: Vec<u64>,
}

/// One module's activity between two samples.
struct Activity {
    module: String,
    calls_per_s: f64,
    errors: u64,
    mean_us: Option<f64>,
    /// An upper bound: the broker counts latencies in powers of two of a microsecond.
    p50_us: Option<u64>,
}

fn number(value: Option<&Value>) -> u64 {
    value.and_then(Value::as_u64).unwrap_or(0)
}

async fn sample(session: &ClientSession) -> Result<BTreeMap<String, Counts>, CallError> {
    let stats = session.call("ServiceDirectory", "stats", vec![], false).await?;
    let Some(Value::Map(modules)) = field(&stats, "by_module") else {
        return Err(CallError::new("ServiceDirectory.stats has no by_module (an older broker?)"));
    };
    let mut counts = BTreeMap::new();
    for (module, counters) in modules {
        let buckets = match field(counters, "latency_buckets") {
            Some(Value::Array(buckets)) => buckets.iter().map(|b| b.as_u64().unwrap_or(0)).collect(),
            _ => Vec::new(),
        };
        let module = module.as_str().unwrap_or_default().to_owned();
        counts.insert(
            module,
            Counts {
                calls: number(field(counters, "calls")),
                errors: number(field(counters, "errors")),
                total_latency_us: number(field(counters, "total_latency_us")),
                latency_buckets: buckets,
            },
        );
    }
    Ok(counts)
}

/// The upper bound of the bucket holding the median call.
fn p50_bound(buckets: &[u64], calls: u64) -> Option<u64> {
    let mut seen = 0;
    for (index, count) in buckets.iter().enumerate() {
        seen += count;
        if calls > 0 && seen * 2 >= calls {
            return Some(1u64 << index.min(63));
        }
    }
    None
}

fn activity(
    before: &BTreeMap<String, Counts>,
    after: &BTreeMap<String, Counts>,
    seconds: f64,
) -> Vec<Activity> {
    after
        .iter()
        .map(|(module, now)| {
            let then = before.get(module).cloned().unwrap_or_default();
            let calls = now.calls.saturating_sub(then.calls);
            let buckets: Vec<u64> = now
                .latency_buckets
                .iter()
                .enumerate()
                .map(|(i, n)| n.saturating_sub(then.latency_buckets.get(i).copied().unwrap_or(0)))
                .collect();
            let latency = now.total_latency_us.saturating_sub(then.total_latency_us);
            Activity {
                module: module.clone(),
                calls_per_s: calls as f64 / seconds,
                errors: now.errors.saturating_sub(then.errors),
                mean_us: (calls > 0).then(|| latency as f64 / calls as f64),
                p50_us: p50_bound(&buckets, calls),
            }
        })
        .collect()
}

fn table(rows: &[Activity]) -> String {
    let header = ["MODULE", "CALLS/S", "ERRORS", "MEAN µs", "P50 ≤ µs"];
    let mut text =
        format!("{:<24} {:>10} {:>8} {:>10} {:>10}\n", header[0], header[1], header[2], header[3], header[4]);
    for row in rows {
        let mean = row.mean_us.map_or("-".to_owned(), |mean| format!("{mean:.0}"));
        let p50 = row.p50_us.map_or("-".to_owned(), |p50| p50.to_string());
        text += &format!(
            "{:<24} {:>10.1} {:>8} {:>10} {:>10}\n",
            row.module, row.calls_per_s, row.errors, mean, p50
        );
    }
    text
}

/// Sample every `interval`, print each interval's activity; stop after `count` intervals
/// when given.
pub(crate) async fn top(
    session: &ClientSession,
    interval: Duration,
    count: Option<u64>,
    output: Output,
) -> Result<(), CallError> {
    let mut before = sample(session).await?;
    let mut sampled_at = Instant::now();
    let mut printed = 0;
    while count.is_none_or(|count| printed < count) {
        tokio::time::sleep(interval).await;
        let after = sample(session).await?;
        let now = Instant::now();
        let rows = activity(&before, &after, now.duration_since(sampled_at).as_secs_f64());
        let json = rows
            .iter()
            .map(|row| {
                serde_json::json!({"module": row.module, "calls_per_s": row.calls_per_s, "errors": row.errors,
                    "mean_us": row.mean_us, "p50_max_us": row.p50_us})
            })
            .collect();
        // Clear the terminal and draw the table again, as qicli top and top(1) do.
        output.emit(&serde_json::Value::Array(json), || format!("\x1b[2J\x1b[H{}", table(&rows)))?;
        (before, sampled_at, printed) = (after, now, printed + 1);
    }
    Ok(())
}
