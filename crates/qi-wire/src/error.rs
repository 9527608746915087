//! Why the qi listener does not start: an endpoint it cannot use or may not bind.

use thiserror::Error;

/// A `[qi] listen` endpoint (or `--qi-listen`) that is not bound.
#[derive(Debug, Error)]
pub enum QiListenError {
    #[error("[qi] listen {endpoint:?}: a qi endpoint is tcp://HOST:PORT")]
    BadEndpoint { endpoint: String },
    #[error(
        "refusing to listen for qi clients on {endpoint}: libqi's wire carries no authentication \
         or encryption here, so a qi listener stays on loopback; reach it from another machine \
         through an SSH tunnel (docs/qi.md)"
    )]
    NeedsAuthentication { endpoint: String },
    #[error("cannot listen for qi clients on {endpoint}: {source}")]
    Bind { endpoint: String, source: std::io::Error },
}
