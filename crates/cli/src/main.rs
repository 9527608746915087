//! naocli: call modules, list them, watch ALMemory and events from a shell.
#![deny(unsafe_code)]

mod events;
mod logs;
mod mcap_file;
mod memory;
mod output;
mod plot;
mod record;
mod top;

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use naobroker_framework::{from_value, CallError, ClientSession, Value};
use output::{parse_arg, print_line, to_json, Output};

#[derive(Parser)]
#[command(version, about = "Talk to a naobroker: list modules, call methods, watch memory and events")]
struct Cli {
    /// Broker endpoint.
    #[arg(long, global = true, env = "NAOBROKER_URL", default_value = "tcp://127.0.0.1:9559")]
    url: String,
    /// Give up on a call after this many seconds (default: wait as long as the callee lives).
    #[arg(long, global = true, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// Print JSON: one JSON value per line (per result, per change, per event).
    #[arg(long, global = true)]
    json: bool,
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
    /// Print ALMemory values (several keys at once).
    Get {
        #[arg(required = true)]
        keys: Vec<String>,
    },
    /// ALMemory.insertData KEY VALUE; VALUE is JSON, or a string when it is not JSON.
    Set {
        key: String,
        #[arg(allow_hyphen_values = true)]
        value: String,
    },
    /// Print ALMemory values, then each change (ALMemory.getDataOnChange, no polling).
    Watch {
        #[arg(required = true)]
        keys: Vec<String>,
    },
    /// Print events as they arrive.
    Subscribe {
        #[arg(required = true)]
        events: Vec<String>,
    },
    /// Calls per second, errors and latency per module, refreshed every INTERVAL seconds.
    Top {
        #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
        interval: f64,
        /// Stop after this many refreshes.
        #[arg(long)]
        count: Option<u64>,
    },
    /// Each call (caller, module.method, duration, outcome) and each event, live; with
    /// MODULEs, only the calls to them.
    Trace { modules: Vec<String> },
    /// The broker's and its module processes' log lines, live.
    Log {
        /// Only lines at LEVEL or above (TRACE, DEBUG, INFO, WARN, ERROR).
        #[arg(long)]
        level: Option<String>,
        /// Only lines of module NAME (`broker` for the broker's own) or whose target starts with NAME.
        #[arg(long)]
        module: Option<String>,
    },
    /// Record the robot (joints, link transforms, sensors: the Foxglove live view's channels)
    /// and real-time keys every DCM cycle, and EVENTs as they arrive, into an MCAP file until
    /// Ctrl-C (docs/recording.md).
    Record {
        keys: Vec<String>,
        /// An event to record too (repeatable).
        #[arg(long = "event", value_name = "NAME")]
        events: Vec<String>,
        #[arg(long, value_name = "FILE.mcap")]
        out: std::path::PathBuf,
        /// The robot description the broker runs (its `[dcm] robot`) [default: the shipped NAO V6].
        #[arg(long, value_name = "FILE")]
        robot: Option<std::path::PathBuf>,
    },
    /// Plot recorded keys (all when none named) over the seconds since the recording's start
    /// into a PNG. Needs no broker.
    Plot {
        recording: std::path::PathBuf,
        keys: Vec<String>,
        #[arg(long, value_name = "FILE.png")]
        out: std::path::PathBuf,
    },
    /// Write the robot's model as a URDF (primitive shapes, links named after NAOqi's
    /// frames), generated from the robot description, for Foxglove, Lichtblick, RViz and any
    /// URDF tool (docs/visualisation.md). To stdout without --out. Needs no broker.
    Urdf {
        #[arg(long, value_name = "FILE.urdf")]
        out: Option<std::path::PathBuf>,
        /// The robot description to write the URDF of [default: the shipped NAO V6].
        #[arg(long, value_name = "FILE")]
        robot: Option<std::path::PathBuf>,
    },
    /// Broker, DCM and (when it is on) Foxglove live view counters.
    Stats,
    /// Make a CURVE key pair (docs/security.md). With SECRET_FILE, the secret key is
    /// written there (readable by its owner only) and the public key printed; without,
    /// both are printed as JSON. Needs no broker.
    Keygen { secret_file: Option<std::path::PathBuf> },
}

