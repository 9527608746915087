//! External collision protection of the walk (NAOqi's "secure move"): while it is on for
//! `"Move"` and the walk goes forward, an obstacle the sonars see closer than the security
//! distance stops the move at once; the move ends with [`MoveOutcome::Obstacle`] and
//! ALMotion raises `ALMotion/MoveFailed`.

use std::sync::Arc;

use naobroker_rtslots::{FastAccess, NotRealTimeKey, RtSlots};

use super::walking::MoveOutcome;
use super::{Engine, EngineOutput};

/// The sonars' distances (m), as the DCM writes them.
pub(super) const SONAR_KEYS: [&str; 2] =
    ["Device/SubDeviceList/US/Left/Sensor/Value", "Device/SubDeviceList/US/Right/Sensor/Value"];
/// NAOqi's orthogonal security distance (m): how close an obstacle may come ahead of a
/// robot walking at full speed.
const SECURITY_DISTANCE_M: f64 = 0.4;

/// The sonars' slots, when the robot has both.
pub(super) fn sonars(slots: &Arc<RtSlots>) -> Result<Option<FastAccess>, NotRealTimeKey> {
    if SONAR_KEYS.iter().all(|key| slots.layout().index_of(key).is_some()) {
        Ok(Some(slots.fast_access(&SONAR_KEYS)?))
    } else {
        Ok(None)
    }
}

impl Engine {
    /// Stop a forward walk when a sonar sees an obstacle within the security distance (a
    /// reading of 0 is no measurement).
    pub(super) fn stop_before_obstacles(&mut self, output: &mut EngineOutput) {
        let Some(sonars) = &self.sonars else { return };
        if !self.switches.external_protection(crate::reflexes::External::Move) {
            return;
        }
        let forward = self.walking.as_ref().is_some_and(|walking| walking.is_active())
            && self.walk_shared.velocity()[0] > 0.0;
        let near =
            (0..SONAR_KEYS.len()).map(|side| sonars.get(side)).any(|d| d > 0.0 && d < SECURITY_DISTANCE_M);
        if forward && near {
            self.kill_move(MoveOutcome::Obstacle, output);
        }
    }
}
