//! `broker.toml`: one file, every section optional, read into the broker's and each module's settings.

use std::path::Path;
use std::time::Duration;

use naobroker_framework::{BrokerConfig, CurveListeners, CurvePublicKey, CurveSecretKey, Limits};
use naobroker_memory::MemoryConfig;
use naobroker_motion::MotionConfig;
use naobroker_qi_wire::QiConfig;
use serde::Deserialize;

use crate::dcm_config::DcmConfig;
use crate::error::ConfigError;

/// `broker.toml`: one file, every section optional, defaults that run unprivileged.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub broker: BrokerSection,
    pub memory: MemoryConfig,
    pub dcm: DcmConfig,
    pub motion: MotionConfig,
    /// `[qi]`: listeners for libqi clients (docs/qi.md), none unless configured.
    pub qi: QiConfig,
    /// `[foxglove]`: the live view for Foxglove and Lichtblick (docs/visualisation.md), off
    /// unless configured.
    pub foxglove: naobroker_foxglove::FoxgloveConfig,
    /// `[zenoh]`: the robot on a Zenoh network with the rest of the team (docs/team.md), off
    /// unless the section is there.
    pub zenoh: Option<naobroker_zenoh::ZenohConfig>,
}

/// `[broker]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BrokerSection {
    /// Endpoints to listen on: `tcp://HOST:PORT`, `ipc:///path`, `ipc://@name` (Linux's
    /// abstract namespace).
    pub listen: Vec<String>,
    /// A client silent this long is dropped with its modules and subscriptions.
    pub client_timeout_ms: u64,
    /// `[broker.limits]`: sizes and per-client bounds.
    pub limits: Limits,
    /// `[broker.curve]`: listeners beyond loopback, for authenticated clients only.
    pub curve: Option<CurveSection>,
}

/// `[broker.curve]` (docs/security.md).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurveSection {
    /// Endpoints that admit only clients with one of `clients`' keys (any address).
    pub listen: Vec<String>,
    /// A file holding the broker's secret key, Z85 (40 characters; `naocli keygen`).
    pub secret_key_file: std::path::PathBuf,
    /// Public keys (Z85) of the clients allowed to connect.
    pub clients: Vec<String>,
    /// Public keys (Z85, among `clients`) whose `ServiceDirectory.stats` shows every
    /// client's entries; every other client sees its own.
    #[serde(default)]
    pub stats_readers: Vec<String>,
}

impl CurveSection {
    fn to_listeners(&self) -> Result<CurveListeners, ConfigError> {
        let path = || self.secret_key_file.clone();
        let text = std::fs::read_to_string(&self.secret_key_file)
            .map_err(|source| ConfigError::SecretKeyFile { path: path(), source })?;
        let secret_key = CurveSecretKey::from_z85(text.trim())
            .map_err(|source| ConfigError::SecretKey { path: path(), source })?;
        let keys = |keys: &[String]| {
            keys.iter()
                .map(|key| {
                    CurvePublicKey::from_z85(key.trim())
                        .map_err(|source| ConfigError::ClientKey { key: key.clone(), source })
                })
                .collect::<Result<Vec<_>, _>>()
        };
        let (clients, stats_readers) = (keys(&self.clients)?, keys(&self.stats_readers)?);
        Ok(CurveListeners { listen: self.listen.clone(), secret_key, clients, stats_readers })
    }
}

impl Default for BrokerSection {
    fn default() -> Self {
        let defaults = BrokerConfig::default();
        BrokerSection {
            listen: defaults.listen,
            client_timeout_ms: defaults.client_timeout.as_millis() as u64,
            limits: defaults.limits,
            curve: None,
        }
    }
}

impl BrokerSection {
    pub fn to_broker_config(&self) -> Result<BrokerConfig, ConfigError> {
        Ok(BrokerConfig {
            listen: self.listen.clone(),
            client_timeout: Duration::from_millis(self.client_timeout_ms),
            limits: self.limits.clone(),
            curve: self.curve.as_ref().map(CurveSection::to_listeners).transpose()?,
        })
    }
}

