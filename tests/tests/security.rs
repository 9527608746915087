//! Authentication beyond loopback: CURVE listeners admit only clients on the allow-list,
//! from the Rust client (naocli) and the Python client alike.

use std::path::Path;
use std::process::Command;

use naobroker_e2e::{bin, free_port, scratch_dir, TestBroker};
use serde_json::json;

/// `naocli keygen FILE`: the secret key in FILE, the public key printed.
fn keygen(dir: &Path, name: &str) -> (String, String) {
    let file = dir.join(name);
    let output = Command::new(bin("naocli")).arg("keygen").arg(&file).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let public = String::from_utf8(output.stdout).unwrap().trim().to_owned();
    let secret = std::fs::read_to_string(&file).unwrap().trim().to_owned();
    assert_eq!((public.len(), secret.len()), (40, 40));
    (public, secret)
}

/// naocli on the CURVE listener, with these keys (or none).
fn naocli_with(url: &str, keys: Option<(&str, &str)>, args: &[&str]) -> std::process::Output {
    let mut command = Command::new(bin("naocli"));
    command.arg("--url").arg(url).args(args);
    command.env_remove("NAOBROKER_SERVER_KEY").env_remove("NAOBROKER_SECRET_KEY");
    if let Some((server, secret)) = keys {
        command.env("NAOBROKER_SERVER_KEY", server).env("NAOBROKER_SECRET_KEY", secret);
    }
    command.output().unwrap()
}

#[test]
fn only_clients_on_the_allow_list_reach_a_curve_listener() {
    let dir = scratch_dir("curve");
    let (server_public, _) = keygen(&dir, "broker.key");
    let (client_public, client_secret) = keygen(&dir, "client.key");
    let (_, intruder_secret) = keygen(&dir, "intruder.key");
    let port = free_port();
    let curve = format!(
        "[broker.curve]\nlisten = [\"tcp://0.0.0.0:{port}\"]\nsecret_key_file = \"{}\"\n\
         clients = [\"{client_public}\"]\n",
        dir.join("broker.key").display()
    );
    let broker = TestBroker::start_with(&curve, "");
    let remote = format!("tcp://127.0.0.1:{port}");

    let trusted = naocli_with(&remote, Some((&server_public, &client_secret)), &["call", "DCM.getPrefix"]);
    assert!(trusted.status.success(), "{}", String::from_utf8_lossy(&trusted.stderr));
    let prefix: serde_json::Value = serde_json::from_slice(&trusted.stdout).unwrap();
    assert_eq!(prefix, json!(["Device/SubDeviceList/", "Device/DeviceList/"]));

    for keys in [None, Some((server_public.as_str(), intruder_secret.as_str()))] {
        let refused = naocli_with(&remote, keys, &["call", "DCM.getPrefix"]);
        assert_eq!(refused.status.code(), Some(1));
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(stderr.contains("cannot reach a broker"), "{stderr}");
    }
    // Loopback stays open without keys.
    assert_eq!(broker.call("DCM.getPrefix", &[]), prefix);

    // The Python client with the same keys, through NAOqi's ALProxy.
    let script = "from naoqi import ALProxy\nprint(ALProxy('DCM', '127.0.0.1', 0).getPrefix())";
    let python = Command::new("python3")
        .args(["-c", script])
        .env("NAOBROKER_URL", &remote)
        .env("NAOBROKER_SERVER_KEY", &server_public)
        .env("NAOBROKER_PUBLIC_KEY", &client_public)
        .env("NAOBROKER_SECRET_KEY", &client_secret)
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&python.stdout);
    assert!(
        stdout.contains("Device/SubDeviceList/"),
        "{stdout} {}\n(the client needs pyzmq and msgpack in the first python3 on PATH: the README's \
         test command makes them a virtual environment, `python3 -m venv .venv && .venv/bin/pip \
         install -q ./clients/python pytest qi==3.1.5`, and runs cargo test with \
         PATH=\"$PWD/.venv/bin:$PATH\")",
        String::from_utf8_lossy(&python.stderr)
    );
}

#[test]
fn a_listener_beyond_loopback_without_authentication_refuses_to_start() {
    let port = free_port();
    let output = Command::new(bin("naobroker"))
        .args(["--config", "/dev/null", "--clock", "manual", "--listen", &format!("tcp://0.0.0.0:{port}")])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("needs authentication"), "{stderr}");
}
