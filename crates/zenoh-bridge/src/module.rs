//! The `Zenoh` module and the adapter's counters: what it put, what it dropped or refused
//! because a queue was full or a peer asked too much.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use naobroker_framework::{Methods, Module, Value};

/// What the adapter counts (docs/team.md).
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// Real-time values put.
    pub(crate) values_put: AtomicU64,
    /// Without `rate_hz`: DCM cycles that passed between two looks of the adapter's thread
    /// (their changes go out with the next look's values).
    pub(crate) cycles_skipped: AtomicU64,
    pub(crate) events_put: AtomicU64,
    /// Events dropped because the adapter's event queue was full (the network is slow).
    pub(crate) events_dropped: AtomicU64,
    /// Memory queries answered.
    pub(crate) memory_queries: AtomicU64,
    /// Queries answered "busy": the query queue was full, or too many calls were under way.
    pub(crate) queries_busy: AtomicU64,
    /// Queries refused: too many keys, a bad key or payload, a method not exported.
    pub(crate) queries_refused: AtomicU64,
    /// Calls made on the broker for peers.
    pub(crate) calls: AtomicU64,
    /// Calls' answers dropped: their query had timed out and the answers' queue was full.
    pub(crate) answers_dropped: AtomicU64,
    /// Calls answered "timed out": no answer within the deadline.
    pub(crate) calls_timed_out: AtomicU64,
    /// The ROS 2 view's messages put.
    pub(crate) ros2_messages_put: AtomicU64,
    /// `/cmd_vel` Twists given to `ALMotion.move`.
    pub(crate) cmd_vel_moves: AtomicU64,
    /// `/cmd_vel` Twists dropped: malformed, or one was still waiting for the broker's thread.
    pub(crate) cmd_vel_dropped: AtomicU64,
    /// `/cmd_vel` puts refused: on a wildcard key, not on the topic's own key.
    pub(crate) cmd_vel_refused: AtomicU64,
}

impl Counters {
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// By name, as `Zenoh.stats` and `ServiceDirectory.stats` show them.
    pub(crate) fn named(&self) -> Vec<(&'static str, u64)> {
        let value = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        vec![
            ("zenoh_values_put", value(&self.values_put)),
            ("zenoh_cycles_skipped", value(&self.cycles_skipped)),
            ("zenoh_events_put", value(&self.events_put)),
            ("zenoh_events_dropped", value(&self.events_dropped)),
            ("zenoh_memory_queries", value(&self.memory_queries)),
            ("zenoh_queries_busy", value(&self.queries_busy)),
            ("zenoh_queries_refused", value(&self.queries_refused)),
            ("zenoh_calls", value(&self.calls)),
            ("zenoh_answers_dropped", value(&self.answers_dropped)),
            ("zenoh_calls_timed_out", value(&self.calls_timed_out)),
            ("zenoh_ros2_messages_put", value(&self.ros2_messages_put)),
            ("zenoh_cmd_vel_moves", value(&self.cmd_vel_moves)),
            ("zenoh_cmd_vel_dropped", value(&self.cmd_vel_dropped)),
            ("zenoh_cmd_vel_refused", value(&self.cmd_vel_refused)),
        ]
    }
}

/// `Zenoh`: the robot's name on the network and the adapter's counters.
pub struct ZenohModule {
    pub(crate) robot: String,
    pub(crate) counters: Arc<Counters>,
}

impl Module for ZenohModule {
    fn name(&self) -> String {
        "Zenoh".into()
    }

    fn description(&self) -> String {
        "The robot on a Zenoh network (docs/team.md): its name there and the adapter's counters.".into()
    }

    fn methods(m: &mut Methods<Self>) {
        m.add("robot", "The robot's name, in every key: naobroker/<robot>/...", |this, _, ()| {
            Ok(this.robot.clone())
        })
        .add(
            "stats",
            "{counter: count}: values and events put, dropped, queries refused.",
            |this, _, ()| {
                let entries = this
                    .counters
                    .named()
                    .into_iter()
                    .map(|(name, count)| (Value::from(name), Value::from(count)));
                Ok(Value::Map(entries.collect()))
            },
        );
    }
}
