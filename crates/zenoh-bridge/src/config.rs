//! `[zenoh]`: the session (Zenoh's own words: mode, listen, connect, scouting), the robot's
//! name in every key, what is published and which methods peers may call.

use std::path::PathBuf;

use serde::Deserialize;

use crate::bounds::{MAX_LISTED, MAX_RATE_HZ};
use crate::error::ZenohError;
use crate::exports::MethodPattern;
use crate::keys::is_plain_key;
use crate::ros2::Ros2Config;

/// `[zenoh]` (docs/team.md): off unless the section is there.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ZenohConfig {
    /// The robot's name, one chunk of every key (`naobroker/<robot>/...`); none: the host name.
    pub robot: Option<String>,
    pub mode: Mode,
    /// Zenoh endpoints to listen on (`tcp/127.0.0.1:7447`); none: Zenoh's default for the mode
    /// (a peer listens on every interface, on a port the system chooses).
    pub listen: Vec<String>,
    /// Zenoh endpoints (peers or a router) to connect to.
    pub connect: Vec<String>,
    /// Multicast scouting: find the lab's other peers and routers without addresses.
    pub scouting: bool,
    /// How often the real-time values are published, per second; none: each DCM cycle, the
    /// values that changed.
    pub rate_hz: Option<f64>,
    /// Events put on `naobroker/<robot>/event/<name>` as they are raised.
    pub events: Vec<String>,
    /// Methods every peer may call (`Module.method` or `Module.prefix*`): read-only by default.
    pub calls: Vec<String>,
    /// Methods that move the robot: callable only by `[zenoh.auth] movers`.
    pub moves: Vec<String>,
    /// `[zenoh.auth]`: every peer authenticates with a user and password.
    pub auth: Option<AuthConfig>,
    /// `[zenoh.ros2]`: what naoqi_driver2 publishes, for ROS 2 over rmw_zenoh (docs/ros2.md).
    pub ros2: Option<Ros2Config>,
}

/// Zenoh's `mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Talks to the other peers directly (and to clients).
    Peer,
    /// Talks through one router or peer (`connect`).
    Client,
}

/// `[zenoh.auth]` (docs/security.md).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthConfig {
    /// Zenoh's user-password dictionary, `user:password` a line: every peer of the team must
    /// present one of them; the broker presents the robot's name and its password.
    pub dictionary_file: PathBuf,
    /// Users (of the dictionary) who may call `moves`.
    #[serde(default)]
    pub movers: Vec<String>,
}

impl Default for ZenohConfig {
    fn default() -> Self {
        ZenohConfig {
            robot: None,
            mode: Mode::Peer,
            listen: Vec::new(),
            connect: Vec::new(),
            scouting: true,
            rate_hz: None,
            events: naobroker_memory::WATCHED_EVENTS.map(String::from).to_vec(),
            // NAOqi's getters read and never act.
            calls: ["ALMemory.get*", "ALMotion.get*", "ALRobotPosture.get*", "DCM.getTime"]
                .map(String::from)
                .to_vec(),
            moves: Vec::new(),
            auth: None,
            ros2: None,
        }
    }
}

/// `[zenoh]` checked: the robot's name and the method patterns.
#[derive(Clone)]
pub struct Checked {
    pub robot: String,
    pub calls: Vec<MethodPattern>,
    pub moves: Vec<MethodPattern>,
    /// The broker's own password (its user is the robot's name), with `[zenoh.auth]`.
    pub password: Option<String>,
}

/// The password stays out of logs.
impl std::fmt::Debug for Checked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checked")
            .field("robot", &self.robot)
            .field("calls", &self.calls)
            .field("moves", &self.moves)
            .field("password", &self.password.as_ref().map(|_| "(hidden)"))
            .finish()
    }
}

