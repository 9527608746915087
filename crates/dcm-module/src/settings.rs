//! `DCM.preferences(action, target, key, value)` and `DCM.calibration(V)`: the preference
//! tables the DCM module keeps, shown in ALMemory as data the DCM owns, saved into and
//! loaded from the robot description; calibration kept in them as offsets.

use std::path::PathBuf;
use std::sync::Arc;

use naobroker_framework::{Limits, Value};
use naobroker_memory::Store;
use naobroker_robot::device::{self, Conversion, DeviceIndex, DeviceModel, DeviceSpec};
use naobroker_robot::preferences::{check_conversion, PreferenceValue, Preferences, Target};

use crate::error::DcmError;
use crate::handle::DcmHandle;
use crate::parse::{self, preference_to_value, preference_value};

/// The preferences in effect and where they go.
pub(crate) struct Settings {
    preferences: Preferences,
    /// The robot description file, when the broker was started with one.
    description: Option<PathBuf>,
    /// ALMemory's store, where preferences are shown.
    store: Option<Arc<Store>>,
}

impl Settings {
    pub(crate) fn new(model: &DeviceModel) -> Settings {
        Settings { preferences: model.preferences.clone(), description: None, store: None }
    }

    /// ALMemory's store, once attached.
    pub(crate) fn store(&self) -> Option<&Arc<Store>> {
        self.store.as_ref()
    }

    pub(crate) fn attach(&mut self, store: Arc<Store>, description: Option<PathBuf>) {
        self.store = Some(store);
        self.description = description;
    }

    /// Show every preference in ALMemory (at start).
    pub(crate) fn publish_all(&self, handle: &DcmHandle) {
        let Some(store) = &self.store else { return };
        for key in self.preferences.keys() {
            if let (false, Some(value)) = (is_slot(handle, key), self.preferences.get(key)) {
                show(store, key, value);
            }
        }
    }
}

/// Preference keys are never real-time values nor events: showing them cannot fail.
fn show(store: &Store, key: &str, value: &PreferenceValue) {
    if let Err(error) = store.insert_owned(key, preference_to_value(value)) {
        tracing::warn!(%error, "a preference cannot be shown in ALMemory");
    }
}

/// A key the DCM publishes every cycle (values, gains, offsets, counters).
fn is_slot(handle: &DcmHandle, key: &str) -> bool {
    handle.shared().slots.layout().index_of(key).is_some()
}

/// A preference change being made: one table's key, what that table held before and the
/// value in effect before (for ALMemory).
struct Edit {
    target: Target,
    key: String,
    previous: Option<PreferenceValue>,
    before: Option<PreferenceValue>,
}

impl Settings {
    /// NAOqi's `preferences(action, target, key, value)`: `Add` a key to one target's table,
    /// `Save` targets' tables into the description file, `Load` them back from it. Answers
    /// the number of keys added, saved or loaded. `limits` are the broker's bounds on an
    /// added key and value.
    pub(crate) fn preferences(
        &mut self,
        handle: &DcmHandle,
        limits: &Limits,
        (action, target, key, value): (String, String, Option<String>, Option<Value>),
    ) -> Result<u64, DcmError> {
        let targets = Target::parse(&target)?;
        match action.as_str() {
            "Add" => {
                self.add(handle, limits, targets, &key.unwrap_or_default(), &value.unwrap_or(Value::Nil))
            }
            "Save" => self.save(targets),
            "Load" => self.load(handle, targets),
            _ => Err(DcmError::UnknownPreferencesAction(action)),
        }
    }

    fn add(
        &mut self,
        handle: &DcmHandle,
        limits: &Limits,
        targets: &[Target],
        key: &str,
        value: &Value,
    ) -> Result<u64, DcmError> {
        let &[target] = targets else { return Err(DcmError::AddToOneTarget) };
        limits.check_name("key", key)?;
        limits.check_value(key, value)?;
        if is_slot(handle, key) && !(key.ends_with("/Gain") || key.ends_with("/Offset")) {
            return Err(DcmError::PublishedEveryCycle(key.to_owned()));
        }
        self.change(handle, vec![(target, key.to_owned(), preference_value(value)?)])?;
        Ok(1)
    }

    fn save(&self, targets: &[Target]) -> Result<u64, DcmError> {
        let Some(path) = &self.description else { return Err(DcmError::NoDescriptionFile) };
        let written = device::save_preferences(path, &self.preferences, targets)?;
        tracing::info!(file = %path.display(), keys = written, "DCM preferences saved");
        Ok(written as u64)
    }