fn split_target(target: &str) -> Result<(&str, &str), CallError> {
    target
        .split_once('.')
        .filter(|(module, method)| !module.is_empty() && !method.is_empty())
        .ok_or_else(|| CallError::new(format!("{target:?}: expected MODULE.METHOD")))
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

/// The viewer's model of a robot description file, or of the shipped NAO V6.
fn viewer_model(robot: Option<&std::path::Path>) -> Result<naobroker_urdf::ViewerModel, CallError> {
    let Some(path) = robot else { return Ok(naobroker_urdf::ViewerModel::nao_v6()) };
    let robot = naobroker_robot::device::RobotDescription::load(path)
        .map_err(|error| CallError::bad_argument(error.to_string()))?;
    naobroker_urdf::ViewerModel::from_description(&robot)
        .map_err(|error| CallError::new(format!("{}: {error}", path.display())))
}

/// `naocli urdf`: a robot description's URDF (the shipped NAO V6's by default), to a file or
/// stdout.
fn urdf(out: Option<&std::path::Path>, robot: Option<&std::path::Path>) -> Result<(), CallError> {
    let urdf = viewer_model(robot)?.urdf;
    match out {
        Some(path) => {
            std::fs::write(path, urdf).map_err(|error| CallError::new(format!("{}: {error}", path.display())))
        }
        None => print_line(urdf.trim_end()),
    }
}

fn seconds_arg(flag: &str, seconds: f64) -> Result<Duration, CallError> {
    Duration::try_from_secs_f64(seconds)
        .map_err(|_| CallError::new(format!("{flag} {seconds}: expected a positive number of seconds")))
}

async fn run(cli: Cli) -> Result<(), CallError> {
    if let Command::Keygen { secret_file } = &cli.command {
        return keygen(secret_file.as_deref());
    }
    if let Command::Plot { recording, keys, out } = &cli.command {
        return plot::plot(recording, keys, out);
    }
    if let Command::Urdf { out, robot } = &cli.command {
        return urdf(out.as_deref(), robot.as_deref());
    }
    let session = ClientSession::connect(&cli.url, "naocli").await?;
    let result = run_on(&session, cli).await;
    // Whatever the outcome, a goodbye: the broker forgets naocli at once, without waiting
    // out its silence (and without logging it as a client that went silent).
    session.shutdown().await;
    result
}

async fn run_on(session: &ClientSession, cli: Cli) -> Result<(), CallError> {
    if let Some(seconds) = cli.timeout {
        session.set_call_timeout(Some(seconds_arg("--timeout", seconds)?));
    }
    let output = Output { json: cli.json };
    match cli.command {
        Command::Info { module: None } => {
            let modules: Vec<String> =
                from_value(session.call("ServiceDirectory", "modules", vec![], false).await?)
                    .map_err(|e| CallError::new(e.to_string()))?;
            output.emit(&serde_json::json!(modules), || modules.join("\n"))?;
        }
        Command::Info { module: Some(module) } => {
            let methods: Vec<(String, String, String)> = from_value(
                session.call("ServiceDirectory", "methods", vec![module.as_str().into()], false).await?,
            )
            .map_err(|e| CallError::new(e.to_string()))?;
            let json = methods
                .iter()
                .map(|(name, signature, help)| {
                    serde_json::json!({"name": name, "signature": signature, "help": help})
                })
                .collect();
            output.emit(&serde_json::Value::Array(json), || {
                let lines = methods
                    .iter()
                    .map(|(name, signature, help)| format!("  {name}{signature}\n      {help}"));
                std::iter::once(module.clone()).chain(lines).collect::<Vec<_>>().join("\n")
            })?;
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
        Command::Get { keys } => memory::get(session, &keys, output).await?,
        Command::Set { key, value } => memory::set(session, &key, &value, output).await?,
        Command::Watch { keys } => memory::watch(session, &keys, output).await?,
        Command::Subscribe { events } => events::subscribe(session, &events, output).await?,
        Command::Top { interval, count } => {
            top::top(session, seconds_arg("--interval", interval)?, count, output).await?
        }
        Command::Trace { modules } => events::trace(session, &modules, output).await?,
        Command::Log { level, module } => {
            logs::log(session, level.as_deref(), module.as_deref(), output).await?
        }
        Command::Stats => {
            let broker = session.call("ServiceDirectory", "stats", vec![], false).await?;
            let dcm = session.call("DCM", "stats", vec![], false).await.unwrap_or(Value::Nil);
            // The live view's, when it is on.
            let foxglove = session.call("Foxglove", "stats", vec![], false).await.unwrap_or(Value::Nil);
            let stats = vec![("broker".into(), broker), ("dcm".into(), dcm), ("foxglove".into(), foxglove)];
            print_line(&to_json(&Value::Map(stats)))?;
        }
        Command::Record { keys, events, out, robot } => {
            record::record(session, &viewer_model(robot.as_deref())?, &keys, &events, &out).await?
        }
        Command::Keygen { .. } | Command::Plot { .. } | Command::Urdf { .. } => {
            unreachable!("answered before connecting")
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let system = actix_rt::System::new();
    match system.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if error.message == output::READER_GONE => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("naocli: {error}");
            ExitCode::FAILURE
        }
    }
}