impl ZenohConfig {
    /// Every setting checked; the dictionary read.
    pub fn check(&self) -> Result<Checked, ZenohError> {
        let robot = match &self.robot {
            Some(robot) => robot.clone(),
            None => host_name()?,
        };
        if !is_robot_name(&robot) {
            return Err(ZenohError::BadRobot(robot));
        }
        for (what, list) in [("events", &self.events), ("calls", &self.calls), ("moves", &self.moves)] {
            if list.len() > MAX_LISTED {
                return Err(ZenohError::TooMany { what, count: list.len() });
            }
        }
        if let Some(event) = self.events.iter().find(|event| !is_plain_key(event)) {
            return Err(ZenohError::BadEvent(event.clone()));
        }
        if let Some(rate) = self.rate_hz {
            if !(rate > 0.0 && rate <= MAX_RATE_HZ) {
                return Err(ZenohError::Rate(rate));
            }
        }
        let patterns = |what, list: &[String]| {
            list.iter()
                .map(|text| {
                    MethodPattern::parse(text)
                        .ok_or_else(|| ZenohError::BadPattern { what, pattern: text.clone() })
                })
                .collect::<Result<Vec<_>, _>>()
        };
        let (calls, moves) = (patterns("calls", &self.calls)?, patterns("moves", &self.moves)?);
        if let Some((text, _)) = self.calls.iter().zip(&calls).find(|(_, pattern)| pattern.may_act()) {
            return Err(ZenohError::ActingCall(text.clone()));
        }
        let password = self.auth.as_ref().map(|auth| own_password(auth, &robot)).transpose()?;
        let has_movers = self.auth.as_ref().is_some_and(|auth| !auth.movers.is_empty());
        if let Some(ros2) = &self.ros2 {
            ros2.check()?;
        }
        let cmd_vel = self.ros2.as_ref().is_some_and(|ros2| ros2.cmd_vel);
        if (!moves.is_empty() || cmd_vel) && !has_movers {
            return Err(ZenohError::MovesWithoutAuth);
        }
        Ok(Checked { robot, calls, moves, password })
    }
}

/// A robot's name: one key chunk that needs no escaping anywhere (a host name's characters).
fn is_robot_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.'))
}

fn host_name() -> Result<String, ZenohError> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .map_err(|error| ZenohError::NoHostName(error.to_string()))
}

