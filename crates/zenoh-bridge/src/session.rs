//! The adapter's Zenoh configuration, written in Zenoh's own keys from `[zenoh]`.

use serde_json::{json, Value as Json};

use crate::bounds::MAX_MESSAGE_BYTES;
use crate::config::{Checked, Mode, ZenohConfig};
use crate::error::ZenohError;
use crate::exports::Exports;
use crate::keys::KeySpace;

/// Zenoh's configuration for the broker's session.
pub(crate) fn zenoh_config(
    config: &ZenohConfig,
    checked: &Checked,
    exports: &Exports,
) -> Result<zenoh::Config, ZenohError> {
    let mut settings: Vec<(&str, Json)> = vec![
        (
            "mode",
            json!(match config.mode {
                Mode::Peer => "peer",
                Mode::Client => "client",
            }),
        ),
        ("scouting/multicast/enabled", json!(config.scouting)),
        // The robot works without the network: in every mode, `connect`'s endpoints are tried
        // again until reached (Zenoh's default for a client is to fail the open at once).
        ("connect/timeout_ms", json!(-1)),
        ("connect/exit_on_failure", json!(false)),
        ("transport/link/rx/max_message_size", json!(MAX_MESSAGE_BYTES)),
    ];
    if !config.listen.is_empty() {
        settings.push(("listen/endpoints", json!(config.listen)));
    }
    if !config.connect.is_empty() {
        settings.push(("connect/endpoints", json!(config.connect)));
    }
    if let (Some(auth), Some(password)) = (&config.auth, &checked.password) {
        settings.push(("transport/auth/usrpwd/user", json!(checked.robot)));
        settings.push(("transport/auth/usrpwd/password", json!(password)));
        settings.push(("transport/auth/usrpwd/dictionary_file", json!(auth.dictionary_file)));
        let keys = KeySpace::new(&checked.robot);
        let cmd_vel = config.ros2.as_ref().filter(|ros2| ros2.cmd_vel).map(|ros2| ros2.cmd_vel_key());
        if let Some(acl) = exports.access_control(&keys, &auth.movers, cmd_vel.as_deref()) {
            settings.push(("access_control", acl));
        }
    }
    let mut zenoh = zenoh::Config::default();
    for (key, value) in settings {
        zenoh
            .insert_json5(key, &value.to_string())
            .map_err(|error| ZenohError::Zenoh(format!("{key} = {value}: {error}")))?;
    }
    Ok(zenoh)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_endpoint_is_named() {
        let config = ZenohConfig {
            robot: Some("nao-a".into()),
            listen: vec!["nonsense".into()],
            ..Default::default()
        };
        let checked = config.check().unwrap();
        let exports = Exports { calls: checked.calls.clone(), moves: checked.moves.clone() };
        let error = zenoh_config(&config, &checked, &exports).unwrap_err().to_string();
        assert!(error.contains("listen/endpoints"), "{error}");
    }
}
