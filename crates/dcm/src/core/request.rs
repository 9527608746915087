//! Requests for the cycle: per-actuator lists of timed commands, applied whole or refused
//! whole, built from `set` and `setAlias` already read into types (their wire form is read
//! in `naobroker-dcm-module`) or pushed by in-process producers such as ALMotion.

use naobroker_robot::device::DeviceModel;

use super::{Aliases, TimedCommand};
use crate::time::is_before;

/// How new commands combine with the buffered ones (seed 002).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateType {
    /// Add the new commands.
    Merge,
    /// Delete every buffered command first.
    ClearAll,
    /// Delete buffered commands after the soonest new one.
    ClearAfter,
    /// Delete buffered commands before the latest new one.
    ClearBefore,
}

impl UpdateType {
    /// NAOqi's name of an update type.
    pub fn parse(name: &str) -> Result<UpdateType, UnknownUpdateType> {
        match name {
            "Merge" => Ok(UpdateType::Merge),
            "ClearAll" => Ok(UpdateType::ClearAll),
            "ClearAfter" => Ok(UpdateType::ClearAfter),
            "ClearBefore" => Ok(UpdateType::ClearBefore),
            other => Err(UnknownUpdateType(other.to_owned())),
        }
    }
}

/// An update type NAOqi does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown update type {0:?} (expected Merge, ClearAll, ClearAfter or ClearBefore)")]
pub struct UnknownUpdateType(pub String);

/// A `set` naming neither an actuator nor an alias.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnknownTarget {
    #[error("{0} is a sensor, not an actuator: it cannot take commands")]
    Sensor(String),
    #[error("unknown actuator or alias {0:?}")]
    Unknown(String),
}

/// The commands of one request for one actuator: sorted by time, one per time
/// (the later-sent wins), NaN values left out, values clamped to the device's range.
#[derive(Debug, Clone, PartialEq)]
pub struct ActuatorCommands {
    pub actuator: usize,
    pub update: UpdateType,
    pub commands: Vec<TimedCommand>,
}

/// A validated request: applied whole within one cycle, or refused whole.
#[derive(Debug, Clone, Default)]
pub struct Request {
    groups: Vec<ActuatorCommands>,
    /// Command lists of the groups cleared away, empty, for [`Request::push_command`] to
    /// fill again: a request reused cycle after cycle allocates nothing.
    spare: Vec<Vec<TimedCommand>>,
}

impl PartialEq for Request {
    fn eq(&self, other: &Request) -> bool {
        self.groups == other.groups
    }
}

impl Request {
    /// Room for `groups` groups of one command each, allocated now.
    pub fn with_capacity(groups: usize) -> Request {
        let spare = (0..groups).map(|_| Vec::with_capacity(1)).collect();
        Request { groups: Vec::with_capacity(groups), spare }
    }

    pub fn groups(&self) -> &[ActuatorCommands] {
        &self.groups
    }

    /// Add commands for one actuator (used by in-process producers such as ALMotion).
    pub fn push(&mut self, actuator: usize, update: UpdateType, mut commands: Vec<TimedCommand>) {
        normalize(&mut commands);
        self.groups.push(ActuatorCommands { actuator, update, commands });
    }

    /// [`Request::push`] of one command, into the storage of groups cleared before: the
    /// motion cycle's way, without allocating.
    pub fn push_command(&mut self, actuator: usize, update: UpdateType, command: TimedCommand) {
        let mut commands = self.spare.pop().unwrap_or_default();
        if !command.value.is_nan() {
            commands.push(command);
        }
        self.groups.push(ActuatorCommands { actuator, update, commands });
    }

    /// Empty it, keeping the storage for [`Request::push_command`].
    pub fn clear(&mut self) {
        for group in self.groups.drain(..) {
            let mut commands = group.commands;
            commands.clear();
            self.spare.push(commands);
        }
    }
}

