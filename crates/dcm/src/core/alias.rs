//! `createAlias`: named lists of actuators that `set` and `setAlias` address together, each
//! bounded in length so that one request cannot cost the DCM unbounded work.

use std::collections::HashMap;

use naobroker_framework::{excerpt, Value};

use super::request::{array, string};
use crate::device::DeviceModel;

/// Members an alias may name per actuator of the robot: room for an actuator named more
/// than once (each list then counts in turn) and for names this robot lacks.
pub const MAX_ALIAS_MEMBERS_PER_ACTUATOR: usize = 4;

/// Aliases the DCM keeps at most: far more than any robot program names, and a bound on
/// what clients creating aliases in a loop can make the broker hold.
const MAX_ALIASES: usize = 1024;

/// A `createAlias` list longer than [`MAX_ALIAS_MEMBERS_PER_ACTUATOR`] × the actuators.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "alias {alias} names {members} actuators, the most an alias may name is {limit} \
     ({MAX_ALIAS_MEMBERS_PER_ACTUATOR} per actuator of the robot)"
)]
pub struct AliasTooLong {
    pub alias: String,
    pub members: usize,
    pub limit: usize,
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

    /// `createAlias([alias, [actuator, ...]])`: answers the input with unknown names
    /// replaced by "".
    pub fn create(&mut self, model: &DeviceModel, request: &Value) -> Result<Value, String> {
        let items = array(request, "the createAlias request")?;
        if items.len() != 2 {
            return Err(format!(
                "the createAlias request must be [alias, [actuator, ...]], got {} elements",
                items.len()
            ));
        }
        let name = string(&items[0], "the alias name")?;
        if name.is_empty() {
            return Err("the alias name must not be empty".into());
        }
        if model.actuator(name).is_some() || model.sensor(name).is_some() {
            return Err(format!("alias {name:?} is named like a device: choose another name"));
        }
        let members = array(&items[1], "the alias member list")?;
        let limit = MAX_ALIAS_MEMBERS_PER_ACTUATOR * model.actuators.len();
        if members.len() > limit {
            let alias = excerpt(name).to_string();
            return Err(AliasTooLong { alias, members: members.len(), limit }.to_string());
        }
        if self.aliases.len() >= MAX_ALIASES && !self.aliases.contains_key(name) {
            return Err(format!(
                "the DCM holds {MAX_ALIASES} aliases already, the most it keeps: redefine one of them"
            ));
        }
        let mut resolved = Vec::with_capacity(members.len());
        let mut validated = Vec::with_capacity(members.len());
        for (position, member) in members.iter().enumerate() {
            let member = string(member, &format!("alias member {}", position + 1))?;
            let index = model.actuator(member);
            validated.push(Value::from(if index.is_some() { member } else { "" }));
            resolved.push(index);
        }
        self.aliases.insert(name.to_owned(), resolved);
        Ok(Value::Array(vec![name.into(), Value::Array(validated)]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::RobotDescription;

    #[test]
    fn the_dcm_keeps_at_most_1024_aliases_and_lets_them_be_redefined() {
        let model = DeviceModel::new(RobotDescription::nao_v6()).unwrap();
        let mut aliases = Aliases::default();
        let alias = |name: String| {
            Value::Array(vec![name.into(), Value::Array(vec!["HeadYaw/Position/Actuator/Value".into()])])
        };
        for n in 0..MAX_ALIASES {
            aliases.create(&model, &alias(format!("A{n}"))).unwrap();
        }
        let refused = aliases.create(&model, &alias("one more".into())).unwrap_err();
        assert!(refused.contains("holds 1024 aliases already"), "{refused}");
        aliases.create(&model, &alias("A7".into())).unwrap();
    }

    #[test]
    fn an_alias_names_at_most_four_members_per_actuator() {
        let model = DeviceModel::new(RobotDescription::nao_v6()).unwrap();
        let limit = MAX_ALIAS_MEMBERS_PER_ACTUATOR * model.actuators.len();
        let alias = |count: usize| {
            let members = vec![Value::from("HeadYaw/Position/Actuator/Value"); count];
            Value::Array(vec!["Many".into(), Value::Array(members)])
        };
        let mut aliases = Aliases::default();
        aliases.create(&model, &alias(limit)).unwrap();
        assert_eq!(aliases.get("Many").unwrap().len(), limit);
        let error = aliases.create(&model, &alias(limit + 1)).unwrap_err();
        let expected = AliasTooLong { alias: "Many".into(), members: limit + 1, limit }.to_string();
        assert_eq!(error, expected);
        assert!(error.contains(&format!("the most an alias may name is {limit}")), "{error}");
        assert_eq!(aliases.get("Many").unwrap().len(), limit, "the refused list left the alias as it was");
    }
}
