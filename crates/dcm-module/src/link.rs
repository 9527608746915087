//! The link to the robot seen from the broker's thread (`lola`): its state logged once per
//! change, and shown in ALMemory (`HAL/Link/*`, and the robot's identity under its
//! `RobotConfig` keys) and in `DCM.stats`. Polled every 100 ms: the cycle thread neither
//! logs nor allocates, and runs no cycle at all while the robot is silent.

use std::sync::Arc;
use std::time::Duration;

use naobroker_framework::Value;
use naobroker_hardware::link::{LinkHealth, LinkLoss, LinkSnapshot, LinkState};
use naobroker_memory::Store;

const POLL: Duration = Duration::from_millis(100);

/// Follow `link` for as long as the broker runs, showing it in `store` when there is one.
pub(crate) fn follow_link(link: Arc<LinkHealth>, store: Option<Arc<Store>>) {
    actix_rt::spawn(async move {
        let mut shown = Shown::default();
        let mut ticks = tokio::time::interval(POLL);
        loop {
            ticks.tick().await;
            shown.update(&link, store.as_deref());
        }
    });
}

/// What was last logged and shown.
#[derive(Default)]
struct Shown {
    snapshot: Option<LinkSnapshot>,
    identity_changes: u32,
}

impl Shown {
    fn update(&mut self, link: &LinkHealth, store: Option<&Store>) {
        let now = link.snapshot();
        if self
            .snapshot
            .is_none_or(|before| (before.state, before.connect_error) != (now.state, now.connect_error))
        {
            log_change(link.endpoint(), self.snapshot.map(|before| before.state), &now);
        }
        if let Some(store) = store {
            if self.snapshot != Some(now) {
                show(store, &now);
            }
            if let Some((changes, texts)) = link.identity() {
                if changes != self.identity_changes {
                    self.identity_changes = changes;
                    for (key, text) in texts {
                        insert(store, key, text.into());
                    }
                }
            }
        }
        self.snapshot = Some(now);
    }
}

fn os_error(errno: i32) -> std::io::Error {
    std::io::Error::from_raw_os_error(errno)
}

/// Why the link was lost, in words.
fn loss_text(link: &LinkSnapshot) -> String {
    match (link.loss, link.loss_error) {
        (LinkLoss::None, _) => "not lost".into(),
        (LinkLoss::Closed, _) => "LoLA closed the connection".into(),
        (LinkLoss::Failed, Some(errno)) => format!("the socket failed: {}", os_error(errno)),
        (LinkLoss::Failed, None) => "the socket failed".into(),
        (LinkLoss::Malformed, _) => "LoLA sent bytes that are no map".into(),
        (LinkLoss::Oversized, _) => "LoLA sent a map larger than any it sends".into(),
    }
}

fn log_change(endpoint: &str, before: Option<LinkState>, now: &LinkSnapshot) {
    let was_connected = before.is_some_and(LinkState::is_connected);
    match now.state {
        LinkState::Absent if was_connected => tracing::warn!(
            socket = endpoint,
            why = %loss_text(now),
            "LoLA link lost: the DCM cycles again when it is back (ALMemory keeps the last sensor values, \
             HAL/Link/Stale)"
        ),
        LinkState::Absent => {
            if let Some(errno) = now.connect_error {
                tracing::warn!(
                    socket = endpoint,
                    error = %os_error(errno),
                    "no LoLA to connect to: the DCM waits for the robot and tries again every \
                     [dcm.lola] reconnect_ms; the broker serves everything else meanwhile"
                );
            }
        }
        LinkState::Waiting => {
            tracing::info!(socket = endpoint, "connected to LoLA: waiting for its first sensor map")
        }
        LinkState::Up => {
            tracing::info!(socket = endpoint, "LoLA link up: one DCM cycle per sensor map, every 12 ms")
        }
        LinkState::Stalled => tracing::warn!(
            socket = endpoint,
            "LoLA stalled: no sensor map for [dcm.lola] stall_ms; no DCM cycle runs and ALMemory keeps the \
             last sensor values (HAL/Link/Stale)"
        ),
    }
}

/// A key the DCM owns; refused only if a module made it an event, which the log says.
fn insert(store: &Store, key: &str, value: Value) {
    if let Err(error) = store.insert_owned(key, value) {
        tracing::warn!(%error, "the link to the robot cannot be shown in ALMemory");
    }
}

/// `HAL/Link/*` in ALMemory.
fn show(store: &Store, link: &LinkSnapshot) {
    insert(store, "HAL/Link/State", link.state.as_str().into());
    insert(store, "HAL/Link/Connected", link.state.is_connected().into());
    insert(store, "HAL/Link/Stale", link.state.is_stale().into());
    insert(store, "HAL/Link/Stalls", link.stalls.into());
    insert(store, "HAL/Link/Reconnects", link.reconnects.into());
    insert(store, "HAL/Link/Malformed", link.malformed.into());
    insert(store, "HAL/Link/Oversized", link.oversized.into());
    insert(store, "HAL/Link/LateCycles", link.late_cycles.into());
}

/// The link in `DCM.stats`.
pub(crate) fn stats_value(link: &LinkHealth) -> Value {
    let snapshot = link.snapshot();
    let connect_error = snapshot.connect_error.map_or(Value::Nil, |errno| os_error(errno).to_string().into());
    Value::Map(vec![
        ("socket".into(), link.endpoint().into()),
        ("state".into(), snapshot.state.as_str().into()),
        ("connected".into(), snapshot.state.is_connected().into()),
        ("stale".into(), snapshot.state.is_stale().into()),
        ("connect_error".into(), connect_error),
        ("last_loss".into(), loss_text(&snapshot).into()),
        ("sensor_maps".into(), snapshot.maps.into()),
        ("actuator_maps".into(), snapshot.answers.into()),
        ("late_cycles".into(), snapshot.late_cycles.into()),
        ("stalls".into(), snapshot.stalls.into()),
        ("reconnects".into(), snapshot.reconnects.into()),
        ("malformed".into(), snapshot.malformed.into()),
        ("oversized".into(), snapshot.oversized.into()),
    ])
}
