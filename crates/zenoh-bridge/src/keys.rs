//! The key space: everything a robot puts, answers or declares is under
//! `naobroker/<robot>/` (docs/team.md).

/// The first chunk of every key.
pub const ROOT: &str = "naobroker";

/// Whether `text` (an ALMemory key, an event, a module or method name) is a Zenoh key
/// expression as it is, without wildcards: non-empty chunks between single slashes, none of
/// Zenoh's reserved characters (`*`, `$`, `?`, `#`). An ALMemory key that is not has no
/// Zenoh key: it is neither published nor answered (docs/team.md).
pub(crate) fn is_plain_key(text: &str) -> bool {
    !text.is_empty() && text.split('/').all(|chunk| !chunk.is_empty()) && !text.contains(['*', '$', '?', '#'])
}

/// One robot's keys.
#[derive(Debug, Clone)]
pub(crate) struct KeySpace {
    robot: String,
}

/// What a call's key names.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct CallTarget<'a> {
    pub(crate) module: &'a str,
    pub(crate) method: &'a str,
}

impl KeySpace {
    pub(crate) fn new(robot: &str) -> KeySpace {
        KeySpace { robot: robot.to_owned() }
    }

    pub(crate) fn robot(&self) -> &str {
        &self.robot
    }

    /// `naobroker/<robot>`: the robot's liveliness token.
    pub(crate) fn presence(&self) -> String {
        format!("{ROOT}/{}", self.robot)
    }

    /// `naobroker/<robot>/module/<module>`: a module's liveliness token.
    pub(crate) fn module(&self, module: &str) -> String {
        format!("{ROOT}/{}/module/{module}", self.robot)
    }

    /// `naobroker/<robot>/memory/<key>`: an ALMemory value.
    pub(crate) fn memory(&self, key: &str) -> String {
        format!("{ROOT}/{}/memory/{key}", self.robot)
    }

    /// `naobroker/<robot>/event/<name>`: an event as it is raised.
    pub(crate) fn event(&self, name: &str) -> String {
        format!("{ROOT}/{}/event/{name}", self.robot)
    }

    /// `naobroker/<robot>/call/<module>/<method>`: a method's queryable.
    pub(crate) fn call(&self, module: &str, method: &str) -> String {
        format!("{ROOT}/{}/call/{module}/{method}", self.robot)
    }

    /// What the memory queryable answers: `naobroker/<robot>/memory/**`.
    pub(crate) fn memory_space(&self) -> String {
        format!("{ROOT}/{}/memory/**", self.robot)
    }

    /// What the call queryable answers: `naobroker/<robot>/call/**`.
    pub(crate) fn call_space(&self) -> String {
        format!("{ROOT}/{}/call/**", self.robot)
    }

    /// The module and method a call's key names; none unless exactly `Module/method` without
    /// wildcards follows the call prefix.
    pub(crate) fn call_target<'a>(&self, key_expr: &'a str) -> Option<CallTarget<'a>> {
        let rest = self.strip(key_expr, "call")?;
        let (module, method) = rest.split_once('/')?;
        let plain = |chunk: &str| !chunk.is_empty() && !chunk.contains(['/', '*', '$']);
        (plain(module) && plain(method)).then_some(CallTarget { module, method })
    }

    fn strip<'a>(&self, key_expr: &'a str, section: &str) -> Option<&'a str> {
        key_expr
            .strip_prefix(ROOT)?
            .strip_prefix('/')?
            .strip_prefix(self.robot.as_str())?
            .strip_prefix('/')?
            .strip_prefix(section)?
            .strip_prefix('/')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_carry_the_robot_name() {
        let keys = KeySpace::new("nao-a");
        assert_eq!(keys.presence(), "naobroker/nao-a");
        assert_eq!(keys.module("ALMotion"), "naobroker/nao-a/module/ALMotion");
        assert_eq!(keys.memory("DCM/Time"), "naobroker/nao-a/memory/DCM/Time");
        assert_eq!(keys.event("robotHasFallen"), "naobroker/nao-a/event/robotHasFallen");
        assert_eq!(keys.call("ALMemory", "getData"), "naobroker/nao-a/call/ALMemory/getData");
    }

    #[test]
    fn a_call_names_one_method_of_this_robot() {
        let keys = KeySpace::new("nao-a");
        let target = keys.call_target("naobroker/nao-a/call/ALMemory/getData");
        assert_eq!(target, Some(CallTarget { module: "ALMemory", method: "getData" }));
        for refused in [
            "naobroker/nao-a/call/ALMemory",
            "naobroker/nao-a/call/ALMemory/*",
            "naobroker/nao-a/call/*/getData",
            "naobroker/nao-a/call/ALMemory/getData/extra",
            "naobroker/nao-a/call/ALMemory/get$*",
            "naobroker/nao-b/call/ALMemory/getData",
            "naobroker/nao-ab/call/ALMemory/getData",
        ] {
            assert_eq!(keys.call_target(refused), None, "{refused}");
        }
    }

    #[test]
    fn plain_keys_are_valid_key_expressions() {
        for plain in ["DCM/Time", "Device/SubDeviceList/HeadYaw/Position/Sensor/Value", "a.b-c"] {
            assert!(is_plain_key(plain));
            assert!(zenoh::key_expr::KeyExpr::try_from(plain).is_ok());
        }
        for odd in ["", "/a", "a/", "a//b", "a/*", "a$b", "what?", "#1"] {
            assert!(!is_plain_key(odd), "{odd:?}");
        }
    }
}
