//! What ALMotion writes to ALMemory, in the order the motion thread reported it: the
//! cycle events (`ALMotion/PreProcess` first, `ALMotion/PostProcess` last) and, between
//! them, the fall manager's events and keys.

use naobroker_framework::{Broker, Value};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use crate::engine::FromEngine;

/// NAOqi 2.0's name for the start of a fall (kept for scripts that subscribe to it).
pub(crate) const ROBOT_IS_FALLING: &str = "robotIsFalling";
/// NAOqi 2.5's name for the same event.
pub(crate) const ALMOTION_ROBOT_IS_FALLING: &str = "ALMotion/RobotIsFalling";
/// Raised when the fall is over: stiffness off, the body at rest on the ground.
pub(crate) const ROBOT_HAS_FALLEN: &str = "robotHasFallen";
/// Raised when a walk cannot start or stops before its end: `[reason, status, [x, y, θ]]`.
pub(crate) const MOVE_FAILED: &str = "ALMotion/MoveFailed";

/// The fall manager's names without ALMotion's prefix: reserved for ALMotion in the
/// broker, so that no client can raise a fake fall.
pub(crate) const UNPREFIXED_NAMES: [&str; 2] = [ROBOT_IS_FALLING, ROBOT_HAS_FALLEN];

/// One ALMemory write.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum MemoryWrite {
    Declare(&'static str),
    /// `raiseEvent`: stores the value and calls the subscribers.
    Raise(&'static str, Value),
    /// `insertData`: stores the value only.
    Insert(&'static str, Value),
}

/// The writes one report from the motion thread stands for (task ends are not ALMemory's
/// business: the caller handles them).
pub(crate) fn writes_for(report: FromEngine, queue: &UnboundedSender<MemoryWrite>) {
    let cycle_value = |cycle: u64, time: i32| Value::Array(vec![cycle.into(), time.into()]);
    let writes = match report {
        FromEngine::PreProcess { cycle, time } => {
            vec![MemoryWrite::Raise("ALMotion/PreProcess", cycle_value(cycle, time))]
        }
        FromEngine::Cycle { cycle, time } => {
            vec![MemoryWrite::Raise("ALMotion/PostProcess", cycle_value(cycle, time))]
        }
        FromEngine::Falling { time, direction } => {
            tracing::warn!(time, ?direction, "the robot is falling: tasks killed, protective posture");
            vec![
                MemoryWrite::Raise(ROBOT_IS_FALLING, true.into()),
                MemoryWrite::Raise(ALMOTION_ROBOT_IS_FALLING, true.into()),
            ]
        }
        FromEngine::Fallen { time } => {
            tracing::warn!(time, "the robot has fallen: limp, at rest on the ground");
            vec![
                MemoryWrite::Insert(ROBOT_IS_FALLING, false.into()),
                MemoryWrite::Insert(ALMOTION_ROBOT_IS_FALLING, false.into()),
                MemoryWrite::Raise(ROBOT_HAS_FALLEN, true.into()),
            ]
        }
        FromEngine::Upright => vec![MemoryWrite::Insert(ROBOT_HAS_FALLEN, false.into())],
        FromEngine::Finished { .. } | FromEngine::MoveEnded { .. } => Vec::new(),
    };
    for write in writes {
        let _ = queue.send(write);
    }
}

/// The fall manager's events, declared at start-up with their values (nothing falling).
pub(crate) fn declare_fall_events(queue: &UnboundedSender<MemoryWrite>) {
    for name in [ROBOT_IS_FALLING, ALMOTION_ROBOT_IS_FALLING, ROBOT_HAS_FALLEN] {
        let _ = queue.send(MemoryWrite::Declare(name));
        let _ = queue.send(MemoryWrite::Insert(name, false.into()));
    }
}

/// Perform the writes one after the other, in order, until ALMotion goes away.
pub(crate) async fn write_all(broker: Broker, mut queue: UnboundedReceiver<MemoryWrite>) {
    while let Some(write) = queue.recv().await {
        let (method, written) = match write {
            MemoryWrite::Declare(name) => ("declareEvent", broker.declare_event(name)),
            MemoryWrite::Raise(name, value) => ("raiseEvent", broker.raise_event(name, value)),
            MemoryWrite::Insert(name, value) => ("insertData", broker.insert_data(name, value)),
        };
        if let Err(error) = written {
            tracing::debug!(%error, method, "ALMotion could not write to ALMemory");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fall::Direction;

    fn written(reports: &[FromEngine]) -> Vec<MemoryWrite> {
        let (queue, mut received) = tokio::sync::mpsc::unbounded_channel();
        for &report in reports {
            writes_for(report, &queue);
        }
        drop(queue);
        std::iter::from_fn(|| received.try_recv().ok()).collect()
    }

    #[test]
    fn a_fall_reported_in_a_cycle_is_raised_between_its_pre_and_post_process() {
        let cycle = |cycle: u64, time: i32| Value::Array(vec![cycle.into(), time.into()]);
        let writes = written(&[
            FromEngine::PreProcess { cycle: 7, time: 140 },
            FromEngine::Finished { id: 3, completed: false },
            FromEngine::Falling { time: 140, direction: Direction::Back },
            FromEngine::Cycle { cycle: 7, time: 140 },
            FromEngine::PreProcess { cycle: 12, time: 240 },
            FromEngine::Fallen { time: 240 },
            FromEngine::Cycle { cycle: 12, time: 240 },
        ]);
        assert_eq!(
            writes,
            [
                MemoryWrite::Raise("ALMotion/PreProcess", cycle(7, 140)),
                MemoryWrite::Raise("robotIsFalling", true.into()),
                MemoryWrite::Raise("ALMotion/RobotIsFalling", true.into()),
                MemoryWrite::Raise("ALMotion/PostProcess", cycle(7, 140)),
                MemoryWrite::Raise("ALMotion/PreProcess", cycle(12, 240)),
                MemoryWrite::Insert("robotIsFalling", false.into()),
                MemoryWrite::Insert("ALMotion/RobotIsFalling", false.into()),
                MemoryWrite::Raise("robotHasFallen", true.into()),
                MemoryWrite::Raise("ALMotion/PostProcess", cycle(12, 240)),
            ]
        );
    }
}
