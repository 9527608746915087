//! How a simulator runs: where it listens, its cadence, the robot it simulates.

use std::path::PathBuf;
use std::time::Duration;

use naobroker_lola::names::BatteryOrder;
use naobroker_lola::{CYCLE_US, DEFAULT_SOCKET};
use naobroker_physics::World;
use naobroker_robot::device::RobotDescription;

/// One LoLA cycle, 12 ms.
pub const CYCLE: Duration = Duration::from_micros(CYCLE_US);

/// When sensor maps go out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cadence {
    /// Every 12 ms on absolute deadlines, whether or not the last map was answered (as a
    /// real LoLA is believed to do: lola.md B.1 lists it as unconfirmed).
    RealTime,
    /// Every 12 ms, but a map waits for the answer to the one before, at most `timeout` after
    /// that one was sent: the other possible behaviour of a real LoLA.
    RealTimeWaitingForAnswers { timeout: Duration },
    /// One map per [`crate::LolaSim::step`], none otherwise: tests decide every cycle.
    Stepped,
}

/// What a simulator is started with.
#[derive(Debug, Clone)]
pub struct Options {
    /// The Unix stream socket to listen on (default `/tmp/robocup`).
    pub socket: PathBuf,
    pub cadence: Cadence,
    /// The robot simulated: its 25 LoLA joints' limits and speeds, and its sensors' resting
    /// values (`initial`), looked up by the NAOqi names of `naobroker_lola::names`.
    pub robot: RobotDescription,
    /// The order of the four `Battery` values the simulated robot sends.
    pub battery_order: BatteryOrder,
    /// An answer this long after the sensor map it answers is counted late.
    pub late_after: Duration,
    /// How many answers [`crate::LolaSim::take_answers`] keeps (the oldest are dropped).
    pub recorded_answers: usize,
    /// A client that does not take a sensor map within this time is disconnected.
    pub write_timeout: Duration,
    /// How many answer latencies [`crate::LolaSim::take_latencies`] keeps (the oldest are
    /// dropped); 0 (the default) records none. Room for them is reserved at start.
    pub recorded_latencies: usize,
    /// `SCHED_FIFO` priority of the simulator's threads (cycle, reader, acceptor; `None`, the
    /// default: the normal scheduler), so that a benchmark measures the client rather than the
    /// robot's side; refused without root or CAP_SYS_NICE, said in the log, and the simulator
    /// runs on. They share one lock with the [`crate::LolaSim`] methods: a caller of those on
    /// the normal scheduler, preempted while holding it, stalls them (call them from a thread
    /// at the same priority while measuring).
    pub priority: Option<u8>,
    /// The physical robot (MuJoCo, `naobroker-physics`) in this world; `None` (the default):
    /// the kinematic body, joints only. The robot description needs `[kinematics]` and
    /// `[physics]` for it (the shipped NAO V6 has both).
    pub physics: Option<World>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            socket: PathBuf::from(DEFAULT_SOCKET),
            cadence: Cadence::RealTime,
            robot: RobotDescription::nao_v6(),
            battery_order: BatteryOrder::default(),
            late_after: CYCLE,
            recorded_answers: 1024,
            write_timeout: Duration::from_secs(1),
            recorded_latencies: 0,
            priority: None,
            physics: None,
        }
    }
}

impl Options {
    /// The defaults on another socket path.
    pub fn at(socket: impl Into<PathBuf>) -> Options {
        Options { socket: socket.into(), ..Options::default() }
    }

    pub fn stepped(mut self) -> Options {
        self.cadence = Cadence::Stepped;
        self
    }

    /// The physical robot in `world`.
    pub fn physical(mut self, world: World) -> Options {
        self.physics = Some(world);
        self
    }
}
