//! `[foxglove]`: the live view's listener (off unless configured, loopback only), the
//! ALMemory keys and events it shows, and its bounds.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use serde::Deserialize;

use crate::bounds::{MAX_EVENTS, MAX_KEYS_RATE_HZ, MAX_VIEWERS, MAX_VIEWER_PATIENCE_S};
use crate::error::FoxgloveError;
use crate::module::check_keys;

/// `[foxglove]` (docs/visualisation.md).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FoxgloveConfig {
    /// `HOST:PORT` of the WebSocket server, loopback only; none: no server.
    pub listen: Option<String>,
    /// ALMemory keys written on `/memory`, any key (real-time or not).
    pub keys: Vec<String>,
    /// How often `/memory` is written, per second.
    pub keys_rate_hz: f64,
    /// Events, each on `/events/<name>` as it is raised.
    pub events: Vec<String>,
    /// Messages a viewer's queue holds: a viewer further behind loses the oldest (counted).
    pub viewer_queue: usize,
    /// Viewers connected at once at most: one more is refused, with the reason.
    pub max_viewers: usize,
    /// Seconds a viewer's socket may take no byte while messages wait for it before the
    /// viewer is cut off (a viewer that stopped reading, or vanished behind a tunnel).
    pub viewer_patience_s: u64,
}

impl Default for FoxgloveConfig {
    fn default() -> Self {
        FoxgloveConfig {
            listen: None,
            keys: Vec::new(),
            keys_rate_hz: 10.0,
            events: naobroker_memory::WATCHED_EVENTS.map(String::from).to_vec(),
            viewer_queue: 1024,
            max_viewers: 8,
            viewer_patience_s: 10,
        }
    }
}

impl FoxgloveConfig {
    /// The address to bind, once every setting is checked; none when the server is off.
    pub fn check(&self) -> Result<Option<SocketAddr>, FoxgloveError> {
        check_keys(&self.keys)?;
        if self.events.len() > MAX_EVENTS {
            return Err(FoxgloveError::TooManyEvents(self.events.len()));
        }
        if !(self.keys_rate_hz > 0.0 && self.keys_rate_hz <= MAX_KEYS_RATE_HZ) {
            return Err(FoxgloveError::KeysRate(self.keys_rate_hz));
        }
        if self.viewer_queue == 0 {
            return Err(FoxgloveError::ViewerQueue);
        }
        if !(1..=MAX_VIEWERS).contains(&self.max_viewers) {
            return Err(FoxgloveError::MaxViewers(self.max_viewers));
        }
        if !(1..=MAX_VIEWER_PATIENCE_S).contains(&self.viewer_patience_s) {
            return Err(FoxgloveError::ViewerPatience(self.viewer_patience_s));
        }
        let Some(listen) = &self.listen else { return Ok(None) };
        let bad = || FoxgloveError::BadAddress(listen.clone());
        let (host, port) = listen.rsplit_once(':').ok_or_else(bad)?;
        let host = host.strip_prefix('[').and_then(|inner| inner.strip_suffix(']')).unwrap_or(host);
        let port: u16 = port.parse().map_err(|_| bad())?;
        let loopback = host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
        if !loopback {
            return Err(FoxgloveError::NotLoopback(listen.clone()));
        }
        let address =
            (host, port).to_socket_addrs().map_err(|_| bad())?.find(|address| address.ip().is_loopback());
        address.map(Some).ok_or_else(bad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::MAX_KEYS;

    fn listening(listen: &str) -> FoxgloveConfig {
        FoxgloveConfig { listen: Some(listen.to_owned()), ..Default::default() }
    }

    #[test]
    fn only_loopback_is_listened_on_and_the_refusal_gives_the_tunnel() {
        assert_eq!(listening("127.0.0.1:8765").check().unwrap(), Some("127.0.0.1:8765".parse().unwrap()));
        assert_eq!(listening("[::1]:8765").check().unwrap(), Some("[::1]:8765".parse().unwrap()));
        assert!(listening("localhost:8765").check().unwrap().unwrap().ip().is_loopback());
        for beyond in ["0.0.0.0:8765", "192.168.1.10:8765", "[::]:8765"] {
            let refused = listening(beyond).check().unwrap_err().to_string();
            assert!(refused.contains("ssh -L 8765:localhost:8765"), "{refused}");
        }
        assert!(matches!(listening("127.0.0.1").check(), Err(FoxgloveError::BadAddress(_))));
        assert_eq!(FoxgloveConfig::default().check().unwrap(), None);
    }

    #[test]
    fn keys_events_and_rate_are_bounded() {
        let keys = FoxgloveConfig { keys: vec!["A".into(); MAX_KEYS + 1], ..Default::default() };
        assert_eq!(keys.check().unwrap_err().to_string(), "[foxglove] keys: 65 keys, at most 64");
        let events = FoxgloveConfig { events: vec!["E".into(); MAX_EVENTS + 1], ..Default::default() };
        assert!(matches!(events.check(), Err(FoxgloveError::TooManyEvents(65))));
        let rate = FoxgloveConfig { keys_rate_hz: 51.0, ..Default::default() };
        assert!(matches!(rate.check(), Err(FoxgloveError::KeysRate(_))));
        for viewers in [0, MAX_VIEWERS + 1] {
            let config = FoxgloveConfig { max_viewers: viewers, ..Default::default() };
            assert!(matches!(config.check(), Err(FoxgloveError::MaxViewers(_))), "{viewers}");
        }
        for patience in [0, MAX_VIEWER_PATIENCE_S + 1] {
            let config = FoxgloveConfig { viewer_patience_s: patience, ..Default::default() };
            assert!(matches!(config.check(), Err(FoxgloveError::ViewerPatience(_))), "{patience}");
        }
    }
}
