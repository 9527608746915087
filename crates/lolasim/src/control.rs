//! The simulator's controls as text, one command a line: what the `naobroker-lolasim`
//! binary reads on its standard input (`stall 500`, `set Touch[1]=1`, `stats`, and for the
//! physical robot `truth` and `push 0 -40 0 100`).

use std::time::Duration;

use crate::error::SimError;
use crate::sim::LolaSim;
use crate::state::Stats;
use naobroker_physics::Truth;

/// One control command.
#[derive(Debug, Clone, PartialEq)]
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
    /// `truth`: the physical robot's ground truth, one line of JSON.
    Truth,
    /// `push FX FY FZ MS`: that force (N, world frame) on the torso for MS milliseconds.
    Push([f64; 3], Duration),
}

/// What a command answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Stats(Stats),
    Truth(Truth),
}

impl std::fmt::Display for Reply {
    /// The counts as `key=value` words; the truth as one JSON object
    /// (`{"time_s", "torso": [x, y, z, roll, pitch, yaw], "com": [x, y, z], "fallen"}`, and
    /// `"feet": [[x, y, yaw], [x, y, yaw]]` and `"ankle_heights": [left, right]` for a robot
    /// with NAO's legs).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reply::Stats(stats) => write!(f, "{stats}"),
            Reply::Truth(truth) => {
                let list =
                    |values: &[f64]| values.iter().map(|value| format!("{value:.6}")).collect::<Vec<_>>();
                write!(
                    f,
                    "{{\"time_s\": {:.3}, \"torso\": [{}], \"com\": [{}], \"fallen\": {}",
                    truth.time_s,
                    list(&truth.torso).join(", "),
                    list(&truth.com).join(", "),
                    truth.fallen
                )?;
                if let Some([left, right]) = truth.feet {
                    write!(f, ", \"feet\": [[{}], [{}]]", list(&left).join(", "), list(&right).join(", "))?;
                }
                if let Some(heights) = truth.ankle_heights {
                    write!(f, ", \"ankle_heights\": [{}]", list(&heights).join(", "))?;
                }
                write!(f, "}}")
            }
        }
    }
}

/// A line that is no command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?}: commands are set KEY=VALUE, stall MS, late MS COUNT, restart MS, stats, truth, push FX FY FZ MS"
)]
pub struct UnknownCommand(pub String);

/// The help line of the commands.
pub const COMMANDS: &str =
    "set KEY[INDEX]=VALUE | set KEY=V1,V2,... | stall MS | late MS COUNT | restart MS | \
     stats | truth | push FX FY FZ MS (--physics)";

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
            ["truth"] => Ok(Command::Truth),
            ["push", fx, fy, fz, ms] => {
                let newtons = |text: &str| {
                    text.parse::<f64>().ok().filter(|value| value.is_finite()).ok_or_else(unknown)
                };
                Ok(Command::Push([newtons(fx)?, newtons(fy)?, newtons(fz)?], millis(ms)?))
            }
            _ => Err(unknown()),
        }
    }
}

impl LolaSim {
    /// Carry out `command`; the counts after it, or the truth asked for.
    pub fn apply(&self, command: &Command) -> Result<Reply, SimError> {
        match command {
            Command::Set(assignment) => self.assign(assignment)?,
            Command::Stall(duration) => self.stall(*duration),
            Command::Late(delay, count) => self.delay_maps(*delay, *count),
            Command::Restart(down) => self.restart(*down)?,
            Command::Stats => {}
            Command::Truth => return self.truth().map(Reply::Truth),
            Command::Push(force, duration) => self.push(*force, *duration)?,
        }
        Ok(Reply::Stats(self.stats()))
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
        assert_eq!(Command::parse("truth"), Ok(Command::Truth));
        assert_eq!(
            Command::parse("push -40 0 0.5 100"),
            Ok(Command::Push([-40.0, 0.0, 0.5], Duration::from_millis(100)))
        );
        for wrong in
            ["", "stall", "stall soon", "late 5", "jump 3", "set", "push 1 2 3", "push 1 2 NaN 5", "truth 1"]
        {
            assert_eq!(Command::parse(wrong), Err(UnknownCommand(wrong.into())));
        }
    }
}
