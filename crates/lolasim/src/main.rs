//! The `naobroker-lolasim` binary: a simulated NAO V6 serving LoLA on a Unix socket, with
//! scripted sensors from the command line and fault injection from its standard input.

use std::io::BufRead;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use naobroker_lolasim::control::{Command, COMMANDS};
use naobroker_lolasim::{Cadence, LolaSim, Options};
use naobroker_physics::World;
use naobroker_robot::device::RobotDescription;

/// A simulated NAO V6 that speaks LoLA: one 896-byte sensor map every 12 ms to one client.
#[derive(Parser)]
#[command(version, after_help = format!("Commands on standard input, one a line: {COMMANDS}"))]
struct Args {
    /// The Unix stream socket to serve.
    #[arg(long, default_value = naobroker_lola::DEFAULT_SOCKET)]
    socket: PathBuf,
    /// Robot description (joint limits and speeds, sensors at rest) [default: NAO V6].
    #[arg(long)]
    robot: Option<PathBuf>,
    /// Send a sensor map only once the previous one was answered, waiting at most MS.
    #[arg(long, value_name = "MS")]
    wait_for_answers: Option<u64>,
    /// A scripted sensor value, KEY[INDEX]=VALUE or KEY=V1,V2,... (repeatable), e.g.
    /// Touch[1]=1, Accelerometer=0,0,-9.81, Battery[0]=0.5, Sonar=0.4,0.5.
    #[arg(long = "set", value_name = "ASSIGNMENT")]
    assignments: Vec<String>,
    /// SCHED_FIFO priority (1-99) of the simulator's threads [default: the normal
    /// scheduler]; needs root or CAP_SYS_NICE, the simulator runs on without.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=99))]
    priority: Option<u8>,
    /// The physical robot: MuJoCo (installed by the README's test command into .venv), its
    /// sensors from its body: it stands, falls, and feels the ground.
    #[arg(long)]
    physics: bool,
    /// The physical robot's world: flat (ground only) or room (a wall 1.5 m ahead, a ball).
    #[arg(long, default_value = "flat", value_parser = ["flat", "room"])]
    world: String,
    /// Log the counts every SECS seconds (0: never).
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    stats_every: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("naobroker-lolasim: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let mut options = Options { priority: args.priority, ..Options::at(args.socket) };
    if let Some(path) = &args.robot {
        options.robot = RobotDescription::load(path)?;
    }
    if let Some(ms) = args.wait_for_answers {
        options.cadence = Cadence::RealTimeWaitingForAnswers { timeout: Duration::from_millis(ms) };
    }
    if args.physics {
        options.physics = World::from_name(&args.world);
    } else if args.world != "flat" {
        return Err("--world needs --physics".into());
    }
    let sim = LolaSim::start(options)?;
    for assignment in &args.assignments {
        sim.assign(assignment)?;
    }
    std::thread::scope(|scope| {
        scope.spawn(|| follow_commands(&sim));
        loop {
            if args.stats_every == 0 {
                std::thread::park();
                continue;
            }
            std::thread::sleep(Duration::from_secs(args.stats_every));
            tracing::info!("lolasim: {}", sim.stats());
        }
    })
}

/// Carry out the commands of the standard input until it ends (then serve on).
fn follow_commands(sim: &LolaSim) {
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { return };
        if line.trim().is_empty() {
            continue;
        }
        let outcome = Command::parse(&line)
            .map_err(|error| error.to_string())
            .and_then(|command| sim.apply(&command).map_err(|error| error.to_string()));
        match outcome {
            Ok(reply) => println!("{reply}"),
            Err(error) => println!("error: {error}"),
        }
    }
}
