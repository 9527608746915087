//! Binding the qi listeners: `tcp://HOST:PORT` on loopback only (a listener beyond loopback
//! would admit anyone: `docs/qi.md`), every endpoint checked before any is bound.

use std::net::IpAddr;

use tokio::net::TcpListener;

use crate::error::QiListenError;

/// `tcp://HOST:PORT` cut into its host (brackets of an IPv6 address removed) and port.
fn host_and_port(endpoint: &str) -> Result<(&str, u16), QiListenError> {
    let bad = || QiListenError::BadEndpoint { endpoint: endpoint.to_owned() };
    let address = endpoint.strip_prefix("tcp://").ok_or_else(bad)?;
    let (host, port) = address.rsplit_once(':').ok_or_else(bad)?;
    let port = port.parse::<u16>().map_err(|_| bad())?;
    let host = host.strip_prefix('[').and_then(|inner| inner.strip_suffix(']')).unwrap_or(host);
    if host.is_empty() {
        return Err(bad());
    }
    Ok((host, port))
}

fn is_loopback(host: &str) -> bool {
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The host and port of `endpoint` when it may be bound.
fn check(endpoint: &str) -> Result<(&str, u16), QiListenError> {
    let (host, port) = host_and_port(endpoint)?;
    if !is_loopback(host) {
        return Err(QiListenError::NeedsAuthentication { endpoint: endpoint.to_owned() });
    }
    Ok((host, port))
}

/// Bind every endpoint, after checking them all.
pub(crate) async fn bind(endpoints: &[String]) -> Result<Vec<TcpListener>, QiListenError> {
    let checked = endpoints.iter().map(|endpoint| check(endpoint)).collect::<Result<Vec<_>, _>>()?;
    let mut listeners = Vec::with_capacity(checked.len());
    for (endpoint, address) in endpoints.iter().zip(checked) {
        let listener = TcpListener::bind(address)
            .await
            .map_err(|source| QiListenError::Bind { endpoint: endpoint.clone(), source })?;
        listeners.push(listener);
    }
    Ok(listeners)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_tcp_is_accepted() {
        assert_eq!(check("tcp://127.0.0.1:9560").unwrap(), ("127.0.0.1", 9560));
        assert_eq!(check("tcp://localhost:9560").unwrap(), ("localhost", 9560));
        assert_eq!(check("tcp://[::1]:9560").unwrap(), ("::1", 9560));
        let refused = check("tcp://0.0.0.0:9560").unwrap_err().to_string();
        assert!(refused.contains("SSH tunnel"), "{refused}");
        assert!(matches!(check("tcp://192.168.1.10:9560"), Err(QiListenError::NeedsAuthentication { .. })));
        for bad in ["tcps://127.0.0.1:9503", "127.0.0.1:9560", "tcp://127.0.0.1", "tcp://:9560", "tcp://h:x"]
        {
            assert!(matches!(check(bad), Err(QiListenError::BadEndpoint { .. })), "{bad}");
        }
    }
}
