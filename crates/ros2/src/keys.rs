//! rmw_zenoh's key expressions (ros2/rmw_zenoh docs/design.md on rolling, "Topic and Service
//! name mapping to Zenoh key expressions" and "Graph Cache"; Kilted's and Jazzy's 0.2 releases
//! come from the same code line, not checked separately).
//!
//! A topic's data goes on `<domain_id>/<fully qualified name without its leading slash>/
//! <DDS type name>/<type hash>`. Each entity declares a liveliness token under the hermetic
//! prefix `@ros2_lv`, in which names are "mangled" (every `/` becomes `%`, so a name is one
//! key chunk) and an empty namespace or enclave is `%`.

use std::fmt::Write;

use thiserror::Error;

use crate::types::MessageType;

/// The prefix of every liveliness token (a Zenoh hermetic chunk: `*` and `**` skip it).
pub const LIVELINESS_PREFIX: &str = "@ros2_lv";
/// The depth rmw_zenoh takes as its default (a depth equal to it is left out of tokens).
const DEFAULT_DEPTH: u32 = 42;
/// rmw's enum value of RELIABILITY_BEST_EFFORT (RELIABLE, rmw_zenoh's default, is 1).
const BEST_EFFORT: u8 = 2;
/// rmw's enum value of DURABILITY_TRANSIENT_LOCAL (VOLATILE, rmw_zenoh's default, is 2).
const TRANSIENT_LOCAL: u8 = 1;
/// rmw's enum value of HISTORY_KEEP_ALL (KEEP_LAST, rmw_zenoh's default, is 1).
const KEEP_ALL: u8 = 2;

/// A name that ROS 2 would refuse, or that would not make a key expression.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NameError {
    #[error("{what} is empty")]
    Empty { what: &'static str },
    #[error("{what} `{name}` has `{character}`: ROS names hold only ASCII letters, digits, `_` and `/`")]
    Character { what: &'static str, name: String, character: char },
    #[error("{what} `{name}` has an empty token (`//` or a trailing `/`)")]
    EmptyToken { what: &'static str, name: String },
    #[error("{what} `{name}` has a token that starts with a digit")]
    DigitFirst { what: &'static str, name: String },
    #[error("node name `{0}` must be one token (no `/`)")]
    NodeNameSlash(String),
    #[error("Zenoh session id `{0}` is not lowercase hexadecimal")]
    SessionId(String),
}

/// Checks a namespace or topic name (absolute or relative) by ROS 2's rules.
fn check_name(what: &'static str, name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty { what });
    }
    if let Some(character) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '/')) {
        return Err(NameError::Character { what, name: name.into(), character });
    }
    let tokens = name.strip_prefix('/').unwrap_or(name);
    if tokens.is_empty() {
        return Ok(()); // "/" alone: the root namespace.
    }
    for token in tokens.split('/') {
        if token.is_empty() {
            return Err(NameError::EmptyToken { what, name: name.into() });
        }
        if token.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(NameError::DigitFirst { what, name: name.into() });
        }
    }
    Ok(())
}

/// The fully qualified name of `topic` in `namespace` (`""` or `"/"` is the root): an
/// absolute topic stays as it is, a relative one goes under the namespace.
pub fn fully_qualified_name(namespace: &str, topic: &str) -> Result<String, NameError> {
    check_name("topic", topic)?;
    if topic.starts_with('/') {
        return Ok(topic.into());
    }
    let namespace = absolute("namespace", namespace)?;
    Ok(if namespace == "/" { format!("/{topic}") } else { format!("{namespace}/{topic}") })
}

/// A namespace or an enclave as rcl gives it: absolute, `/` for the root.
fn absolute(what: &'static str, name: &str) -> Result<String, NameError> {
    if name.is_empty() {
        return Ok("/".into());
    }
    check_name(what, name)?;
    Ok(if name.starts_with('/') { name.into() } else { format!("/{name}") })
}

/// Every `/` made `%`, so that a name is a single key chunk.
fn mangle(name: &str) -> String {
    name.replace('/', "%")
}

/// The key expression a publisher puts samples on and a subscriber listens to.
pub fn topic_key(
    domain_id: u32,
    namespace: &str,
    topic: &str,
    message: &MessageType,
) -> Result<String, NameError> {
    let name = fully_qualified_name(namespace, topic)?;
    let name = name.strip_prefix('/').unwrap_or(&name);
    Ok(format!("{domain_id}/{name}/{}/{}", message.dds_name, message.hash))
}

/// A publisher's or subscription's reliability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reliability {
    #[default]
    Reliable,
    BestEffort,
}

/// A publisher's or subscription's durability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    #[default]
    Volatile,
    TransientLocal,
}

/// A publisher's or subscription's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum History {
    KeepLast(u32),
    KeepAll,
}

/// The QoS a liveliness token advertises. Deadline, lifespan and liveliness are always
/// rmw_zenoh's defaults (infinite, infinite, automatic), the only ones it implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Qos {
    pub reliability: Reliability,
    pub durability: Durability,
    pub history: History,
}

