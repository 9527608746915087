//! `set`, `setAlias` and `createAlias` as NAOqi sends them, read into the DCM's requests
//! and alias definitions.

use naobroker_dcm::core::{
    AliasError, Aliases, Request, TimedCommand, UnknownTarget, UnknownUpdateType, UpdateType,
};
use naobroker_framework::Value;
use naobroker_robot::device::DeviceModel;

use super::{array, number, string, time, ArgumentError, CommandAt, Field};

/// Why a `set`, `setAlias` or `createAlias` request was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error(transparent)]
    Argument(#[from] ArgumentError),
    #[error(transparent)]
    UpdateType(#[from] UnknownUpdateType),
    #[error(transparent)]
    Target(#[from] UnknownTarget),
    #[error(transparent)]
    Alias(#[from] AliasError),
    #[error("the set request must be [name, update type, [[value, time], ...]], got {0} elements")]
    SetShape(usize),
    #[error("the setAlias request must be [alias, update type, format, ...]")]
    SetAliasShape,
    #[error(
        "a time-mixed setAlias request must be [alias, update, \"time-mixed\", [[[value, time], ...] per \
         actuator]]"
    )]
    TimeMixedShape,
    #[error(
        "a time-separate setAlias request must be [alias, update, \"time-separate\", importance, [times], \
         [[values] per actuator]]"
    )]
    TimeSeparateShape,
    #[error("the createAlias request must be [alias, [actuator, ...]], got {0} elements")]
    CreateAliasShape(usize),
    #[error("unknown alias {0:?}")]
    UnknownAlias(String),
    #[error("unknown setAlias format {0:?} (expected time-mixed or time-separate)")]
    UnknownFormat(String),
    #[error("alias {alias} has {members} actuators but the request has {lists} command lists")]
    CommandListCount { alias: String, members: usize, lists: usize },
    #[error("alias {alias} has {members} actuators but the request has {lists} value lists")]
    ValueListCount { alias: String, members: usize, lists: usize },
    #[error("value list {list} has {values} values but there are {times} times")]
    ValueCount { list: usize, values: usize, times: usize },
}

/// Reads `set` and `setAlias` into [`Request`]s for this robot and these aliases.
pub struct RequestParser<'a> {
    pub model: &'a DeviceModel,
    pub aliases: &'a Aliases,
}

impl RequestParser<'_> {
    /// `set([name, update, [[value, time(, importance)], ...]])`.
    pub fn set(&self, request: &Value) -> Result<Request, RequestError> {
        let items = array(request, Field::Named("the set request"))?;
        let [name, update, commands] = items else { return Err(RequestError::SetShape(items.len())) };
        let name = string(name, Field::Named("the actuator or alias name"))?;
        let update = update_type(update)?;
        let commands = timed_commands(commands, None)?;
        Ok(Request::set(self.model, self.aliases, name, update, commands)?)
    }

    /// `setAlias` in the time-mixed or time-separate format.
    pub fn set_alias(&self, request: &Value) -> Result<Request, RequestError> {
        let items = array(request, Field::Named("the setAlias request"))?;
        let [name, update, format, rest @ ..] = items else { return Err(RequestError::SetAliasShape) };
        if rest.is_empty() {
            return Err(RequestError::SetAliasShape);
        }
        let name = string(name, Field::Named("the alias name"))?;
        let update = update_type(update)?;
        let format = string(format, Field::Named("the format"))?;
        let members = self.aliases.get(name).ok_or_else(|| RequestError::UnknownAlias(name.to_owned()))?;
        let lists = match (format, rest) {
            ("time-mixed", [lists]) => time_mixed(name, members.len(), lists)?,
            ("time-mixed", _) => return Err(RequestError::TimeMixedShape),
            ("time-separate", [_importance, times, lists]) => {
                time_separate(name, members.len(), times, lists)?
            }
            ("time-separate", _) => return Err(RequestError::TimeSeparateShape),
            (other, _) => return Err(RequestError::UnknownFormat(other.to_owned())),
        };
        Ok(Request::for_members(self.model, members, update, lists))
    }
}

