//! `naocli record KEY... [--event NAME...] [--robot FILE] --out FILE.mcap`: every DCM cycle's
//! robot channels and values of the keys (through `DCM.record`'s `DCM/Record/<id>` rows) and
//! the named events, written to an MCAP file until Ctrl-C (or SIGTERM), with progress on stderr
//! (docs/recording.md).

use std::path::Path;
use std::time::Duration;

use naobroker_foxglove::robot::DcmClock;
use naobroker_framework::{CallError, ClientSession, Value};
use naobroker_urdf::ViewerModel;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;

use crate::mcap_file::{McapFileError, RecordingFile};
use crate::output::json_of;

/// How long the rows sent after `DCM.stopRecord` are waited for, once none arrive.
const LAST_ROWS_QUIET: Duration = Duration::from_millis(300);

impl From<McapFileError> for CallError {
    fn from(error: McapFileError) -> CallError {
        CallError::new(error.to_string())
    }
}

/// What was recorded so far: cycles, missing cycles, and the DCM clock unrolled past the
/// int32 rollover.
#[derive(Default)]
struct Tally {
    cycles: u64,
    gaps: u64,
    /// Rows of a batch not written: shorter than the keys asked for, or without a time and a
    /// cycle (their cycles count as gaps).
    bad_rows: u64,
    last_cycle: Option<u64>,
    clock: DcmClock,
    dcm_time_ms: i64,
}

impl Tally {
    fn advance(&mut self, cycle: u64, raw_time: i32) {
        if let Some(last) = self.last_cycle {
            self.gaps += cycle.saturating_sub(last + 1);
        }
        self.dcm_time_ms = self.clock.advance(raw_time);
        self.cycles += 1;
        self.last_cycle = Some(cycle);
    }

    fn summary(&self) -> String {
        format!(
            "recorded {} cycles, {} gaps, {} bad rows skipped, DCM time {} ms",
            self.cycles, self.gaps, self.bad_rows, self.dcm_time_ms
        )
    }
}

/// Write one `DCM/Record/<id>` batch: `{"rows": [[dcm_time, cycle, value...], ...], "gaps": n}`.
fn write_batch(file: &mut RecordingFile, tally: &mut Tally, batch: &Value) -> Result<(), CallError> {
    let rows = match batch {
        Value::Map(entries) => entries.iter().find(|(name, _)| name.as_str() == Some("rows")).map(|e| &e.1),
        _ => None,
    };
    let Some(Value::Array(rows)) = rows else {
        return Err(CallError::new("DCM/Record: a batch without rows"));
    };
    for row in rows {
        let Value::Array(row) = row else {
            tally.bad_rows += 1;
            continue;
        };
        let (Some(time), Some(cycle)) =
            (row.first().and_then(Value::as_i64), row.get(1).and_then(Value::as_u64))
        else {
            tally.bad_rows += 1;
            continue;
        };
        let values: Vec<f64> = row[2..].iter().map(|value| value.as_f64().unwrap_or(f64::NAN)).collect();
        if values.len() < file.recorded_keys().len() {
            tally.bad_rows += 1;
            continue;
        }
        tally.advance(cycle, time as i32);
        file.cycle(tally.dcm_time_ms, cycle, &values);
    }
    Ok(())
}

/// Subscribe to each event, forwarding `(name, value)` to one channel.
async fn follow_events(
    session: &ClientSession,
    events: &[String],
) -> Result<mpsc::UnboundedReceiver<(String, Value)>, CallError> {
    let (sender, received) = mpsc::unbounded_channel();
    for event in events {
        let mut stream = session.subscribe(event).await?;
        let sender = sender.clone();
        actix_rt::spawn(async move {
            while let Some(event) = stream.next().await {
                if sender.send((event.name, event.value)).is_err() {
                    break;
                }
            }
        });
    }
    Ok(received)
}

/// The robot the broker runs, by `DCM.special("Config")`'s name: the recording's model must
/// be its (the shipped NAO V6's, or `--robot FILE`'s).
async fn check_robot(session: &ClientSession, model: &ViewerModel) -> Result<(), CallError> {
    let config = session.call("DCM", "special", vec!["Config".into()], false).await?;
    let running = match &config {
        Value::Map(entries) => entries.iter().find(|(key, _)| key.as_str() == Some("robot")),
        _ => None,
    };
    let running = running.and_then(|(_, name)| name.as_str()).unwrap_or("");
    if running != model.robot {
        return Err(CallError::new(format!(
            "the broker runs the robot {running:?}, the recording's description is {:?}: pass its \
             description with --robot FILE (the broker's [dcm] robot)",
            model.robot
        )));
    }
    Ok(())
}

