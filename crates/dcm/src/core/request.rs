//! Validation of `set` and `setAlias` requests into per-actuator command lists.

use naobroker_framework::Value;

use super::{Aliases, TimedCommand};
use crate::device::DeviceModel;
use crate::time::{is_before, DcmTime};

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
    pub fn parse(name: &str) -> Result<UpdateType, String> {
        match name {
            "Merge" => Ok(UpdateType::Merge),
            "ClearAll" => Ok(UpdateType::ClearAll),
            "ClearAfter" => Ok(UpdateType::ClearAfter),
            "ClearBefore" => Ok(UpdateType::ClearBefore),
            other => Err(format!(
                "unknown update type {other:?} (expected Merge, ClearAll, ClearAfter or ClearBefore)"
            )),
        }
    }
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

pub(super) fn array<'a>(value: &'a Value, what: &str) -> Result<&'a [Value], String> {
    match value {
        Value::Array(items) => Ok(items),
        other => Err(format!("{what} must be an array, got {other}")),
    }
}

pub(super) fn string<'a>(value: &'a Value, what: &str) -> Result<&'a str, String> {
    value.as_str().ok_or_else(|| format!("{what} must be a string, got {value}"))
}

/// A float from any MessagePack number; `what` names it in the error.
pub fn number(value: &Value, what: &str) -> Result<f64, String> {
    match value {
        Value::F64(x) => Ok(*x),
        Value::F32(x) => Ok(f64::from(*x)),
        Value::Integer(i) => i.as_f64().ok_or_else(|| format!("{what} is out of range")),
        other => Err(format!("{what} must be a number, got {other}")),
    }
}

/// DCM times are int32 and roll over: a client that adds an offset to a time near
/// the roll-over without wrapping (Python does) still means the wrapped time.
fn time(value: &Value, what: &str) -> Result<DcmTime, String> {
    match value {
        Value::Integer(i) => {
            i.as_i64().map(|t| t as DcmTime).ok_or_else(|| format!("{what} is out of range"))
        }
        Value::F64(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => Ok(*x as i64 as DcmTime),
        other => Err(format!("{what} must be an integer DCM time in ms, got {other}")),
    }
}

/// Turns `set` and `setAlias` values into [`Request`]s.
pub struct RequestParser<'a> {
    pub model: &'a DeviceModel,
    pub aliases: &'a Aliases,
}