/// Sort by time (wrapping order) keeping, for equal times, the one sent last.
fn normalize(commands: &mut Vec<TimedCommand>) {
    commands.retain(|c| !c.value.is_nan());
    // A stable sort keeps the order of equal times; then the last of each run wins.
    commands.sort_by(|a, b| {
        if a.time == b.time {
            std::cmp::Ordering::Equal
        } else if is_before(a.time, b.time) {
            std::cmp::Ordering::Less
        } else {
            std::cmp::Ordering::Greater
        }
    });
    let mut write = 0;
    for read in 0..commands.len() {
        if write > 0 && commands[write - 1].time == commands[read].time {
            commands[write - 1] = commands[read];
        } else {
            commands[write] = commands[read];
            write += 1;
        }
    }
    commands.truncate(write);
}

impl Request {
    /// NAOqi's `set`: the same `commands` for the actuator `name`, or for every actuator of
    /// the alias `name`, each list taken as a client's ([`Request::push_clamped`]).
    pub fn set(
        model: &DeviceModel,
        aliases: &Aliases,
        name: &str,
        update: UpdateType,
        commands: Vec<TimedCommand>,
    ) -> Result<Request, UnknownTarget> {
        let mut request = Request::default();
        match aliases.get(name) {
            Some(members) => {
                for &actuator in members.iter().flatten() {
                    request.push_clamped(model, actuator, update, commands.clone());
                }
            }
            None => request.push_clamped(model, target_actuator(model, name)?, update, commands),
        }
        Ok(request)
    }

    /// NAOqi's `setAlias`: one command list per member of an alias ([`Aliases::get`]), in
    /// order, each taken as a client's ([`Request::push_clamped`]); the lists of members
    /// that name no actuator are left out. The caller gives one list per member.
    pub fn for_members(
        model: &DeviceModel,
        members: &[Option<usize>],
        update: UpdateType,
        lists: Vec<Vec<TimedCommand>>,
    ) -> Request {
        debug_assert_eq!(members.len(), lists.len(), "one command list per alias member");
        let mut request = Request::default();
        for (member, commands) in members.iter().zip(lists) {
            if let Some(actuator) = *member {
                request.push_clamped(model, actuator, update, commands);
            }
        }
        request
    }

    /// A client's commands for one actuator: values clamped to the device's range, then as
    /// [`Request::push`] takes them. An actuator whose every command was NaN is left out and
    /// keeps its buffer (an empty list is kept: with `ClearAll` it empties the buffer).
    fn push_clamped(
        &mut self,
        model: &DeviceModel,
        actuator: usize,
        update: UpdateType,
        mut commands: Vec<TimedCommand>,
    ) {
        let had_commands = !commands.is_empty();
        let spec = &model.actuators[actuator];
        for command in &mut commands {
            if !command.value.is_nan() {
                command.value = spec.clamp(command.value);
            }
        }
        normalize(&mut commands);
        if !(had_commands && commands.is_empty()) {
            self.groups.push(ActuatorCommands { actuator, update, commands });
        }
    }
}