/// The robot's password in Zenoh's dictionary (`user:password` a line, blank lines skipped),
/// every line checked as Zenoh will, and every mover found in it.
fn own_password(auth: &AuthConfig, robot: &str) -> Result<String, ZenohError> {
    let path = || auth.dictionary_file.clone();
    let text = std::fs::read_to_string(&auth.dictionary_file)
        .map_err(|source| ZenohError::Dictionary { path: path(), source })?;
    let bad = |problem: String| ZenohError::BadDictionary { path: path(), problem };
    let mut users = Vec::new();
    let mut own_password = None;
    for (number, line) in text.lines().enumerate().map(|(index, line)| (index + 1, line.trim())) {
        if line.is_empty() {
            continue;
        }
        let (user, password) = line.split_once(':').ok_or_else(|| bad(format!("line {number}: no ':'")))?;
        let (user, password) = (user.trim(), password.trim());
        if user.is_empty() || password.is_empty() {
            return Err(bad(format!("line {number}: empty user or password")));
        }
        if user == robot {
            own_password = Some(password.to_owned());
        }
        users.push(user.to_owned());
    }
    if let Some(mover) = auth.movers.iter().find(|mover| !users.contains(mover)) {
        return Err(bad(format!("mover {mover:?} has no line")));
    }
    own_password.ok_or_else(|| bad(format!("no line for the robot {robot:?}, whose user the broker is")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(robot: &str) -> ZenohConfig {
        ZenohConfig { robot: Some(robot.into()), ..Default::default() }
    }

    #[test]
    fn the_robot_name_is_one_plain_chunk() {
        assert_eq!(named("nao-a").check().unwrap().robot, "nao-a");
        for bad in ["", "a/b", "*", "nao a", "x$", &"n".repeat(65)] {
            assert!(matches!(named(bad).check(), Err(ZenohError::BadRobot(_))), "{bad:?}");
        }
    }

    #[test]
    fn lists_patterns_and_rate_are_checked() {
        let many = ZenohConfig { events: vec!["E".into(); MAX_LISTED + 1], ..named("a") };
        assert!(matches!(many.check(), Err(ZenohError::TooMany { what: "events", count: 257 })));
        let wild = ZenohConfig { events: vec!["a/*".into()], ..named("a") };
        assert!(matches!(wild.check(), Err(ZenohError::BadEvent(_))));
        let pattern = ZenohConfig { calls: vec!["getData".into()], ..named("a") };
        assert!(matches!(pattern.check(), Err(ZenohError::BadPattern { what: "calls", .. })));
        let rate = ZenohConfig { rate_hz: Some(0.0), ..named("a") };
        assert!(matches!(rate.check(), Err(ZenohError::Rate(_))));
        assert!(ZenohConfig { rate_hz: Some(MAX_RATE_HZ), ..named("a") }.check().is_ok());
        let too_fast = ZenohConfig { rate_hz: Some(1000.1), ..named("a") };
        assert!(matches!(too_fast.check(), Err(ZenohError::Rate(_))));
    }

    #[test]
    fn cmd_vel_needs_movers_and_the_ros2_rate_is_checked() {
        let ros2 = |ros2: Ros2Config| ZenohConfig { ros2: Some(ros2), ..named("nao-a") }.check();
        assert!(ros2(Ros2Config::default()).is_ok());
        let cmd_vel = ros2(Ros2Config { cmd_vel: true, ..Default::default() });
        assert!(matches!(cmd_vel, Err(ZenohError::MovesWithoutAuth)));
        let rate = ros2(Ros2Config { rate_hz: 0.0, ..Default::default() });
        assert!(matches!(rate, Err(ZenohError::Rate(_))));
        let fastest = ros2(Ros2Config { rate_hz: MAX_RATE_HZ, ..Default::default() });
        assert!(fastest.is_ok());
        let too_fast = ros2(Ros2Config { rate_hz: 1000.1, ..Default::default() });
        assert!(matches!(too_fast, Err(ZenohError::Rate(_))));
        assert!(ros2(Ros2Config { domain_id: 232, ..Default::default() }).is_ok());
        let domain = ros2(Ros2Config { domain_id: 233, ..Default::default() });
        assert!(matches!(domain, Err(ZenohError::DomainId(233))));
    }

    #[test]
    fn calls_only_read_the_robot() {
        for acting in ["ALMotion.*", "ALMotion.moveTo", "ALMemory.*", "ALMemory.raiseEvent", "DCM.set*"] {
            let config = ZenohConfig { calls: vec![acting.into()], ..named("nao-a") };
            assert!(matches!(config.check(), Err(ZenohError::ActingCall(_))), "{acting}");
        }
        let readers = ["ALMemory.get*", "ALMotion.getAngles", "ALMotion.robotIsWakeUp", "Probe.sleep"];
        let config = ZenohConfig { calls: readers.map(String::from).to_vec(), ..named("nao-a") };
        assert!(config.check().is_ok());
        assert!(ZenohConfig::default()
            .calls
            .iter()
            .all(|call| !MethodPattern::parse(call).unwrap().may_act()));
    }

    #[test]
    fn moves_need_authenticated_movers() {
        let moves = ZenohConfig { moves: vec!["ALMotion.moveTo".into()], ..named("nao-a") };
        assert!(matches!(moves.check(), Err(ZenohError::MovesWithoutAuth)));
        let dir = std::env::temp_dir().join(format!("zenoh-dictionary-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("users.txt");
        std::fs::write(&file, "nao-a:secret-a\n\ncoach : secret-c\nviewer:secret-v\n").unwrap();
        let auth = |movers: &[&str]| AuthConfig {
            dictionary_file: file.clone(),
            movers: movers.iter().map(|mover| mover.to_string()).collect(),
        };
        let checked = ZenohConfig { auth: Some(auth(&["coach"])), ..moves.clone() }.check().unwrap();
        assert_eq!(checked.password.as_deref(), Some("secret-a"));
        let shown = format!("{checked:?}");
        assert!(!shown.contains("secret-a") && shown.contains("(hidden)"), "{shown}");
        assert!(matches!(
            ZenohConfig { auth: Some(auth(&[])), ..moves.clone() }.check(),
            Err(ZenohError::MovesWithoutAuth)
        ));
        let unknown = ZenohConfig { auth: Some(auth(&["nobody"])), ..moves.clone() }.check();
        assert!(unknown.unwrap_err().to_string().contains("mover \"nobody\" has no line"));
        let stranger = ZenohConfig { auth: Some(auth(&["coach"])), ..named("nao-z") }.check();
        assert!(stranger.unwrap_err().to_string().contains("no line for the robot \"nao-z\""));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