impl Config {
    /// Read `path`; when it does not exist and `required` is false, the defaults.
    pub fn load(path: &Path, required: bool) -> Result<Config, ConfigError> {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                toml::from_str(&text).map_err(|source| ConfigError::Parse { path: path.to_owned(), source })
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound && !required => Ok(Config::default()),
            Err(source) => Err(ConfigError::Read { path: path.to_owned(), source }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_broker_toml_is_valid_and_matches_the_defaults() {
        let shipped: Config = toml::from_str(include_str!("../../../broker.toml")).unwrap();
        let defaults = Config::default();
        assert_eq!(shipped.broker.listen, defaults.broker.listen);
        assert_eq!(shipped.broker.limits, defaults.broker.limits);
        assert_eq!(shipped.dcm.period_us, defaults.dcm.period_us);
        assert_eq!(shipped.dcm.priority, defaults.dcm.priority);
        assert_eq!(shipped.motion.period_ms, defaults.motion.period_ms);
        assert_eq!(shipped.motion.fall_manager.enabled, defaults.motion.fall_manager.enabled);
        assert_eq!(shipped.motion.fall_manager.tilt_rad, defaults.motion.fall_manager.tilt_rad);
    }

    #[test]
    fn the_fall_manager_is_configured_under_motion() {
        let config: Config =
            toml::from_str("[motion.fall_manager]\nenabled = false\ntilt_rad = 0.8\n").unwrap();
        assert!(!config.motion.fall_manager.enabled);
        assert_eq!(config.motion.fall_manager.tilt_rad, 0.8);
        let error = toml::from_str::<Config>("[fall_guard]\nenabled = false\n").unwrap_err().to_string();
        assert!(error.contains("unknown field `fall_guard`"), "{error}");
    }

    #[test]
    fn unknown_keys_are_refused() {
        assert!(toml::from_str::<Config>("[dcm]\nperiod = 10").is_err());
    }

    /// The shipped file's `[qi]` section is commented out (no qi listener unless configured);
    /// uncommented, it parses.
    #[test]
    fn the_commented_qi_section_parses() {
        let shipped: Config = toml::from_str(include_str!("../../../broker.toml")).unwrap();
        assert!(shipped.qi.listen.is_empty());
        let section: String = include_str!("../../../broker.toml")
            .lines()
            .skip_while(|line| *line != "# [qi]")
            .take_while(|line| line.starts_with("# "))
            .map(|line| format!("{}\n", &line[2..]))
            .collect();
        let config: Config = toml::from_str(&section).unwrap();
        assert_eq!(config.qi.listen, ["tcp://127.0.0.1:9560"]);
    }

    /// The shipped file has no `[zenoh]` (off unless configured); its commented section,
    /// uncommented, parses and passes the adapter's checks.
    #[test]
    fn the_commented_zenoh_section_parses() {
        let shipped: Config = toml::from_str(include_str!("../../../broker.toml")).unwrap();
        assert!(shipped.zenoh.is_none());
        let section: String = include_str!("../../../broker.toml")
            .lines()
            .skip_while(|line| *line != "# [zenoh]")
            .take_while(|line| line.starts_with("# "))
            .map(|line| format!("{}\n", &line[2..]))
            .collect();
        let zenoh = toml::from_str::<Config>(&section).unwrap().zenoh.unwrap();
        assert_eq!((zenoh.robot.as_deref(), zenoh.scouting), (Some("nao-a"), true));
        assert_eq!(zenoh.connect, ["tcp/192.168.1.10:7447"]);
        assert!(zenoh.check().is_ok());
    }

    /// The shipped file's commented `[dcm.lola]` section, uncommented, holds the defaults.
    #[test]
    fn the_commented_lola_section_is_the_defaults() {
        let shipped = include_str!("../../../broker.toml");
        let section: String = shipped
            .lines()
            .skip_while(|line| *line != "# [dcm.lola]")
            .take_while(|line| line.starts_with('#'))
            .filter_map(|line| line.strip_prefix("# "))
            .filter(|line| !line.starts_with(' '))
            .map(|line| format!("{line}\n"))
            .collect();
        assert!(section.contains("socket ="), "{section}");
        let config: Config = toml::from_str(&section).unwrap();
        let defaults = naobroker_backend_lola::LolaConfig::default();
        let lola = &config.dcm.lola;
        assert_eq!(
            (&lola.socket, lola.battery_order, lola.on_link_loss),
            (&defaults.socket, defaults.battery_order, defaults.on_link_loss)
        );
        assert_eq!(
            (lola.relax_ms, lola.stall_ms, lola.reconnect_ms),
            (defaults.relax_ms, defaults.stall_ms, defaults.reconnect_ms)
        );
    }

    /// `deploy/nao/broker.toml` (docs/deploy-nao.md): the shipped settings with the DCM on
    /// LoLA at its defaults, loopback plus one CURVE listener for the network.
    #[test]
    fn the_robot_broker_toml_is_the_shipped_one_on_lola() {
        let robot: Config = toml::from_str(include_str!("../../../deploy/nao/broker.toml")).unwrap();
        let shipped: Config = toml::from_str(include_str!("../../../broker.toml")).unwrap();
        assert_eq!(robot.dcm.backend, crate::Backend::Lola);
        let (lola, defaults) = (&robot.dcm.lola, naobroker_backend_lola::LolaConfig::default());
        assert_eq!(
            (&lola.socket, lola.battery_order, lola.on_link_loss),
            (&defaults.socket, defaults.battery_order, defaults.on_link_loss)
        );
        assert_eq!(robot.broker.listen, shipped.broker.listen);
        assert_eq!(robot.broker.curve.map(|curve| curve.listen), Some(vec!["tcp://0.0.0.0:9560".to_owned()]));
        assert_eq!(robot.broker.limits, shipped.broker.limits);
        assert_eq!(
            (robot.dcm.priority, robot.dcm.clock, robot.motion.period_ms),
            (shipped.dcm.priority, shipped.dcm.clock, shipped.motion.period_ms)
        );
    }
}
