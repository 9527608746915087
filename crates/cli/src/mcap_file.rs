//! The MCAP files `naocli record` writes and `naocli plot` reads (docs/recording.md): the
//! robot's channels (the live view's: joint states, transforms, sensors), one channel per
//! key the user asked for and per recorded event (JSON messages with a JSON schema), log time
//! = DCM time, as the live view stamps its messages.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::sync::Arc;

use foxglove::{Context, McapWriterHandle, PartialMetadata, RawChannel, Schema};
use naobroker_foxglove::robot::{
    log_json, log_time_ns, CycleKeys, CyclePose, Decimation, RobotChannels, SensedPose,
};
use naobroker_urdf::ViewerModel;
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
    #[error("{path}: {source}")]
    Writer { path: String, source: foxglove::FoxgloveError },
    #[error("the robot's model: {0}")]
    Model(#[from] naobroker_kinematics::ModelError),
}

/// Writes one recording through the Foxglove SDK's MCAP writer: the robot's channels (the
/// live view's), one channel per recorded key and per recorded event.
pub(crate) struct RecordingFile {
    path: String,
    /// The channels' context: the writer and the channels hold it weakly.
    context: Arc<Context>,
    writer: McapWriterHandle<BufWriter<File>>,
    robot: RobotChannels,
    pose: SensedPose,
    /// Every key asked of `DCM.record`, in a row's order: the robot's, then the user's that
    /// are not among them.
    recorded: Vec<String>,
    /// The user's keys: each one's channel and where its value is in a row.
    keys: Vec<(Arc<RawChannel>, usize)>,
    events: BTreeMap<String, Arc<RawChannel>>,
    /// Whether the robot description was written (once, with the first cycle).
    described: bool,
}

fn json_channel(
    context: &Arc<Context>,
    topic: &str,
    name: &str,
    schema: serde_json::Value,
) -> Arc<RawChannel> {
    context
        .channel_builder(topic)
        .message_encoding("json")
        .schema(Schema::new(name, "jsonschema", schema.to_string().into_bytes()))
        .build_raw()
        .expect("a JSON channel's topic, encoding and schema are valid")
}

impl RecordingFile {
    /// A new file recording `model`'s robot channels and the user's `keys` (each asked of the
    /// DCM once, whether or not the robot's channels take it too).
    pub(crate) fn create(
        path: &Path,
        model: &ViewerModel,
        keys: &[String],
    ) -> Result<RecordingFile, McapFileError> {
        let name = path.display().to_string();
        let file = File::create(path).map_err(|source| McapFileError::Io { path: name.clone(), source })?;
        let context = Context::new();
        let cycle_keys = CycleKeys::new(model.joints.clone());
        let pose = SensedPose::new(model, &cycle_keys)?;
        let mut recorded = cycle_keys.keys.clone();
        let mut user = Vec::with_capacity(keys.len());
        for key in keys {
            let slot = recorded.iter().position(|known| known == key).unwrap_or_else(|| {
                recorded.push(key.clone());
                recorded.len() - 1
            });
            if !user.iter().any(|(_, known)| *known == slot) {
                user.push((json_channel(&context, key, KEY_SCHEMA_NAME, key_schema()), slot));
            }
        }
        // Every cycle recorded: the slow channels too.
        let every_cycle = Decimation { battery: 1, sonar: 1 };
        let robot = RobotChannels::new(&context, model, cycle_keys, every_cycle);
        let writer = context
            .mcap_writer()
            .create(BufWriter::new(file))
            .map_err(|source| McapFileError::Writer { path: name.clone(), source })?;
        let events = BTreeMap::new();
        Ok(RecordingFile {
            path: name,
            context,
            writer,
            robot,
            pose,
            recorded,
            keys: user,
            events,
            described: false,
        })
    }

    /// The keys to ask `DCM.record` for, in a row's order.
    pub(crate) fn recorded_keys(&self) -> &[String] {
        &self.recorded
    }

    /// One cycle: the values of [`RecordingFile::recorded_keys`] (a shorter row is not
    /// written: the caller counts it).
    pub(crate) fn cycle(&mut self, dcm_time_ms: i64, cycle: u64, values: &[f64]) {
        if values.len() < self.recorded.len() {
            return;
        }
        let time = log_time_ns(dcm_time_ms);
        if !self.described {
            // Once, at the first cycle's time, as the live view sends it to a new viewer.
            let description = self.robot.robot_description_message();
            self.robot.robot_description().log_with_meta(&description, PartialMetadata::with_log_time(time));
            self.described = true;
        }
        for (channel, slot) in &self.keys {
            let message = json!({"dcm_time_ms": dcm_time_ms, "cycle": cycle, "value": values[*slot]});
            log_json(channel, time, &message);
        }
        let robot = &values[..self.robot.keys().keys.len()];
        let (in_torso, torso_in_robot) = self.pose.update(self.robot.keys(), robot);
        // A recording has no walk odometry: the robot stays where it started.
        let pose = CyclePose { in_torso, torso_in_world: Some(torso_in_robot), odometry: None };
        self.robot.log_cycle(cycle, time, robot, Some(&pose));
    }

    /// An event received while recording.
    pub(crate) fn event(&mut self, event: &str, dcm_time_ms: i64, value: serde_json::Value) {
        let context = &self.context;
        let channel = self
            .events
            .entry(event.to_owned())
            .or_insert_with(|| json_channel(context, event, EVENT_SCHEMA_NAME, event_schema()));
        let message = json!({"dcm_time_ms": dcm_time_ms, "event": event, "value": value});
        log_json(channel, log_time_ns(dcm_time_ms), &message);
    }

    /// Write the summary and index: the file is complete.
    pub(crate) fn finish(self) -> Result<(), McapFileError> {
        let path = self.path;
        self.writer.close().map_err(|source| McapFileError::Writer { path, source })?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_the_robot_channels_take_too_is_asked_of_the_dcm_once() {
        let path = std::env::temp_dir().join(format!("naocli-keys-{}.mcap", std::process::id()));
        let model = ViewerModel::nao_v6();
        let sensor = "Device/SubDeviceList/HeadYaw/Position/Sensor/Value".to_owned();
        let keys = [sensor.clone(), "DCM/Time".to_owned(), sensor.clone(), "DCM/Time".to_owned()];
        let file = RecordingFile::create(&path, &model, &keys).unwrap();
        let robot = CycleKeys::new(model.joints.clone()).keys;
        let recorded = file.recorded_keys();
        assert_eq!(recorded.len(), robot.len() + 1, "the robot's keys, then DCM/Time alone");
        assert_eq!(recorded[robot.len()], "DCM/Time");
        let slots: Vec<usize> = file.keys.iter().map(|(_, slot)| *slot).collect();
        assert_eq!(slots, [robot.iter().position(|key| *key == sensor).unwrap(), robot.len()]);
        file.finish().unwrap();
        std::fs::remove_file(&path).unwrap();
    }
}
