//! The naobroker binary: command line, configuration file, logging, then the broker on its actix system.

use std::path::PathBuf;

use clap::Parser;
use naobroker::Config;
use naobroker_dcm::cycle::ClockMode;

/// naobroker: ALMemory, DCM and ALMotion for a NAO, real or simulated.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Configuration file [default: ./broker.toml, built-in defaults when it does not exist].
    #[arg(long)]
    config: Option<PathBuf>,
    /// Endpoint to listen on instead of the configured ones (repeatable).
    #[arg(long)]
    listen: Vec<String>,
    /// Endpoint to listen on for libqi clients instead of the configured ones (repeatable;
    /// `tcp://127.0.0.1:9560`, loopback only: docs/qi.md).
    #[arg(long)]
    qi_listen: Vec<String>,
    /// Serve the live view for Foxglove and Lichtblick on HOST:PORT instead of the configured
    /// one (`127.0.0.1:8765`, loopback only: docs/visualisation.md).
    #[arg(long, value_name = "HOST:PORT")]
    foxglove_listen: Option<String>,
    /// Put the robot on a Zenoh network under this name (docs/team.md), with the configured
    /// `[zenoh]` settings or Zenoh's defaults (a peer with multicast scouting).
    #[arg(long, value_name = "ROBOT")]
    zenoh_robot: Option<String>,
    /// A Zenoh endpoint to connect to (`tcp/192.168.1.10:7447`; repeatable), instead of the
    /// configured ones; puts the robot on the network like --zenoh-robot.
    #[arg(long, value_name = "ENDPOINT")]
    zenoh_connect: Vec<String>,
    /// A Zenoh endpoint to listen on (`tcp/0.0.0.0:7447`; repeatable), instead of the configured
    /// ones; puts the robot on the network like --zenoh-robot.
    #[arg(long, value_name = "ENDPOINT")]
    zenoh_listen: Vec<String>,
    /// `manual`: the DCM cycles only on DCM.step(n).
    #[arg(long, value_parser = parse_clock)]
    clock: Option<ClockMode>,
}

/// A `--clock` that is neither `real` nor `manual`.
#[derive(Debug, thiserror::Error)]
#[error("unknown clock {0:?}: real or manual")]
struct UnknownClock(String);

fn parse_clock(text: &str) -> Result<ClockMode, UnknownClock> {
    match text {
        "real" => Ok(ClockMode::Real),
        "manual" => Ok(ClockMode::Manual),
        other => Err(UnknownClock(other.to_owned())),
    }
}

/// Turn glibc's fast bins off, before any thread starts. A freed small block then goes back
/// to its bin at once instead of waiting in a fast bin, and glibc consolidates every waiting
/// one in the next large allocation, on whichever thread makes it: after a 100 000-key
/// listing was freed on a blocking thread, that took the broker's own thread for 3–5 ms in
/// one go (0.4–0.6 ms without fast bins). Small allocations are still served from each
/// thread's cache (tcache).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn without_fast_bins() {
    /// `M_MXFAST` in glibc's malloc.h: the largest request fast bins serve; 0 turns them off.
    const M_MXFAST: std::ffi::c_int = 1;
    extern "C" {
        fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
    }
    // SAFETY: mallopt only changes the allocator's settings; no thread allocates yet.
    unsafe {
        mallopt(M_MXFAST, 0);
    }
}

fn main() -> std::process::ExitCode {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    without_fast_bins();
    let args = Args::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // Colours on a terminal only: a log file or a pipe gets plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let stderr = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr)
        .finish();
    // The same lines go to `naocli log` (the ServiceDirectory/Log event) while someone subscribes.
    let forwarded =
        tracing_subscriber::layer::SubscriberExt::with(stderr, naobroker_framework::LogForwarding);
    tracing_subscriber::util::SubscriberInitExt::init(forwarded);

    let (path, required) = match &args.config {
        Some(path) => (path.clone(), true),
        None => (PathBuf::from("broker.toml"), false),
    };
    let shown = std::path::absolute(&path).unwrap_or_else(|_| path.clone());
    let loaded = Config::load(&path, required);
    if loaded.is_ok() && path.exists() {
        tracing::info!(config = %shown.display(), "configuration loaded");
    } else if loaded.is_ok() {
        tracing::info!(looked_for = %shown.display(), "no configuration file: built-in defaults");
    }
    let mut config = match loaded {
        Ok(config) => config,
        Err(error) => {
            eprintln!("naobroker: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    if !args.listen.is_empty() {
        config.broker.listen = args.listen;
    }
    if !args.qi_listen.is_empty() {
        config.qi.listen = args.qi_listen;
    }
    if args.foxglove_listen.is_some() {
        config.foxglove.listen = args.foxglove_listen;
    }
    if args.zenoh_robot.is_some() || !args.zenoh_connect.is_empty() || !args.zenoh_listen.is_empty() {
        let zenoh = config.zenoh.get_or_insert_with(Default::default);
        if args.zenoh_robot.is_some() {
            zenoh.robot = args.zenoh_robot;
        }
        if !args.zenoh_connect.is_empty() {
            zenoh.connect = args.zenoh_connect;
        }
        if !args.zenoh_listen.is_empty() {
            zenoh.listen = args.zenoh_listen;
        }
    }
    if let Some(clock) = args.clock {
        config.dcm.clock = clock;
    }
    let system = actix_rt::System::new();
    let running = match system.block_on(naobroker::start(&config)) {
        Ok(running) => running,
        Err(error) => {
            eprintln!("naobroker: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    tracing::info!("stop with Ctrl-C or SIGTERM");
    // The future `block_on` runs is polled again whenever any task on the broker's thread
    // wakes (tokio's `LocalSet::run_until`): waiting for the signals there polled both of
    // them for every message. As a task of its own, the wait is polled when a signal comes.
    system.block_on(async { actix_rt::spawn(stop_signal()).await.expect("the signal task ends") });
    tracing::info!("naobroker stopping");
    drop(running);
    tracing::info!("naobroker stopped");
    std::process::ExitCode::SUCCESS
}

/// Ctrl-C or SIGTERM.
async fn stop_signal() {
    let mut terminate =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate.recv() => {}
    }
}