fn update_type(value: &Value) -> Result<UpdateType, RequestError> {
    Ok(UpdateType::parse(string(value, Field::Named("the update type"))?)?)
}

/// `[[value, time(, importance)], ...]`: the commands of `set` (`list` `None`) or of a
/// time-mixed `setAlias`'s list number `list`.
fn timed_commands(value: &Value, list: Option<usize>) -> Result<Vec<TimedCommand>, ArgumentError> {
    let field = list.map_or(Field::Named("the command list"), Field::CommandList);
    array(value, field)?
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let at = CommandAt { list, command: index + 1 };
            match array(item, Field::Command(at))? {
                [value, time_value] | [value, time_value, _] => Ok(TimedCommand {
                    value: number(value, Field::CommandValue(at))?,
                    time: time(time_value, Field::CommandTime(at))?,
                }),
                _ => Err(ArgumentError::NotACommand { field: Field::Command(at) }),
            }
        })
        .collect()
}

/// `[[[value, time], ...] per actuator]`.
fn time_mixed(alias: &str, members: usize, lists: &Value) -> Result<Vec<Vec<TimedCommand>>, RequestError> {
    let lists = array(lists, Field::Named("the per-actuator command lists"))?;
    if lists.len() != members {
        let (alias, lists) = (alias.to_owned(), lists.len());
        return Err(RequestError::CommandListCount { alias, members, lists });
    }
    let commands = lists.iter().enumerate().map(|(index, list)| timed_commands(list, Some(index + 1)));
    Ok(commands.collect::<Result<_, _>>()?)
}

/// `[times]` and `[[values] per actuator]`: each actuator's values at the same times.
fn time_separate(
    alias: &str,
    members: usize,
    times: &Value,
    lists: &Value,
) -> Result<Vec<Vec<TimedCommand>>, RequestError> {
    let times = array(times, Field::Named("the time list"))?
        .iter()
        .enumerate()
        .map(|(index, value)| time(value, Field::Time(index + 1)))
        .collect::<Result<Vec<_>, _>>()?;
    let lists = array(lists, Field::Named("the per-actuator value lists"))?;
    if lists.len() != members {
        let (alias, lists) = (alias.to_owned(), lists.len());
        return Err(RequestError::ValueListCount { alias, members, lists });
    }
    lists
        .iter()
        .enumerate()
        .map(|(index, list)| {
            let list_number = index + 1;
            let values = array(list, Field::ValueList(list_number))?;
            if values.len() != times.len() {
                let (values, times) = (values.len(), times.len());
                return Err(RequestError::ValueCount { list: list_number, values, times });
            }
            let commands = values.iter().zip(&times).enumerate().map(|(index, (value, &time))| {
                let field = Field::ListValue { list: list_number, value: index + 1 };
                Ok(TimedCommand { time, value: number(value, field)? })
            });
            commands.collect::<Result<_, ArgumentError>>().map_err(RequestError::from)
        })
        .collect()
}

/// `createAlias([alias, [actuator, ...]])`: defines the alias and answers the input with
/// the names this robot lacks replaced by "".
pub fn create_alias(
    aliases: &mut Aliases,
    model: &DeviceModel,
    request: &Value,
) -> Result<Value, RequestError> {
    let items = array(request, Field::Named("the createAlias request"))?;
    let [name, members] = items else { return Err(RequestError::CreateAliasShape(items.len())) };
    let name = string(name, Field::Named("the alias name"))?;
    let members = array(members, Field::Named("the alias member list"))?
        .iter()
        .enumerate()
        .map(|(index, member)| string(member, Field::AliasMember(index + 1)))
        .collect::<Result<Vec<_>, _>>()?;
    let resolved = aliases.create(model, name, &members)?;
    let answer = members.iter().zip(resolved).map(|(&member, actuator)| match actuator {
        Some(_) => Value::from(member),
        None => Value::from(""),
    });
    Ok(Value::Array(vec![name.into(), Value::Array(answer.collect())]))
}

#[cfg(test)]
mod tests;
