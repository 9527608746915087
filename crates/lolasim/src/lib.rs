//! A simulated NAO V6 that speaks LoLA: it listens where LoLA listens (`/tmp/robocup` by
//! default), sends its one client an exact 896-byte sensor map every 12 ms, reads the
//! actuator maps it answers with, and drives the simulated body (`naobroker-simbody`, the
//! joint model naobroker's `sim` backend uses) from their `Position` and `Stiffness`. LEDs
//! and stiffness are echoed (the kept actuator map, the `Stiffness` sensor); the joints'
//! limits and speeds and the sensors' resting values come from a robot description
//! (`robots/nao-v6.toml` by default). Team frameworks can use the `naobroker-lolasim`
//! binary as a robot (docs/lolasim.md); tests use this library.
//!
//! What a test does with it:
//!
//! ```no_run
//! use std::time::Duration;
//! use naobroker_lolasim::{LolaSim, Options};
//!
//! let sim = LolaSim::start(Options::at("/tmp/my-test/robocup").stepped()).unwrap();
//! // ... start the LoLA client (the broker with `backend = "lola"`) on that path ...
//! sim.wait_for_client(Duration::from_secs(10)).unwrap();
//! sim.assign("Touch[1]=1").unwrap(); // the head's front pad, pressed
//! let answer = sim.step_and_answer(Duration::from_secs(10)).unwrap();
//! println!("HeadYaw target {} rad", answer.map.position[0]);
//! assert_eq!(sim.stats().missing, 0);
//! ```
//!
//! - Cadences ([`Cadence`]): `RealTime` sends every 12 ms on absolute deadlines whether or
//!   not the last map was answered; `RealTimeWaitingForAnswers` makes a map wait for the
//!   previous answer (at most a timeout); `Stepped` sends a map per [`LolaSim::step`] only,
//!   so a test decides every cycle and never depends on timing.
//! - Answers: every actuator map is attributed to the latest sensor map and counted
//!   ([`Stats`]: answers, missing, late, double, malformed, unknown keys); absent keys keep
//!   their last values; malformed bytes are dropped. [`LolaSim::wait_answer`],
//!   [`LolaSim::take_answers`], [`LolaSim::last_actuators`] show what the client said.
//! - Scripted sensors ([`ScriptedSensors`], [`LolaSim::script`], [`LolaSim::assign`]):
//!   touch, FSR, inertial unit, battery, sonar, joint status, `RobotConfig`.
//! - Faults: [`LolaSim::stall`] (no maps for a while), [`LolaSim::delay_maps`] (late maps),
//!   [`LolaSim::restart`] (connection and socket closed, listening again later).
//! - One client at a time, as LoLA: a second connection is accepted and closed at once
//!   (it reads end-of-file), counted in [`Stats::refused`].
//!
//! Waiting: every wait takes a timeout and returns as soon as its condition holds
//! ([`LolaSim::wait_until`]), so tests set generous ones and never sleep.
#![deny(unsafe_code)]

mod body;
pub mod control;
mod cycle;
mod error;
mod kinematic;
mod options;
mod physical;
mod script;
mod server;
mod sim;
mod state;

pub use error::SimError;
pub use naobroker_physics::{Truth, World};
pub use options::{Cadence, Options, CYCLE};
pub use script::{simulated_robot_config, ScriptError, ScriptedSensors};
pub use sim::LolaSim;
pub use state::{Answer, Stats};