/// The actuator `set` names, or why it names none.
fn target_actuator(model: &DeviceModel, name: &str) -> Result<usize, UnknownTarget> {
    match model.actuator(name) {
        Some(index) => Ok(index),
        None if model.sensor(name).is_some() => Err(UnknownTarget::Sensor(name.to_owned())),
        None => Err(UnknownTarget::Unknown(name.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use naobroker_robot::device::RobotDescription;

    const RED: &str = "ChestBoard/Led/Red/Actuator/Value";

    fn model() -> DeviceModel {
        DeviceModel::new(RobotDescription::nao_v6()).unwrap()
    }

    fn command(value: f64, time: i32) -> TimedCommand {
        TimedCommand { time, value }
    }

    #[test]
    fn nan_commands_are_left_out_and_all_nan_keeps_the_buffer() {
        let (model, aliases) = (model(), Aliases::default());
        let yaw = "HeadYaw/Position/Actuator/Value";
        let nan = Request::set(&model, &aliases, yaw, UpdateType::ClearAll, vec![command(f64::NAN, 10)]);
        assert!(nan.unwrap().groups().is_empty());
        let empty = Request::set(&model, &aliases, yaw, UpdateType::ClearAll, vec![]).unwrap();
        assert_eq!(empty.groups().len(), 1, "an empty ClearAll still clears");
        let some = vec![command(f64::NAN, 10), command(0.1, 20)];
        let request = Request::set(&model, &aliases, yaw, UpdateType::Merge, some).unwrap();
        assert_eq!(request.groups()[0].commands, [command(0.1, 20)]);
    }

    #[test]
    fn a_cleared_request_fills_its_groups_again_in_the_same_storage() {
        let mut request = Request::with_capacity(2);
        request.push_command(3, UpdateType::ClearAll, TimedCommand { time: 10, value: 0.5 });
        request.push_command(4, UpdateType::Merge, TimedCommand { time: 10, value: f64::NAN });
        assert_eq!(request.groups()[0].commands, [TimedCommand { time: 10, value: 0.5 }]);
        assert!(request.groups()[1].commands.is_empty(), "a NaN is left out, as by push");
        let storage: Vec<*const TimedCommand> =
            request.groups().iter().map(|g| g.commands.as_ptr()).collect();
        request.clear();
        assert_eq!(request, Request::default());
        request.push_command(5, UpdateType::ClearAll, TimedCommand { time: 20, value: 1.0 });
        request.push_command(6, UpdateType::ClearAll, TimedCommand { time: 20, value: 1.0 });
        let reused: Vec<*const TimedCommand> = request.groups().iter().map(|g| g.commands.as_ptr()).collect();
        assert_eq!(reused, [storage[1], storage[0]]);
    }

    #[test]
    fn values_are_clamped_and_same_times_keep_the_later() {
        let (model, aliases) = (model(), Aliases::default());
        let commands = vec![command(3.0, 20), command(0.2, 10), command(0.7, 10)];
        let request = Request::set(&model, &aliases, RED, UpdateType::Merge, commands).unwrap();
        assert_eq!(request.groups()[0].commands, [command(0.7, 10), command(1.0, 20)]);
    }

    #[test]
    fn an_alias_gives_each_member_its_list_and_skips_unknown_ones() {
        let model = model();
        let mut aliases = Aliases::default();
        let blue = "ChestBoard/Led/Blue/Actuator/Value";
        aliases.create(&model, "Chest", &[RED, "Nope", blue]).unwrap();
        let same =
            Request::set(&model, &aliases, "Chest", UpdateType::Merge, vec![command(0.5, 10)]).unwrap();
        let actuators: Vec<usize> = same.groups().iter().map(|group| group.actuator).collect();
        assert_eq!(actuators, [model.actuator(RED).unwrap(), model.actuator(blue).unwrap()]);
        let lists = vec![vec![command(0.1, 10)], vec![command(0.2, 10)], vec![command(0.3, 10)]];
        let members = aliases.get("Chest").unwrap();
        let each = Request::for_members(&model, members, UpdateType::ClearAll, lists);
        let values: Vec<f64> = each.groups().iter().map(|group| group.commands[0].value).collect();
        assert_eq!(values, [0.1, 0.3], "the unknown member's list is left out");
    }

    #[test]
    fn set_names_an_actuator_or_an_alias() {
        let (model, aliases) = (model(), Aliases::default());
        let set = |name: &str| Request::set(&model, &aliases, name, UpdateType::Merge, vec![]).unwrap_err();
        let sensor = "HeadYaw/Position/Sensor/Value";
        assert_eq!(set(sensor), UnknownTarget::Sensor(sensor.into()));
        assert_eq!(set("Nope").to_string(), "unknown actuator or alias \"Nope\"");
        let error = UpdateType::parse("Replace").unwrap_err().to_string();
        assert!(error.starts_with("unknown update type \"Replace\""), "{error}");
    }
}
