//! Which methods peers may call: `[zenoh] calls` for every peer, `[zenoh] moves` for the
//! movers only, enforced by Zenoh's own access control on the broker's session.

use serde_json::{json, Value as Json};

use crate::keys::KeySpace;

/// The robot's own modules, whose methods that do not read move it, change its state or
/// write its memory.
const ROBOT_MODULES: [&str; 6] = ["ALMemory", "ALMotion", "ALRobotPosture", "ALSensors", "ALSonar", "DCM"];
/// How the names of the robot's modules' reading methods start.
const READERS: [&str; 4] = ["get", "is", "are", "robotIs"];

/// `Module.method`, or `Module.prefix*` for every method whose name starts with `prefix`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodPattern {
    module: String,
    method: String,
    prefix: bool,
}

impl MethodPattern {
    pub fn parse(text: &str) -> Option<MethodPattern> {
        let (module, method) = text.split_once('.')?;
        let (method, prefix) = match method.strip_suffix('*') {
            Some(prefix) => (prefix, true),
            None => (method, false),
        };
        let chunk = |name: &str| name.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'_');
        let whole = !module.is_empty() && (prefix || !method.is_empty());
        (whole && chunk(module) && chunk(method)).then(|| MethodPattern {
            module: module.to_owned(),
            method: method.to_owned(),
            prefix,
        })
    }

    /// Whether it may name a method that acts on the robot: one of the robot's own modules'
    /// methods whose name does not say it reads (`get...`, `is...`, `are...`, `robotIs...`).
    /// Another module's methods are its own business; the broker's ownership checks hold for
    /// them (the peers call as a client of their own).
    pub fn may_act(&self) -> bool {
        ROBOT_MODULES.contains(&self.module.as_str())
            && !READERS.iter().any(|reader| self.method.starts_with(reader))
    }

    pub fn matches(&self, module: &str, method: &str) -> bool {
        module == self.module
            && if self.prefix { method.starts_with(&self.method) } else { method == self.method }
    }

    /// The key expression of the calls it names, for the access control's rules
    /// (`get*` is Zenoh's sub-chunk wildcard `get$*`, and a bare `*` a chunk's).
    fn key_expr(&self, keys: &KeySpace) -> String {
        let method = match (self.prefix, self.method.is_empty()) {
            (true, true) => "*".to_owned(),
            (true, false) => format!("{}$*", self.method),
            (false, _) => self.method.clone(),
        };
        keys.call(&self.module, &method)
    }
}

/// Who may call what.
#[derive(Debug, Clone)]
pub(crate) struct Exports {
    pub(crate) calls: Vec<MethodPattern>,
    pub(crate) moves: Vec<MethodPattern>,
}

impl Exports {
    /// Whether `module.method` is served at all; who may ask is the access control's (the
    /// queries of a move reach the broker only from a mover).
    pub(crate) fn serves(&self, module: &str, method: &str) -> bool {
        let listed = |patterns: &[MethodPattern]| patterns.iter().any(|p| p.matches(module, method));
        listed(&self.calls) || listed(&self.moves)
    }