impl Qos {
    /// Reliable, volatile, keep the last `depth`: rclcpp's `QoS(depth)`.
    pub fn keep_last(depth: u32) -> Self {
        Qos {
            reliability: Reliability::Reliable,
            durability: Durability::Volatile,
            history: History::KeepLast(depth),
        }
    }

    /// rmw_zenoh's compact form (its `qos_to_keyexpr`): each field left empty when it is
    /// rmw_zenoh's default, `<reliability>:<durability>:<history>,<depth>:<deadline s>,<ns>:
    /// <lifespan s>,<ns>:<liveliness>,<lease s>,<ns>`; e.g. `::,10:,:,:,,` for `keep_last(10)`.
    pub fn to_keyexpr(&self) -> String {
        let mut key = String::new();
        if self.reliability == Reliability::BestEffort {
            write!(key, "{BEST_EFFORT}").unwrap();
        }
        key.push(':');
        if self.durability == Durability::TransientLocal {
            write!(key, "{TRANSIENT_LOCAL}").unwrap();
        }
        key.push(':');
        match self.history {
            // A depth of 0 means "the middleware's default", which rmw_zenoh makes 42.
            History::KeepLast(depth) if depth != 0 && depth != DEFAULT_DEPTH => {
                write!(key, ",{depth}").unwrap()
            }
            History::KeepLast(_) => key.push(','),
            History::KeepAll => write!(key, "{KEEP_ALL},").unwrap(),
        }
        key.push_str(":,:,:,,");
        key
    }
}

/// The kind of a ROS entity, as its token names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EntityKind {
    Node,
    Publisher,
    Subscription,
}

impl EntityKind {
    fn code(self) -> &'static str {
        match self {
            EntityKind::Node => "NN",
            EntityKind::Publisher => "MP",
            EntityKind::Subscription => "MS",
        }
    }
}

/// A ROS node as its entities' liveliness tokens describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// `ROS_DOMAIN_ID` (0 by default).
    pub domain_id: u32,
    /// The Zenoh session's id as Zenoh prints it (`ZenohId`'s `Display`: lowercase hex).
    pub session_id: String,
    /// The node's id within the session (rmw_zenoh counts entities of a context from 0).
    pub node_id: u32,
    /// Its namespace (`""` or `"/"` for the root).
    pub namespace: String,
    /// Its name: one token.
    pub name: String,
    /// Its SROS enclave (`""` or `"/"` for none).
    pub enclave: String,
}

impl Node {
    /// The token that says the node exists:
    /// `@ros2_lv/<domain>/<session>/<node_id>/<node_id>/NN/<enclave>/<namespace>/<name>`.
    pub fn token(&self) -> Result<String, NameError> {
        self.prefix(self.node_id, EntityKind::Node)
    }

    /// The token of the node's publisher `entity_id` on `topic` (resolved in its namespace).
    pub fn publisher_token(
        &self,
        entity_id: u32,
        topic: &str,
        message: &MessageType,
        qos: &Qos,
    ) -> Result<String, NameError> {
        self.endpoint_token(entity_id, EntityKind::Publisher, topic, message, qos)
    }

    /// The token of the node's subscription `entity_id` on `topic` (resolved in its namespace).
    pub fn subscription_token(
        &self,
        entity_id: u32,
        topic: &str,
        message: &MessageType,
        qos: &Qos,
    ) -> Result<String, NameError> {
        self.endpoint_token(entity_id, EntityKind::Subscription, topic, message, qos)
    }

    /// The key of `topic` resolved in this node's namespace and domain.
    pub fn topic_key(&self, topic: &str, message: &MessageType) -> Result<String, NameError> {
        topic_key(self.domain_id, &self.namespace, topic, message)
    }

    fn endpoint_token(
        &self,
        entity_id: u32,
        kind: EntityKind,
        topic: &str,
        message: &MessageType,
        qos: &Qos,
    ) -> Result<String, NameError> {
        let mut token = self.prefix(entity_id, kind)?;
        let name = fully_qualified_name(&self.namespace, topic)?;
        write!(token, "/{}/{}/{}/{}", mangle(&name), message.dds_name, message.hash, qos.to_keyexpr())
            .unwrap();
        Ok(token)
    }

    fn prefix(&self, entity_id: u32, kind: EntityKind) -> Result<String, NameError> {
        if self.session_id.is_empty()
            || !self.session_id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        {
            return Err(NameError::SessionId(self.session_id.clone()));
        }
        check_name("node name", &self.name)?;
        if self.name.contains('/') {
            return Err(NameError::NodeNameSlash(self.name.clone()));
        }
        let namespace = absolute("namespace", &self.namespace)?;
        let enclave = absolute("enclave", &self.enclave)?;
        Ok(format!(
            "{LIVELINESS_PREFIX}/{}/{}/{}/{}/{}/{}/{}/{}",
            self.domain_id,
            self.session_id,
            self.node_id,
            entity_id,
            kind.code(),
            mangle(&enclave),
            mangle(&namespace),
            self.name
        ))
    }
}
