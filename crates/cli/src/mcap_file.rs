//! The MCAP files `naocli record` writes and `naocli plot` reads (docs/recording.md): one
//! channel per recorded key and per recorded event, JSON messages with a JSON schema, log
//! time = DCM time.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use serde_json::json;

/// The schema of a recorded key's messages: one per cycle.
pub(crate) const KEY_SCHEMA_NAME: &str = "naobroker.RecordedValue";
/// The schema of a recorded event's messages: one per event received.
pub(crate) const EVENT_SCHEMA_NAME: &str = "naobroker.RecordedEvent";

fn key_schema() -> serde_json::Value {
    json!({
        "title": KEY_SCHEMA_NAME,
        "description": "One DCM cycle's value of an ALMemory real-time key",
        "type": "object",
        "properties": {
            "dcm_time_ms": {"type": "integer", "description": "DCM time of the cycle (DCM.getTime's clock)"},
            "cycle": {"type": "integer", "description": "The DCM's cycle number"},
            "value": {"type": "number", "description": "The key's value after that cycle"}
        },
        "required": ["dcm_time_ms", "cycle", "value"]
    })
}

fn event_schema() -> serde_json::Value {
    json!({
        "title": EVENT_SCHEMA_NAME,
        "description": "An ALMemory event as the recording client received it",
        "type": "object",
        "properties": {
            "dcm_time_ms": {
                "type": "integer",
                "description": "DCM time of the last cycle recorded when it arrived"
            },
            "event": {"type": "string"},
            "value": {"description": "The event's value, as JSON"}
        },
        "required": ["dcm_time_ms", "event", "value"]
    })
}

/// An MCAP file could not be written or read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum McapFileError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}: {source}")]
    Mcap { path: String, source: mcap::McapError },
}

/// Writes one recording: channels made on first use, messages in arrival order.
pub(crate) struct RecordingFile {
    path: String,
    writer: mcap::Writer<BufWriter<File>>,
    key_schema: u16,
    event_schema: u16,
    /// Channel id and the next sequence number, per topic.
    channels: BTreeMap<String, (u16, u32)>,
}

/// Milliseconds of DCM time as MCAP nanoseconds (the clock is not negative on a robot;
/// a negative start time reads as 0).
fn nanoseconds(dcm_time_ms: i64) -> u64 {
    dcm_time_ms.max(0) as u64 * 1_000_000
}

impl RecordingFile {
    pub(crate) fn create(path: &Path) -> Result<RecordingFile, McapFileError> {
        let name = path.display().to_string();
        let io = |source| McapFileError::Io { path: name.clone(), source };
        let file = File::create(path).map_err(io)?;
        let mcap = |source| McapFileError::Mcap { path: name.clone(), source };
        let mut writer = mcap::WriteOptions::new()
            .profile("")
            .library(concat!("naocli ", env!("CARGO_PKG_VERSION")))
            .create(BufWriter::new(file))
            .map_err(mcap)?;
        let key_schema = writer
            .add_schema(KEY_SCHEMA_NAME, "jsonschema", key_schema().to_string().as_bytes())
            .map_err(mcap)?;
        let event_schema = writer
            .add_schema(EVENT_SCHEMA_NAME, "jsonschema", event_schema().to_string().as_bytes())
            .map_err(mcap)?;
        Ok(RecordingFile { path: name, writer, key_schema, event_schema, channels: BTreeMap::new() })
    }

    fn error(&self, source: mcap::McapError) -> McapFileError {
        McapFileError::Mcap { path: self.path.clone(), source }
    }

    fn write(
        &mut self,
        topic: &str,
        schema: u16,
        dcm_time_ms: i64,
        message: &serde_json::Value,
    ) -> Result<(), McapFileError> {
        let (channel, sequence) = match self.channels.get(topic) {
            Some(&entry) => entry,
            None => {
                let id = self
                    .writer
                    .add_channel(schema, topic, "json", &BTreeMap::new())
                    .map_err(|e| self.error(e))?;
                (id, 0)
            }
        };
        self.channels.insert(topic.to_owned(), (channel, sequence.wrapping_add(1)));
        let time = nanoseconds(dcm_time_ms);
        let header = mcap::records::MessageHeader {
            channel_id: channel,
            sequence,
            log_time: time,
            publish_time: time,
        };
        let data = message.to_string();
        self.writer.write_to_known_channel(&header, data.as_bytes()).map_err(|e| self.error(e))
    }

    /// One cycle's value of `key`.
    pub(crate) fn key_value(
        &mut self,
        key: &str,
        dcm_time_ms: i64,
        cycle: u64,
        value: f64,
    ) -> Result<(), McapFileError> {
        let message = json!({"dcm_time_ms": dcm_time_ms, "cycle": cycle, "value": value});
        self.write(key, self.key_schema, dcm_time_ms, &message)
    }

    /// An event received while recording.
    pub(crate) fn event(
        &mut self,
        event: &str,
        dcm_time_ms: i64,
        value: serde_json::Value,
    ) -> Result<(), McapFileError> {
        let message = json!({"dcm_time_ms": dcm_time_ms, "event": event, "value": value});
        self.write(event, self.event_schema, dcm_time_ms, &message)
    }

    /// Write the summary and index: the file is complete.
    pub(crate) fn finish(mut self) -> Result<(), McapFileError> {
        self.writer.finish().map_err(|e| self.error(e))?;
        Ok(())
    }
}

/// A recorded key's values: `(DCM time in seconds, value)` per cycle, in file order.
pub(crate) type KeySeries = BTreeMap<String, Vec<(f64, f64)>>;

/// Read every key channel of a recording (event channels are skipped).
pub(crate) fn read_keys(path: &Path) -> Result<KeySeries, McapFileError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| McapFileError::Io { path: name.clone(), source })?;
    let mcap = |source| McapFileError::Mcap { path: name.clone(), source };
    let mut series = KeySeries::new();
    for message in mcap::MessageStream::new(&bytes).map_err(mcap)? {
        let message = message.map_err(mcap)?;
        if message.channel.schema.as_ref().is_none_or(|schema| schema.name != KEY_SCHEMA_NAME) {
            continue;
        }
        let Ok(json) = serde_json::from_slice::<serde_json::Value>(&message.data) else { continue };
        if let (Some(value), Some(time)) = (json["value"].as_f64(), json["dcm_time_ms"].as_f64()) {
            let seconds = time / 1000.0;
            series.entry(message.channel.topic.clone()).or_default().push((seconds, value));
        }
    }
    Ok(series)
}
