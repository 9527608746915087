//! The simulator's controls as text, one command a line: what the `naobroker-lolasim`
//! binary reads on its standard input (`stall 500`, `set Touch[1]=1`, `stats`).

use std::time::Duration;

use crate::error::SimError;
use crate::sim::LolaSim;
use crate::state::Stats;

/// One control command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `set KEY[INDEX]=VALUE` or `set KEY=V1,V2,...`: a scripted sensor value.
    Set(String),
    /// `stall MS`: no sensor map for MS milliseconds.
    Stall(Duration),
    /// `late MS COUNT`: the next COUNT sensor maps each MS milliseconds late.
    Late(Duration, u32),
    /// `restart MS`: close the connection and the socket, listen again MS milliseconds later.
    Restart(Duration),
    /// `stats`: the counts so far.
    Stats,
}

/// A line that is no command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?}: commands are set KEY=VALUE, stall MS, late MS COUNT, restart MS, stats")]
pub struct UnknownCommand(pub String);

/// The help line of the commands.
pub const COMMANDS: &str =
    "set KEY[INDEX]=VALUE | set KEY=V1,V2,... | stall MS | late MS COUNT | restart MS | stats";

impl Command {
    pub fn parse(line: &str) -> Result<Command, UnknownCommand> {
        let unknown = || UnknownCommand(line.to_owned());
        let words: Vec<&str> = line.split_whitespace().collect();
        let millis = |text: &str| text.parse().map(Duration::from_millis).map_err(|_| unknown());
        match words.as_slice() {
            ["set", assignment] => Ok(Command::Set((*assignment).to_owned())),
            ["stall", ms] => Ok(Command::Stall(millis(ms)?)),
            ["late", ms, count] => Ok(Command::Late(millis(ms)?, count.parse().map_err(|_| unknown())?)),
            ["restart", ms] => Ok(Command::Restart(millis(ms)?)),
            ["stats"] => Ok(Command::Stats),
            _ => Err(unknown()),
        }
    }
}

impl LolaSim {
    /// Carry out `command`; the counts after it.
    pub fn apply(&self, command: &Command) -> Result<Stats, SimError> {
        match command {
            Command::Set(assignment) => self.assign(assignment)?,
            Command::Stall(duration) => self.stall(*duration),
            Command::Late(delay, count) => self.delay_maps(*delay, *count),
            Command::Restart(down) => self.restart(*down)?,
            Command::Stats => {}
        }
        Ok(self.stats())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_command_and_refuses_others() {
        assert_eq!(Command::parse("set Touch[1]=1"), Ok(Command::Set("Touch[1]=1".into())));
        assert_eq!(Command::parse(" stall 500 "), Ok(Command::Stall(Duration::from_millis(500))));
        assert_eq!(Command::parse("late 5 3"), Ok(Command::Late(Duration::from_millis(5), 3)));
        assert_eq!(Command::parse("restart 1000"), Ok(Command::Restart(Duration::from_secs(1))));
        assert_eq!(Command::parse("stats"), Ok(Command::Stats));
        for wrong in ["", "stall", "stall soon", "late 5", "jump 3", "set"] {
            assert_eq!(Command::parse(wrong), Err(UnknownCommand(wrong.into())));
        }
    }
}
