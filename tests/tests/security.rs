//! Authentication beyond loopback: CURVE listeners admit only clients on the allow-list,
//! from the Rust client (naocli) and the Python client alike.

use std::path::Path;
use std::process::Command;

use naobroker_e2e::hostile::RawClient;
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

/// The names in `ServiceDirectory.stats`' client table, as naocli (with these keys) reads it.
fn client_names_in_stats(url: &str, keys: Option<(&str, &str)>) -> Vec<String> {
    let output = naocli_with(url, keys, &["call", "ServiceDirectory.stats"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stats: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let clients = stats["clients"].as_array().expect("a client table").iter();
    clients.map(|client| client["name"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn stats_show_a_client_its_own_entries_and_every_client_only_to_a_named_reader() {
    let dir = scratch_dir("stats-readers");
    let (server_public, _) = keygen(&dir, "broker.key");
    let (reader_public, reader_secret) = keygen(&dir, "reader.key");
    let (other_public, other_secret) = keygen(&dir, "other.key");
    let port = free_port();
    let curve = format!(
        "[broker.curve]\nlisten = [\"tcp://127.0.0.1:{port}\"]\nsecret_key_file = \"{}\"\n\
         clients = [\"{reader_public}\", \"{other_public}\"]\nstats_readers = [\"{reader_public}\"]\n",
        dir.join("broker.key").display()
    );
    let broker = TestBroker::start_with(&curve, "");
    let _bystander = RawClient::connect(&broker.url, "bystander");
    let remote = format!("tcp://127.0.0.1:{port}");
    // On loopback, and over CURVE with a key that is not a reader: its own entries only.
    for (url, keys) in [(broker.url.as_str(), None), (remote.as_str(), Some((&server_public, &other_secret)))]
    {
        let keys = keys.map(|(server, secret): (&String, &String)| (server.as_str(), secret.as_str()));
        let names = client_names_in_stats(url, keys);
        assert!(!names.is_empty() && !names.contains(&"bystander".to_owned()), "{names:?}");
    }
    // The reader named in the configuration sees every client.
    let names = client_names_in_stats(&remote, Some((&server_public, &reader_secret)));
    assert!(names.contains(&"bystander".to_owned()), "{names:?}");
}