    /// Zenoh's `access_control` for the session: queries (calls) on the moves' keys are
    /// denied as they come in from any peer, and allowed from the movers. A peer matches
    /// every subject it fits and any subject's allow wins: "everyone" (no property: every
    /// link) is denied, "movers" (the users the dictionary authenticated) allowed. A peer
    /// without a user (one this broker connected to: Zenoh authenticates the side that
    /// connects) is only "everyone". Anything else no rule names stays allowed.
    /// With `cmd_vel` (the ROS 2 view's `/cmd_vel` key), puts there are held the same way.
    pub(crate) fn access_control(
        &self,
        keys: &KeySpace,
        movers: &[String],
        cmd_vel: Option<&str>,
    ) -> Option<Json> {
        let calls: Vec<String> = self.moves.iter().map(|pattern| pattern.key_expr(keys)).collect();
        let held = [("query", calls), ("put", cmd_vel.map(str::to_owned).into_iter().collect())];
        let held: Vec<(&str, Vec<String>)> = held.into_iter().filter(|(_, keys)| !keys.is_empty()).collect();
        if held.is_empty() {
            return None;
        }
        let rules = |permission: &str| -> Vec<Json> {
            held.iter()
                .map(|(message, key_exprs)| {
                    json!({
                        "id": format!("{message}_{permission}"),
                        "messages": [message],
                        "flows": ["ingress"],
                        "permission": permission,
                        "key_exprs": key_exprs,
                    })
                })
                .collect()
        };
        let ids = |rules: &[Json]| -> Vec<Json> { rules.iter().map(|rule| rule["id"].clone()).collect() };
        let (denied, allowed) = (rules("deny"), rules("allow"));
        Some(json!({
            "enabled": true,
            "default_permission": "allow",
            "rules": denied.iter().chain(&allowed).collect::<Vec<_>>(),
            "subjects": [{ "id": "everyone" }, { "id": "movers", "usernames": movers }],
            "policies": [
                { "rules": ids(&denied), "subjects": ["everyone"] },
                { "rules": ids(&allowed), "subjects": ["movers"] },
            ],
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patterns(texts: &[&str]) -> Vec<MethodPattern> {
        texts.iter().map(|text| MethodPattern::parse(text).unwrap()).collect()
    }

    #[test]
    fn patterns_name_a_method_or_a_prefix() {
        let getters = MethodPattern::parse("ALMotion.get*").unwrap();
        assert!(getters.matches("ALMotion", "getAngles"));
        assert!(!getters.matches("ALMotion", "setAngles"));
        assert!(!getters.matches("ALMemory", "getData"));
        assert!(MethodPattern::parse("ALMotion.*").unwrap().matches("ALMotion", "moveTo"));
        assert!(MethodPattern::parse("ALMotion.*").unwrap().may_act());
        assert!(MethodPattern::parse("ALMemory.insertData").unwrap().may_act());
        assert!(MethodPattern::parse("ALMotion.g*").unwrap().may_act());
        assert!(!MethodPattern::parse("ALMotion.get*").unwrap().may_act());
        assert!(!MethodPattern::parse("ALMotion.robotIsWakeUp").unwrap().may_act());
        assert!(!MethodPattern::parse("Zenoh.stats").unwrap().may_act());
        for bad in ["ALMotion", "ALMotion.", ".get", "AL/Motion.get", "ALMotion.g*t", "ALMotion.$*"] {
            assert_eq!(MethodPattern::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn only_listed_methods_are_served() {
        let exports = Exports { calls: patterns(&["ALMemory.get*"]), moves: patterns(&["ALMotion.moveTo"]) };
        assert!(exports.serves("ALMemory", "getData"));
        assert!(exports.serves("ALMotion", "moveTo"));
        assert!(!exports.serves("ALMotion", "wakeUp"));
        assert!(!exports.serves("ALMemory", "insertData"));
    }

    #[test]
    fn the_moves_are_denied_to_every_peer_but_the_movers() {
        let keys = KeySpace::new("nao-a");
        let exports =
            Exports { calls: Vec::new(), moves: patterns(&["ALMotion.moveTo", "ALMotion.set*", "DCM.*"]) };
        let acl = exports.access_control(&keys, &["coach".into()], None).unwrap();
        assert_eq!(
            acl["rules"][0]["key_exprs"],
            json!([
                "naobroker/nao-a/call/ALMotion/moveTo",
                "naobroker/nao-a/call/ALMotion/set$*",
                "naobroker/nao-a/call/DCM/*"
            ])
        );
        assert_eq!(
            (&acl["rules"][0]["permission"], &acl["rules"][1]["id"]),
            (&json!("deny"), &json!("query_allow"))
        );
        assert_eq!(acl["policies"][0]["rules"], json!(["query_deny"]));
        assert_eq!(
            acl["subjects"],
            json!([{ "id": "everyone" }, { "id": "movers", "usernames": ["coach"] }])
        );
        // Zenoh itself takes it.
        let mut config = zenoh::Config::default();
        config.insert_json5("access_control", &acl.to_string()).unwrap();
        let reads = Exports { calls: patterns(&["ALMemory.get*"]), moves: Vec::new() };
        assert_eq!(reads.access_control(&keys, &["coach".into()], None), None);
        let cmd_vel = reads.access_control(&keys, &["coach".into()], Some("0/cmd_vel/T/H")).unwrap();
        assert_eq!(
            cmd_vel["rules"][0],
            json!({
                "id": "put_deny", "messages": ["put"], "flows": ["ingress"], "permission": "deny",
                "key_exprs": ["0/cmd_vel/T/H"],
            })
        );
    }
}
