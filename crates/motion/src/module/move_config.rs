//! NAOqi's move config: `[[key, value], ...]` with MaxStepX, MaxStepY, MaxStepTheta,
//! MaxStepFrequency, StepHeight, TorsoWx, TorsoWy (and Left/Right forms of each, and
//! moveToward's Frequency), checked against their Min and Max and turned into the walk's
//! parameters (docs/walk.md, "Move config").

use naobroker_framework::{excerpt, CallError, Value};
use naobroker_protocol::value_excerpt;
use naobroker_walk::WalkParameters;

use crate::engine::walking::MoveLimits;

/// The keys `getMoveConfig` lists, in NAOqi's order.
pub(super) const KEYS: [&str; 7] =
    ["MaxStepX", "MaxStepY", "MaxStepTheta", "MaxStepFrequency", "StepHeight", "TorsoWx", "TorsoWy"];
pub(super) const MIN: [f64; 7] = [0.001, 0.101, 0.001, 0.0, 0.005, -0.122, -0.122];
pub(super) const MAX: [f64; 7] = [0.08, 0.16, 0.4, 1.0, 0.04, 0.122, 0.122];
pub(super) const DEFAULT: [f64; 7] = [0.08, 0.16, 0.4, 1.0, 0.02, 0.0, 0.0];

/// The feet's centres' distance when the walk stands (m): MaxStepY and footsteps' y count
/// from there.
pub(super) const STANCE_WIDTH_M: f64 = 0.1;

/// A move config's values, per foot (left, right) for the keys that have Left/Right forms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct MoveConfig {
    per_foot: [[f64; 7]; 2],
    /// moveToward's Frequency, when given: it overrides MaxStepFrequency.
    frequency: Option<f64>,
}

impl Default for MoveConfig {
    fn default() -> Self {
        MoveConfig { per_foot: [DEFAULT; 2], frequency: None }
    }
}

impl MoveConfig {
    /// `[[key, value], ...]`; nothing (or an empty list) is the default config.
    pub(super) fn parse(config: Option<&Value>) -> Result<MoveConfig, CallError> {
        let mut parsed = MoveConfig::default();
        let Some(config) = config else { return Ok(parsed) };
        let pairs = config.as_array().ok_or_else(|| {
            CallError::bad_argument(format!(
                "move config: expected [[key, value], ...], got {}",
                value_excerpt(config)
            ))
        })?;
        for pair in pairs {
            let entry = pair.as_array().filter(|entry| entry.len() == 2);
            let key = entry.and_then(|entry| entry[0].as_str());
            let value =
                entry.and_then(|entry| entry[1].as_f64().or_else(|| entry[1].as_i64().map(|v| v as f64)));
            let (Some(key), Some(value)) = (key, value) else {
                return Err(CallError::bad_argument(format!(
                    "move config: expected [key, number], got {}",
                    value_excerpt(pair)
                )));
            };
            parsed.set(key, value)?;
        }
        Ok(parsed)
    }

    fn set(&mut self, key: &str, value: f64) -> Result<(), CallError> {
        if key == "Frequency" {
            self.frequency = Some(within(key, value, 0.0, 1.0)?);
            return Ok(());
        }
        let (feet, base): (&[usize], &str) = if let Some(base) = key.strip_prefix("Left") {
            (&[0], base)
        } else if let Some(base) = key.strip_prefix("Right") {
            (&[1], base)
        } else {
            (&[0, 1], key)
        };
        let index = KEYS.iter().position(|known| *known == base).ok_or_else(|| {
            CallError::bad_argument(format!(
                "move config: unknown key {:?}: one of {}, Frequency, or Left/Right forms",
                excerpt(key),
                KEYS.join(", ")
            ))
        })?;
        let value = within(key, value, MIN[index], MAX[index])?;
        for &foot in feet {
            self.per_foot[foot][index] = value;
        }
        Ok(())
    }

    /// The value of `key` the walk uses: the smaller of the two feet's (the walk steps alike
    /// with both).
    fn value(&self, index: usize) -> f64 {
        self.per_foot[0][index].min(self.per_foot[1][index])
    }

    /// The normalised step frequency: Frequency when given, else MaxStepFrequency.
    pub(super) fn frequency(&self) -> f64 {
        self.frequency.unwrap_or_else(|| self.value(3))
    }

    /// The walk's limits under this config. MaxStepY and MaxStepTheta are, as in NAOqi,
    /// the feet's distance and angle at the widest step: the walk's opening step spreads
    /// them by twice its sideways and turning step.
    pub(super) fn limits(&self) -> MoveLimits {
        let defaults = WalkParameters::default();
        let torso = [self.value(5), self.value(6)];
        MoveLimits {
            max_forward_m: self.value(0),
            max_backward_m: defaults.max_backward_m.min(self.value(0)),
            max_left_m: (self.value(1) - STANCE_WIDTH_M) / 2.0,
            max_turn_rad: self.value(2) / 2.0,
            // Frequency 1: the walk's own period; 0: twice as long.
            step_period_s: defaults.step_period_s / (0.5 + 0.5 * self.frequency()),
            step_height_m: self.value(4),
            torso_roll_rad: torso[0],
            torso_pitch_rad: torso[1],
        }
    }
}

fn within(key: &str, value: f64, min: f64, max: f64) -> Result<f64, CallError> {
    if value.is_finite() && (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(CallError::bad_argument(format!("move config: {key} = {value} is outside [{min}, {max}]")))
    }
}

/// `getMoveConfig`'s answer for one of its tables.
pub(super) fn table(values: &[f64; 7]) -> Vec<Value> {
    KEYS.iter().zip(values).map(|(key, value)| Value::Array(vec![(*key).into(), (*value).into()])).collect()
}