    /// Replace targets' tables with the file's (whole tables: the one place preferences are
    /// copied), then take the keys that changed into effect.
    fn load(&mut self, handle: &DcmHandle, targets: &[Target]) -> Result<u64, DcmError> {
        let loaded = device::load_preferences(self.description.as_deref())?;
        let old = self.preferences.clone();
        for &target in targets {
            self.preferences.replace(target, &loaded);
        }
        let new = &self.preferences;
        let changed: Vec<(&str, Option<&PreferenceValue>)> = (old.keys().union(&new.keys()))
            .filter(|key| old.get(key) != new.get(key))
            .map(|key| (*key, old.get(key)))
            .collect();
        if let Err(error) = self.take_effect(handle, &changed) {
            self.preferences = old;
            return Err(error);
        }
        Ok(targets.iter().map(|&target| loaded.table(target).len() as u64).sum())
    }

    /// NAOqi's `calibration([name, "Manual", "InPosition", reference])`: the joint's position
    /// sensor reads `reference` where it stands now, its actuator follows; the new offsets are
    /// Local preferences (`DCM.preferences("Save", "Local", "", 0)` keeps them).
    pub(crate) fn calibration(&mut self, handle: &DcmHandle, input: &Value) -> Result<(), DcmError> {
        let model = Arc::clone(handle.model());
        let calibration = parse::calibration(&model, input)?;
        let (sensor_spec, actuator_spec) =
            (&model.sensors[calibration.sensor], &model.actuators[calibration.actuator]);
        let current = &self.preferences;
        let sensor_conversion = current.conversion(sensor_spec);
        // What the hardware last read, with the conversion the preferences hold now: right
        // even when the cycle has not taken a previous calibration yet.
        let reads = sensor_conversion.sensor_value(handle.shared().sensor_reading(calibration.sensor));
        let (sensor, actuator) =
            calibration.conversions(reads, sensor_conversion, current.conversion(actuator_spec));
        let offset = |spec: &DeviceSpec, conversion: Conversion| {
            (Target::Local, spec.property_key("Offset"), PreferenceValue::Float(conversion.offset))
        };
        let offsets = vec![offset(sensor_spec, sensor), offset(actuator_spec, actuator)];
        self.change(handle, offsets).map_err(|error| DcmError::Calibration {
            joint: actuator_spec.name.split('/').next().unwrap_or_default().to_owned(),
            reference: calibration.reference,
            reads,
            source: Box::new(error),
        })
    }

    /// Change keys in place, then take them into effect; on any refusal every key is put
    /// back and nothing changed.
    fn change(
        &mut self,
        handle: &DcmHandle,
        changes: Vec<(Target, String, PreferenceValue)>,
    ) -> Result<(), DcmError> {
        let mut edits = Vec::with_capacity(changes.len());
        for (target, key, value) in changes {
            let before = self.preferences.get(&key).cloned();
            match self.preferences.insert(target, &key, value) {
                Ok(previous) => edits.push(Edit { target, key, previous, before }),
                Err(error) => {
                    self.undo(edits);
                    return Err(error.into());
                }
            }
        }
        let changed: Vec<(&str, Option<&PreferenceValue>)> =
            edits.iter().map(|edit| (edit.key.as_str(), edit.before.as_ref())).collect();
        let taken = self.take_effect(handle, &changed);
        drop(changed);
        if taken.is_err() {
            self.undo(edits);
        }
        taken
    }

    fn undo(&mut self, edits: Vec<Edit>) {
        for edit in edits.into_iter().rev() {
            self.preferences.restore(edit.target, &edit.key, edit.previous);
        }
    }

    /// Take changed keys into effect (`changed`: each key with its value in effect before):
    /// the conversions of the devices they name, checked against the devices' bounds, go to
    /// the cycle; the keys to ALMemory. Nothing changes when a conversion is refused or the
    /// cycle cannot be told.
    fn take_effect(
        &self,
        handle: &DcmHandle,
        changed: &[(&str, Option<&PreferenceValue>)],
    ) -> Result<(), DcmError> {
        let model = handle.model();
        let mut conversions: Vec<(DeviceIndex, Conversion)> = Vec::new();
        for device in changed.iter().filter_map(|(key, _)| model.device_of_property(key)) {
            if conversions.iter().any(|(seen, _)| *seen == device) {
                continue;
            }
            let spec = model.spec(device);
            let conversion = self.preferences.conversion(spec);
            check_conversion(spec, conversion)?;
            conversions.push((device, conversion));
        }
        if !conversions.is_empty() {
            handle.channel().set_conversions(conversions)?;
        }
        let Some(store) = &self.store else { return Ok(()) };
        for &(key, before) in changed.iter().filter(|(key, _)| !is_slot(handle, key)) {
            match self.preferences.get(key) {
                Some(value) if before != Some(value) => show(store, key, value),
                Some(_) => {}
                None => store.remove_owned(key),
            }
        }
        Ok(())
    }
}
