//! naocli: call modules, list them, watch ALMemory and events from a shell.
#![deny(unsafe_code)]

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use naobroker_framework::{from_value, to_value, CallError, ClientSession, Value};

#[derive(Parser)]
#[command(version, about = "Talk to a naobroker: list modules, call methods, watch memory and events")]
struct Cli {
    /// Broker endpoint.
    #[arg(long, global = true, env = "NAOBROKER_URL", default_value = "tcp://127.0.0.1:9559")]
    url: String,
    /// Give up on a call after this many seconds (default: wait as long as the callee lives).
    #[arg(long, global = true, value_name = "SECONDS")]
    timeout: Option<f64>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List modules, or one module's methods with signatures and help.
    Info { module: Option<String> },
    /// Call MODULE.METHOD; each ARG is JSON (`0`, `"Merge"`, `'["HeadYaw", 0.5]'`); an ARG
    /// that is not JSON is taken as a string. Prints the result as JSON.
    Call {
        target: String,
        #[arg(allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Start MODULE.METHOD as a task; prints its id.
    Post {
        target: String,
        #[arg(allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Print ALMemory values as they change (JSON lines).
    Watch {
        #[arg(required = true)]
        keys: Vec<String>,
    },
    /// Print events as they arrive (JSON lines).
    Subscribe {
        #[arg(required = true)]
        events: Vec<String>,
    },
    /// Broker and DCM counters.
    Stats,
    /// Make a CURVE key pair (docs/security.md). With SECRET_FILE, the secret key is
    /// written there (readable by its owner only) and the public key printed; without,
    /// both are printed as JSON. Needs no broker.
    Keygen { secret_file: Option<std::path::PathBuf> },
}

fn parse_arg(text: &str) -> Value {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(json) => to_value(&json),
        Err(_) => Value::from(text),
    }
}

fn to_json(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| format!("{value}"))
}

fn split_target(target: &str) -> Result<(&str, &str), CallError> {
    target
        .split_once('.')
        .filter(|(module, method)| !module.is_empty() && !method.is_empty())
        .ok_or_else(|| CallError::new(format!("{target:?}: expected MODULE.METHOD")))
}

fn print_line(line: &str) -> Result<(), CallError> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").and_then(|_| out.flush()).map_err(|e| CallError::new(e.to_string()))
}

/// `naocli keygen`: a fresh key pair, the secret one written only where asked.
fn keygen(secret_file: Option<&std::path::Path>) -> Result<(), CallError> {
    let pair = naobroker_framework::CurveKeyPair::generate();
    let (public, secret) = (pair.public.to_z85(), pair.secret.to_z85());
    let Some(path) = secret_file else {
        return print_line(&serde_json::json!({"public": public, "secret": secret}).to_string());
    };
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|error| CallError::new(format!("{}: {error}", path.display())))?;
    writeln!(file, "{secret}").map_err(|error| CallError::new(format!("{}: {error}", path.display())))?;
    print_line(&public)
}

async fn run(cli: Cli) -> Result<(), CallError> {
    if let Command::Keygen { secret_file } = &cli.command {
        return keygen(secret_file.as_deref());
    }
    let session = ClientSession::connect(&cli.url, "naocli").await?;
    if let Some(seconds) = cli.timeout {
        let limit = Duration::try_from_secs_f64(seconds).map_err(|_| {
            CallError::new(format!("--timeout {seconds}: expected a positive number of seconds"))
        })?;
        session.set_call_timeout(Some(limit));
    }
    match cli.command {
        Command::Info { module: None } => {
            let modules: Vec<String> =
                from_value(session.call("ServiceDirectory", "modules", vec![], false).await?)
                    .map_err(|e| CallError::new(e.to_string()))?;
            for module in modules {
                print_line(&module)?;
            }
        }
        Command::Info { module: Some(module) } => {
            let methods: Vec<(String, String, String)> = from_value(
                session.call("ServiceDirectory", "methods", vec![module.as_str().into()], false).await?,
            )
            .map_err(|e| CallError::new(e.to_string()))?;
            print_line(&module)?;
            for (name, signature, help) in methods {
                print_line(&format!("  {name}{signature}\n      {help}"))?;
            }
        }
        Command::Call { target, args } => {
            let (module, method) = split_target(&target)?;
            let args = args.iter().map(|a| parse_arg(a)).collect();
            let value = session.call(module, method, args, false).await?;
            print_line(&to_json(&value))?;
        }
        Command::Post { target, args } => {
            let (module, method) = split_target(&target)?;
            let args = args.iter().map(|a| parse_arg(a)).collect();
            let id = session.call(module, method, args, true).await?;
            print_line(&to_json(&id))?;
        }
        Command::Watch { keys } => {
            let keys_value = Value::Array(keys.iter().map(|k| Value::from(k.as_str())).collect());
            let mut last: Option<Vec<Value>> = None;
            loop {
                let values = session.call("ALMemory", "getListData", vec![keys_value.clone()], false).await?;
                let Value::Array(values) = values else {
                    return Err(CallError::new("getListData answered no list"));
                };
                for (index, value) in values.iter().enumerate() {
                    if last.as_ref().is_none_or(|last| last[index] != *value) {
                        print_line(&format!(
                            "{{\"key\":{},\"value\":{}}}",
                            to_json(&keys[index].as_str().into()),
                            to_json(value)
                        ))?;
                    }
                }
                last = Some(values);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        Command::Subscribe { events } => {
            let (lines, mut printed) = tokio::sync::mpsc::unbounded_channel();
            for event in &events {
                let mut stream = session.subscribe(event).await?;
                let lines = lines.clone();
                actix_rt::spawn(async move {
                    while let Some(event) = stream.next().await {
                        let line = format!(
                            "{{\"event\":{},\"value\":{}}}",
                            to_json(&event.name.as_str().into()),
                            to_json(&event.value)
                        );
                        if lines.send(line).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(lines);
            while let Some(line) = printed.recv().await {
                print_line(&line)?;
            }
        }
        Command::Stats => {
            let broker = session.call("ServiceDirectory", "stats", vec![], false).await?;
            let dcm = session.call("DCM", "stats", vec![], false).await.unwrap_or(Value::Nil);
            print_line(&to_json(&Value::Map(vec![("broker".into(), broker), ("dcm".into(), dcm)])))?;
        }
        Command::Keygen { .. } => unreachable!("answered before connecting"),
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let system = actix_rt::System::new();
    match system.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("naocli: {error}");
            ExitCode::FAILURE
        }
    }
}
