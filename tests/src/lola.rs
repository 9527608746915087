//! The real `naobroker` binary on `naobroker-lolasim` in the test's process, in its stepped
//! cadence: each step is one sensor map, one DCM cycle and one actuator map, and the test
//! decides every one. Steps wait for the cycle's results (DCM time, ALMotion's cycle), never
//! for time. Used by tests/tests/lola_*.rs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use naobroker_framework::blocking::Session;
use naobroker_framework::Value;
use naobroker_lolasim::{Answer, LolaSim, Options, World};

use crate::{scratch_dir, TestBroker};

/// How long any condition may take to hold: generous, a loaded machine is slow.
pub const DEADLINE: Duration = Duration::from_secs(30);
/// One LoLA cycle: DCM time advances this much per sensor map.
pub const CYCLE_MS: i64 = 12;
/// `[dcm.lola]` for tests that stall on purpose only: the commands go on as they are, and
/// the pauses between steps are no stall.
pub const HOLD_NO_STALL: &str = "on_link_loss = \"hold\"\nstall_ms = 3600000\n";

/// A fresh directory and the LoLA socket path in it.
pub fn socket_dir() -> (PathBuf, PathBuf) {
    let dir = scratch_dir("lola");
    let socket = dir.join("robocup");
    (dir, socket)
}

/// lolasim on `socket`, stepped.
pub fn stepped_sim(socket: &Path) -> LolaSim {
    LolaSim::start(Options::at(socket).stepped()).expect("lolasim starts")
}

/// The real broker as LoLA's client on `socket`: the robot's clock (`clock = "real"`: the
/// harness would add the manual one, which lola refuses), DCM time from 0, and `lola`
/// added to `[dcm.lola]`.
pub fn lola_broker(socket: &Path, lola: &str) -> TestBroker {
    TestBroker::start(&format!(
        "clock = \"real\"\nbackend = \"lola\"\nstart_time_ms = 0\n\n[dcm.lola]\nsocket = \"{}\"\n{lola}",
        socket.display()
    ))
}

/// Wait until `condition` holds; fail saying `what` after [`DEADLINE`].
pub fn wait_for(what: &str, mut condition: impl FnMut() -> bool) {
    let started = Instant::now();
    while !condition() {
        assert!(started.elapsed() < DEADLINE, "not reached within {DEADLINE:?}: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// `map[key]` of a MessagePack map.
pub fn entry<'a>(map: &'a Value, key: &str) -> &'a Value {
    let entries = map.as_map().unwrap_or_else(|| panic!("{map} is no map"));
    &entries
        .iter()
        .find(|(name, _)| name.as_str() == Some(key))
        .unwrap_or_else(|| panic!("no {key} in {map}"))
        .1
}

/// lolasim and the broker connected to it, a client session, and the maps stepped so far.
pub struct LolaBench {
    pub sim: LolaSim,
    pub broker: TestBroker,
    pub session: Session,
    maps: u64,
    dir: PathBuf,
}

impl LolaBench {
    /// lolasim first, then the broker with `lola` in its `[dcm.lola]`, connected.
    pub fn start(lola: &str) -> LolaBench {
        let (dir, socket) = socket_dir();
        let sim = stepped_sim(&socket);
        let broker = lola_broker(&socket, lola);
        LolaBench::connected(dir, sim, broker)
    }

    /// lolasim's physical robot in `world` (MuJoCo), then the broker with `lola` in its
    /// `[dcm.lola]`, connected.
    pub fn physical(world: World, lola: &str) -> LolaBench {
        let (dir, socket) = socket_dir();
        let sim =
            LolaSim::start(Options::at(&socket).stepped().physical(world)).expect("lolasim --physics starts");
        let broker = lola_broker(&socket, lola);
        LolaBench::connected(dir, sim, broker)
    }

    /// Once the broker is lolasim's client; `dir` is removed at the end.
    pub fn connected(dir: PathBuf, sim: LolaSim, broker: TestBroker) -> LolaBench {
        let session = Session::connect(&broker.url).expect("a session with the broker");
        sim.wait_for_client(DEADLINE).unwrap_or_else(|error| panic!("{error}: {}", broker.log()));
        LolaBench { sim, broker, session, maps: 0, dir }
    }

    /// Sensor maps sent so far, in every connection: the DCM cycles run.
    pub fn maps(&self) -> u64 {
        self.maps
    }

    /// One LoLA cycle: a sensor map, its answer. Returns once the DCM cycle has published
    /// (its DCM time shows) and ALMotion has run its cycle (every LoLA cycle): ALMotion is
    /// not in lockstep with a DCM the robot clocks, so the next step waits for it.
    pub fn step(&mut self) -> Answer {
        let answer = self.sim.step_and_answer(DEADLINE).unwrap_or_else(|error| {
            panic!("step {}: {error}: {}", self.maps + 1, self.broker.log());
        });
        self.maps += 1;
        let time = self.maps as i64 * CYCLE_MS;
        wait_for(&format!("DCM time {time} after {} sensor maps", self.maps), || self.time() == time);
        let motion = self.maps;
        wait_for(&format!("ALMotion's cycle {motion}"), || {
            let stats = self.call("ALMotion", "stats", vec![]);
            let count = |key: &str| entry(&stats, key).as_u64().unwrap();
            count("cycles") + count("skipped") >= motion
        });
        answer
    }

    /// `n` steps; the last answer.
    pub fn steps(&mut self, n: usize) -> Answer {
        (1..n).for_each(|_| {
            self.step();
        });
        self.step()
    }

    /// Post the blocking `ALMotion.method` (no arguments) and step until it is over; the
    /// steps it took.
    pub fn run_motion(&mut self, method: &str) -> usize {
        let task = self.session.post("ALMotion", method, vec![]).unwrap();
        let mut steps = 0;
        while self.call("ALMotion", "isRunning", vec![task.into()]) == Value::from(true) {
            assert!(steps < 1000, "{method} still runs after 1000 LoLA cycles");
            self.step();
            steps += 1;
        }
        steps
    }

    pub fn call(&self, module: &str, method: &str, args: Vec<Value>) -> Value {
        self.session.call(module, method, args).unwrap_or_else(|error| panic!("{module}.{method}: {error}"))
    }

    /// DCM time now.
    pub fn time(&self) -> i64 {
        self.call("DCM", "getTime", vec![0.into()]).as_i64().unwrap()
    }

    pub fn memory(&self, key: &str) -> Value {
        self.call("ALMemory", "getData", vec![key.into()])
    }

    /// A number from ALMemory.
    pub fn number(&self, key: &str) -> f64 {
        let value = self.memory(key);
        value.as_f64().unwrap_or_else(|| panic!("{key} = {value} is no number"))
    }

    /// `DCM.set([actuator, update, [[value, time], ...]])`.
    pub fn dcm_set(&self, actuator: &str, update: &str, commands: &[(f64, i64)]) {
        let commands = commands.iter().map(|&(value, time)| Value::Array(vec![value.into(), time.into()]));
        let request = Value::Array(vec![actuator.into(), update.into(), Value::Array(commands.collect())]);
        self.call("DCM", "set", vec![request]);
    }

    /// `DCM.stats`'s `link` map.
    pub fn link(&self) -> Value {
        entry(&self.call("DCM", "stats", vec![]), "link").clone()
    }
}

impl Drop for LolaBench {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