impl RequestParser<'_> {
    fn actuator(&self, name: &str) -> Result<usize, String> {
        match self.model.actuator(name) {
            Some(index) => Ok(index),
            None if self.model.sensor(name).is_some() => {
                Err(format!("{name} is a sensor, not an actuator: it cannot take commands"))
            }
            None => Err(format!("unknown actuator or alias {name:?}")),
        }
    }

    fn group(
        &self,
        actuator: usize,
        update: UpdateType,
        mut commands: Vec<TimedCommand>,
    ) -> ActuatorCommands {
        let spec = &self.model.actuators[actuator];
        for command in &mut commands {
            if !command.value.is_nan() {
                command.value = spec.clamp(command.value);
            }
        }
        normalize(&mut commands);
        ActuatorCommands { actuator, update, commands }
    }

    fn timed_commands(&self, list: &Value, what: &str) -> Result<Vec<TimedCommand>, String> {
        let items = array(list, what)?;
        items
            .iter()
            .enumerate()
            .map(|(position, item)| {
                let what = format!("{what}, command {}", position + 1);
                let fields = array(item, &what)?;
                if !(2..=3).contains(&fields.len()) {
                    return Err(format!("{what} must be [value, time] or [value, time, importance]"));
                }
                Ok(TimedCommand {
                    value: number(&fields[0], &format!("{what}: the value"))?,
                    time: time(&fields[1], &format!("{what}: the time"))?,
                })
            })
            .collect()
    }

    /// Skip actuators whose every command was NaN: they keep their buffer.
    fn finish(groups: Vec<ActuatorCommands>, had_commands: &[bool]) -> Request {
        Request {
            groups: groups
                .into_iter()
                .zip(had_commands)
                .filter(|(group, had)| !(**had && group.commands.is_empty()))
                .map(|(group, _)| group)
                .collect(),
            spare: Vec::new(),
        }
    }

    /// `set([name, update, [[value, time(, importance)], ...]])`.
    pub fn set(&self, request: &Value) -> Result<Request, String> {
        let items = array(request, "the set request")?;
        if items.len() != 3 {
            return Err(format!(
                "the set request must be [name, update type, [[value, time], ...]], got {} elements",
                items.len()
            ));
        }
        let name = string(&items[0], "the actuator or alias name")?;
        let update = UpdateType::parse(string(&items[1], "the update type")?)?;
        let commands = self.timed_commands(&items[2], "the command list")?;
        let had = !commands.is_empty();
        let targets: Vec<usize> = match self.aliases.get(name) {
            Some(members) => members.iter().flatten().copied().collect(),
            None => vec![self.actuator(name)?],
        };
        let groups: Vec<ActuatorCommands> =
            targets.iter().map(|&a| self.group(a, update, commands.clone())).collect();
        let had = vec![had; groups.len()];
        Ok(Self::finish(groups, &had))
    }

    /// `setAlias` in the time-mixed or time-separate format.
    pub fn set_alias(&self, request: &Value) -> Result<Request, String> {
        let items = array(request, "the setAlias request")?;
        if items.len() < 4 {
            return Err("the setAlias request must be [alias, update type, format, ...]".into());
        }
        let name = string(&items[0], "the alias name")?;
        let update = UpdateType::parse(string(&items[1], "the update type")?)?;
        let format = string(&items[2], "the format")?;
        let members = self.aliases.get(name).ok_or_else(|| format!("unknown alias {name:?}"))?;
        let per_actuator: Vec<Vec<TimedCommand>> = match format {
            "time-mixed" => {
                if items.len() != 4 {
                    return Err("a time-mixed setAlias request must be [alias, update, \"time-mixed\", [[[value, time], ...] per actuator]]".into());
                }
                let lists = array(&items[3], "the per-actuator command lists")?;
                if lists.len() != members.len() {
                    return Err(format!(
                        "alias {name} has {} actuators but the request has {} command lists",
                        members.len(),
                        lists.len()
                    ));
                }
                lists
                    .iter()
                    .enumerate()
                    .map(|(i, list)| self.timed_commands(list, &format!("command list {}", i + 1)))
                    .collect::<Result<_, _>>()?
            }
            "time-separate" => {
                if items.len() != 6 {
                    return Err("a time-separate setAlias request must be [alias, update, \"time-separate\", importance, [times], [[values] per actuator]]".into());
                }
                let times = array(&items[4], "the time list")?
                    .iter()
                    .enumerate()
                    .map(|(i, t)| time(t, &format!("time {}", i + 1)))
                    .collect::<Result<Vec<_>, _>>()?;
                let lists = array(&items[5], "the per-actuator value lists")?;
                if lists.len() != members.len() {
                    return Err(format!(
                        "alias {name} has {} actuators but the request has {} value lists",
                        members.len(),
                        lists.len()
                    ));
                }
                lists
                    .iter()
                    .enumerate()
                    .map(|(i, list)| {
                        let values = array(list, &format!("value list {}", i + 1))?;
                        if values.len() != times.len() {
                            return Err(format!(
                                "value list {} has {} values but there are {} times",
                                i + 1,
                                values.len(),
                                times.len()
                            ));
                        }
                        values
                            .iter()
                            .zip(&times)
                            .enumerate()
                            .map(|(j, (v, &t))| {
                                Ok(TimedCommand {
                                    time: t,
                                    value: number(v, &format!("value list {}, value {}", i + 1, j + 1))?,
                                })
                            })
                            .collect()
                    })
                    .collect::<Result<_, String>>()?
            }
            other => {
                return Err(format!(
                    "unknown setAlias format {other:?} (expected time-mixed or time-separate)"
                ))
            }
        };
        let mut groups = Vec::with_capacity(members.len());
        let mut had = Vec::with_capacity(members.len());
        for (member, commands) in members.iter().zip(per_actuator) {
            if let Some(actuator) = member {
                had.push(!commands.is_empty());
                groups.push(self.group(*actuator, update, commands));
            }
        }
        Ok(Self::finish(groups, &had))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::RobotDescription;

    fn model() -> DeviceModel {
        DeviceModel::new(RobotDescription::nao_v6()).unwrap()
    }

    #[test]
    fn nan_commands_are_left_out_and_all_nan_keeps_the_buffer() {
        let model = model();
        let aliases = Aliases::default();
        let parser = RequestParser { model: &model, aliases: &aliases };
        let request = Value::Array(vec![
            "HeadYaw/Position/Actuator/Value".into(),
            "ClearAll".into(),
            Value::Array(vec![Value::Array(vec![Value::F64(f64::NAN), 10.into()])]),
        ]);
        assert!(parser.set(&request).unwrap().groups().is_empty());
    }

    fn arr(items: Vec<Value>) -> Value {
        Value::Array(items)
    }

    fn cmd(value: f64, time: i64) -> Value {
        arr(vec![Value::F64(value), time.into()])
    }

    #[test]
    fn bad_requests_name_the_problem() {
        let model = DeviceModel::new(RobotDescription::nao_v6()).unwrap();
        let mut aliases = Aliases::default();
        let created = aliases
            .create(
                &model,
                &arr(vec![
                    "Chest".into(),
                    arr(vec!["ChestBoard/Led/Red/Actuator/Value".into(), "Nope".into()]),
                ]),
            )
            .unwrap();
        assert_eq!(
            created,
            arr(vec!["Chest".into(), arr(vec!["ChestBoard/Led/Red/Actuator/Value".into(), "".into()])])
        );
        let clash = aliases.create(&model, &arr(vec!["HeadYaw/Position/Actuator/Value".into(), arr(vec![])]));
        assert!(clash.unwrap_err().contains("named like a device"));
        let parser = RequestParser { model: &model, aliases: &aliases };
        let set = |name: &str, update: &str, commands: Value| {
            parser.set(&arr(vec![name.into(), update.into(), commands]))
        };
        assert!(set("Nope", "Merge", arr(vec![cmd(1.0, 10)]))
            .unwrap_err()
            .contains("unknown actuator or alias \"Nope\""));
        assert!(set("HeadYaw/Position/Sensor/Value", "Merge", arr(vec![cmd(1.0, 10)]))
            .unwrap_err()
            .contains("is a sensor"));
        assert!(set("HeadYaw/Position/Actuator/Value", "Replace", arr(vec![]))
            .unwrap_err()
            .contains("unknown update type"));
        assert!(set("HeadYaw/Position/Actuator/Value", "Merge", arr(vec![arr(vec!["x".into(), 10.into()])]))
            .unwrap_err()
            .contains("must be a number"));
        assert!(set("HeadYaw/Position/Actuator/Value", "Merge", cmd(1.0, 10))
            .unwrap_err()
            .contains("command 1 must be"));
        let separate = |times: Vec<Value>, lists: Vec<Value>| {
            parser.set_alias(&arr(vec![
                "Chest".into(),
                "Merge".into(),
                "time-separate".into(),
                0.into(),
                arr(times),
                arr(lists),
            ]))
        };
        assert!(separate(vec![10.into()], vec![arr(vec![1.into()])])
            .unwrap_err()
            .contains("has 2 actuators"));
        assert!(separate(vec![10.into()], vec![arr(vec![1.into()]), arr(vec![])])
            .unwrap_err()
            .contains("value list 2 has 0 values"));
        let ok = separate(
            vec![10.into(), 20.into()],
            vec![arr(vec![1.into(), 0.into()]), arr(vec![1.into(), 1.into()])],
        )
        .unwrap();
        assert_eq!(ok.groups().len(), 1, "the unknown member is skipped");
        let format =
            parser.set_alias(&arr(vec!["Chest".into(), "Merge".into(), "time-sorted".into(), arr(vec![])]));
        assert!(format.unwrap_err().contains("unknown setAlias format"));
        assert!(parser
            .set_alias(&arr(vec!["Nope".into(), "Merge".into(), "time-mixed".into(), arr(vec![])]))
            .unwrap_err()
            .contains("unknown alias"));
    }

    #[test]
    fn a_cleared_request_fills_its_groups_again_in_the_same_storage() {
        let mut request = Request::with_capacity(2);
        request.push_command(3, UpdateType::ClearAll, TimedCommand { time: 10, value: 0.5 });
        request.push_command(4, UpdateType::Merge, TimedCommand { time: 10, value: f64::NAN });
        assert_eq!(request.groups()[0].commands, [TimedCommand { time: 10, value: 0.5 }]);
        assert!(request.groups()[1].commands.is_empty(), "a NaN is left out, as by push");
        let storage: Vec<*const TimedCommand> = request.groups().iter().map(|g| g.commands.as_ptr()).collect();
        request.clear();
        assert_eq!(request, Request::default());
        request.push_command(5, UpdateType::ClearAll, TimedCommand { time: 20, value: 1.0 });
        request.push_command(6, UpdateType::ClearAll, TimedCommand { time: 20, value: 1.0 });
        let reused: Vec<*const TimedCommand> = request.groups().iter().map(|g| g.commands.as_ptr()).collect();
        assert_eq!(reused, [storage[1], storage[0]]);
    }

    #[test]
    fn values_are_clamped_and_same_times_keep_the_later() {
        let model = DeviceModel::new(RobotDescription::nao_v6()).unwrap();
        let aliases = Aliases::default();
        let parser = RequestParser { model: &model, aliases: &aliases };
        let request = parser
            .set(&arr(vec![
                "ChestBoard/Led/Red/Actuator/Value".into(),
                "Merge".into(),
                arr(vec![cmd(3.0, 20), cmd(0.2, 10), cmd(0.7, 10)]),
            ]))
            .unwrap();
        assert_eq!(
            request.groups()[0].commands,
            vec![TimedCommand { time: 10, value: 0.7 }, TimedCommand { time: 20, value: 1.0 }]
        );
    }
}
