//! `createAlias`: named lists of actuators that `set` and `setAlias` address together, each
//! bounded in length so that one request cannot cost the DCM unbounded work.

use std::collections::HashMap;

use naobroker_robot::device::DeviceModel;
use naobroker_robot::excerpt;

/// Members an alias may name per actuator of the robot: room for an actuator named more
/// than once (each list then counts in turn) and for names this robot lacks.
pub const MAX_ALIAS_MEMBERS_PER_ACTUATOR: usize = 4;

/// Aliases the DCM keeps at most: far more than any robot program names, and a bound on
/// what clients creating aliases in a loop can make the broker hold.
pub const MAX_ALIASES: usize = 1024;

/// A `createAlias` list longer than [`MAX_ALIAS_MEMBERS_PER_ACTUATOR`] × the actuators.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "alias {alias} names {members} actuators, the most an alias may name is {limit} \
     ({MAX_ALIAS_MEMBERS_PER_ACTUATOR} per actuator of the robot)"
)]
pub struct AliasTooLong {
    /// The alias's name, cut to an excerpt.
    pub alias: String,
    pub members: usize,
    pub limit: usize,
}

/// Why `createAlias` refused an alias.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AliasError {
    #[error("the alias name must not be empty")]
    EmptyName,
    #[error("alias {0:?} is named like a device: choose another name")]
    NamedLikeDevice(String),
    #[error(transparent)]
    TooLong(#[from] AliasTooLong),
    #[error("the DCM holds {MAX_ALIASES} aliases already, the most it keeps: redefine one of them")]
    TooMany,
}

/// Named lists of actuators (`createAlias`). `None` stands for a name that was unknown.
#[derive(Debug, Default, Clone)]
pub struct Aliases {
    aliases: HashMap<String, Vec<Option<usize>>>,
}

impl Aliases {
    pub fn get(&self, name: &str) -> Option<&[Option<usize>]> {
        self.aliases.get(name).map(Vec::as_slice)
    }

    /// NAOqi's `createAlias`: `name` stands for the actuators `members` from now on (a new
    /// alias, or a redefined one). Answers each member's actuator, `None` for a name this
    /// robot lacks: `setAlias` skips its list.
    pub fn create(
        &mut self,
        model: &DeviceModel,
        name: &str,
        members: &[&str],
    ) -> Result<&[Option<usize>], AliasError> {
        if name.is_empty() {
            return Err(AliasError::EmptyName);
        }
        if model.actuator(name).is_some() || model.sensor(name).is_some() {
            return Err(AliasError::NamedLikeDevice(name.to_owned()));
        }
        let limit = MAX_ALIAS_MEMBERS_PER_ACTUATOR * model.actuators.len();
        if members.len() > limit {
            return Err(AliasTooLong { alias: excerpt(name), members: members.len(), limit }.into());
        }
        if self.aliases.len() >= MAX_ALIASES && !self.aliases.contains_key(name) {
            return Err(AliasError::TooMany);
        }
        let resolved = members.iter().map(|member| model.actuator(member)).collect();
        let slot = self.aliases.entry(name.to_owned()).or_default();
        *slot = resolved;
        Ok(slot.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use naobroker_robot::device::RobotDescription;

    const YAW: &str = "HeadYaw/Position/Actuator/Value";

    fn model() -> DeviceModel {
        DeviceModel::new(RobotDescription::nao_v6()).unwrap()
    }

    #[test]
    fn unknown_members_are_kept_as_none_and_devices_names_are_refused() {
        let model = model();
        let mut aliases = Aliases::default();
        let red = "ChestBoard/Led/Red/Actuator/Value";
        let members = aliases.create(&model, "Chest", &[red, "Nope"]).unwrap().to_vec();
        assert_eq!(members, [model.actuator(red), None]);
        assert_eq!(aliases.get("Chest").unwrap(), members);
        assert_eq!(aliases.create(&model, YAW, &[]), Err(AliasError::NamedLikeDevice(YAW.into())));
        assert_eq!(aliases.create(&model, "", &[YAW]), Err(AliasError::EmptyName));
    }

    #[test]
    fn the_dcm_keeps_at_most_1024_aliases_and_lets_them_be_redefined() {
        let model = model();
        let mut aliases = Aliases::default();
        for n in 0..MAX_ALIASES {
            aliases.create(&model, &format!("A{n}"), &[YAW]).unwrap();
        }
        let refused = aliases.create(&model, "one more", &[YAW]).unwrap_err();
        assert_eq!(refused, AliasError::TooMany);
        assert!(refused.to_string().contains("holds 1024 aliases already"), "{refused}");
        aliases.create(&model, "A7", &[YAW]).unwrap();
    }

    #[test]
    fn an_alias_names_at_most_four_members_per_actuator() {
        let model = model();
        let limit = MAX_ALIAS_MEMBERS_PER_ACTUATOR * model.actuators.len();
        let mut aliases = Aliases::default();
        aliases.create(&model, "Many", &vec![YAW; limit]).unwrap();
        assert_eq!(aliases.get("Many").unwrap().len(), limit);
        let error = aliases.create(&model, "Many", &vec![YAW; limit + 1]).unwrap_err();
        let expected = AliasTooLong { alias: "Many".into(), members: limit + 1, limit };
        assert_eq!(error, AliasError::TooLong(expected));
        assert!(error.to_string().contains(&format!("the most an alias may name is {limit}")), "{error}");
        assert_eq!(aliases.get("Many").unwrap().len(), limit, "the refused list left the alias as it was");
        let long_name = "x".repeat(1000);
        let error = aliases.create(&model, &long_name, &vec![YAW; limit + 1]).unwrap_err().to_string();
        assert!(error.starts_with(&format!("alias {}… (1000 bytes) names", "x".repeat(64))), "{error}");
    }
}