/// Record until interrupted; the file is complete (summary and index written) on return.
pub(crate) async fn record(
    session: &ClientSession,
    model: &ViewerModel,
    keys: &[String],
    events: &[String],
    out: &Path,
) -> Result<(), CallError> {
    let io = |error: std::io::Error| CallError::new(format!("signals: {error}"));
    let (mut interrupt, mut terminate) =
        (signal(SignalKind::interrupt()).map_err(io)?, signal(SignalKind::terminate()).map_err(io)?);
    check_robot(session, model).await?;
    let mut file = RecordingFile::create(out, model, keys)?;
    let names = Value::Array(file.recorded_keys().iter().map(|key| Value::from(key.as_str())).collect());
    let id = session.call("DCM", "record", vec![names], false).await?;
    let id = id.as_u64().ok_or_else(|| CallError::new(format!("DCM.record answered {id}")))?;
    let mut rows = session.subscribe(&format!("DCM/Record/{id}")).await?;
    let mut received = follow_events(session, events).await?;
    eprintln!(
        "naocli record: the robot and {} keys every cycle to {}; Ctrl-C stops",
        keys.len(),
        out.display()
    );
    let (mut tally, mut shown) = (Tally::default(), None);
    let mut progress = tokio::time::interval(Duration::from_secs(1));
    let ended = loop {
        tokio::select! {
            _ = interrupt.recv() => break None,
            _ = terminate.recv() => break None,
            batch = rows.next() => match batch {
                Some(batch) => write_batch(&mut file, &mut tally, &batch.value)?,
                None => break Some(CallError::new("the broker's session ended")),
            },
            Some((event, value)) = received.recv() => file.event(&event, tally.dcm_time_ms, json_of(&value)),
            _ = progress.tick() => {
                if shown != Some((tally.cycles, tally.gaps)) {
                    eprintln!("naocli record: {}", tally.summary());
                    shown = Some((tally.cycles, tally.gaps));
                }
            }
        }
    };
    if ended.is_none() {
        session.call("DCM", "stopRecord", vec![id.into()], false).await?;
        while let Ok(Some(batch)) = tokio::time::timeout(LAST_ROWS_QUIET, rows.next()).await {
            write_batch(&mut file, &mut tally, &batch.value)?;
        }
    }
    file.finish()?;
    eprintln!("naocli record: {}; {} written", tally.summary(), out.display());
    ended.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use naobroker_framework::Value;
    use naobroker_urdf::ViewerModel;

    use super::{write_batch, Tally};
    use crate::mcap_file::RecordingFile;

    #[test]
    fn rows_short_or_without_a_cycle_are_counted_in_the_summary() {
        let path = std::env::temp_dir().join(format!("naocli-bad-rows-{}.mcap", std::process::id()));
        let mut file = RecordingFile::create(&path, &ViewerModel::nao_v6(), &[]).unwrap();
        let keys = file.recorded_keys().len();
        let row = |cycle: u64, values: usize| {
            let mut row = vec![Value::from(12i64 * cycle as i64), Value::from(cycle)];
            row.extend((0..values).map(|_| Value::from(0.5)));
            Value::Array(row)
        };
        let rows = vec![row(1, keys), row(2, keys - 1), Value::from("no row"), row(3, keys)];
        let batch = Value::Map(vec![("rows".into(), Value::Array(rows))]);
        let mut tally = Tally::default();
        write_batch(&mut file, &mut tally, &batch).unwrap();
        assert_eq!((tally.cycles, tally.gaps, tally.bad_rows), (2, 1, 2));
        assert!(tally.summary().contains("2 bad rows skipped"), "{}", tally.summary());
        file.finish().unwrap();
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn the_dcm_clock_is_unrolled_and_missing_cycles_counted() {
        let mut tally = Tally::default();
        tally.advance(7, i32::MAX - 5);
        tally.advance(8, i32::MAX);
        tally.advance(11, i32::MIN + 4);
        assert_eq!(tally.cycles, 3);
        assert_eq!(tally.gaps, 2, "cycles 9 and 10");
        assert_eq!(tally.dcm_time_ms, i64::from(i32::MAX) + 5);
    }
}
