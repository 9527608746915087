//! `DCM.preferences(action, target, key, value)` and `DCM.calibration(V)`: the preference
//! tables the DCM module keeps, shown in ALMemory as data the DCM owns, saved into and
//! loaded from the robot description; calibration kept in them as offsets.

use std::path::PathBuf;
use std::sync::Arc;

use naobroker_framework::{CallError, ModuleContext, Value};
use naobroker_memory::Store;

use super::Dcm;
use crate::calibration::Calibration;
use crate::device::{Conversion, DeviceIndex, DeviceModel, DeviceSpec};
use crate::preferences::{self, PreferenceValue, Preferences, Target};

/// The preferences in effect and where they go.
pub(super) struct Settings {
    preferences: Preferences,
    /// The robot description file, when the broker was started with one.
    description: Option<PathBuf>,
    /// ALMemory's store, where preferences are shown.
    store: Option<Arc<Store>>,
}

impl Settings {
    pub(super) fn new(model: &DeviceModel) -> Settings {
        Settings { preferences: model.preferences.clone(), description: None, store: None }
    }

    pub(super) fn attach(&mut self, store: Arc<Store>, description: Option<PathBuf>) {
        self.store = Some(store);
        self.description = description;
    }

    /// Show every preference in ALMemory (at start).
    pub(super) fn publish_all(&self, dcm: &Dcm) {
        let Some(store) = &self.store else { return };
        for key in self.preferences.keys() {
            if let (false, Some(value)) = (is_slot(dcm, key), self.preferences.get(key)) {
                if let Err(error) = store.insert_owned(key, value.to_value()) {
                    tracing::warn!(%error, "a preference cannot be shown in ALMemory");
                }
            }
        }
    }
}

/// A key the DCM publishes every cycle (values, gains, offsets, counters).
fn is_slot(dcm: &Dcm, key: &str) -> bool {
    dcm.handle.shared.slots.layout().index_of(key).is_some()
}

/// Take `new` preferences into effect: changed gains and offsets go to the cycle, changed
/// keys to ALMemory. Nothing changes when the cycle cannot be told.
fn apply(dcm: &mut Dcm, new: Preferences) -> Result<(), CallError> {
    let model = Arc::clone(&dcm.handle.model);
    let old = &dcm.settings.preferences;
    let changed = |device: DeviceIndex, spec: &DeviceSpec| {
        let conversion = new.conversion(spec);
        (conversion != old.conversion(spec)).then_some((device, conversion))
    };
    let conversions: Vec<(DeviceIndex, Conversion)> = (model.actuators.iter().enumerate())
        .filter_map(|(index, spec)| changed(DeviceIndex::Actuator(index), spec))
        .chain(
            model
                .sensors
                .iter()
                .enumerate()
                .filter_map(|(index, spec)| changed(DeviceIndex::Sensor(index), spec)),
        )
        .collect();
    if !conversions.is_empty() {
        dcm.handle.channel.borrow_mut().set_conversions(conversions)?;
    }
    if let Some(store) = &dcm.settings.store {
        for key in old.keys().union(&new.keys()).filter(|key| !is_slot(dcm, key)) {
            match new.get(key) {
                Some(value) if old.get(key) != Some(value) => store.insert_owned(key, value.to_value())?,
                Some(_) => {}
                None => store.remove_owned(key),
            }
        }
    }
    dcm.settings.preferences = new;
    Ok(())
}

/// NAOqi's `preferences(action, target, key, value)`: `Add` a key to one target's table,
/// `Save` targets' tables into the description file, `Load` them back from it. Answers
/// the number of keys added, saved or loaded.
pub(super) fn preferences_method(
    dcm: &mut Dcm,
    _context: &ModuleContext,
    (action, target, key, value): (String, String, Option<String>, Option<Value>),
) -> Result<u64, CallError> {
    let targets = Target::parse(&target)?;
    match action.as_str() {
        "Add" => add(dcm, targets, &key.unwrap_or_default(), &value.unwrap_or(Value::Nil)),
        "Save" => save(dcm, targets),
        "Load" => load(dcm, targets),
        other => Err(CallError::new(format!("unknown preferences action {other:?} (Save, Load or Add)"))),
    }
}

fn add(dcm: &mut Dcm, targets: &[Target], key: &str, value: &Value) -> Result<u64, CallError> {
    let &[target] = targets else {
        return Err(CallError::new("Add puts a key in one target: Chest, Head or Local"));
    };
    let limits = dcm.broker.limits();
    limits.check_name("key", key)?;
    limits.check_value(key, value)?;
    if is_slot(dcm, key) && !(key.ends_with("/Gain") || key.ends_with("/Offset")) {
        return Err(CallError::new(format!(
            "{key} is a value the DCM publishes every cycle, not a preference"
        )));
    }
    let mut new = dcm.settings.preferences.clone();
    new.insert(target, key, PreferenceValue::from_value(value)?)?;
    apply(dcm, new)?;
    Ok(1)
}

fn save(dcm: &mut Dcm, targets: &[Target]) -> Result<u64, CallError> {
    let Some(path) = &dcm.settings.description else {
        return Err(CallError::new(
            "Save writes the robot description file, and this broker runs the built-in NAO V6 one: \
             start it with [dcm] robot = \"path/to/robot.toml\" to save preferences",
        ));
    };
    let written = preferences::save(path, &dcm.settings.preferences, targets)?;
    tracing::info!(file = %path.display(), keys = written, "DCM preferences saved");
    Ok(written as u64)
}

fn load(dcm: &mut Dcm, targets: &[Target]) -> Result<u64, CallError> {
    let loaded = preferences::load(dcm.settings.description.as_deref())?;
    let mut new = dcm.settings.preferences.clone();
    for &target in targets {
        new.replace(target, &loaded);
    }
    apply(dcm, new)?;
    Ok(targets.iter().map(|&target| loaded.table(target).len() as u64).sum())
}

/// NAOqi's `calibration([name, "Manual", "InPosition", reference])`: the joint's position
/// sensor reads `reference` where it stands now, its actuator follows; the new offsets are
/// Local preferences (`DCM.preferences("Save", "Local", "", 0)` keeps them).
pub(super) fn calibration_method(
    dcm: &mut Dcm,
    _context: &ModuleContext,
    (input,): (Value,),
) -> Result<(), CallError> {
    let model = Arc::clone(&dcm.handle.model);
    let calibration = Calibration::parse(&model, &input)?;
    let shared = &dcm.handle.shared;
    let sensor_value = shared.slots.get(shared.dcm_slots.sensors + calibration.sensor);
    let (sensor_spec, actuator_spec) =
        (&model.sensors[calibration.sensor], &model.actuators[calibration.actuator]);
    let current = &dcm.settings.preferences;
    let (sensor, actuator) = calibration.conversions(
        sensor_value,
        current.conversion(sensor_spec),
        current.conversion(actuator_spec),
    );
    let mut new = current.clone();
    for (spec, conversion) in [(sensor_spec, sensor), (actuator_spec, actuator)] {
        new.insert(Target::Local, &spec.property_key("Offset"), PreferenceValue::Float(conversion.offset))?;
    }
    apply(dcm, new)
}
