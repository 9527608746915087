//! naobench: measurements of naobroker beside a floor or a peer measured in the same run.
//!
//! This machine is a VM where a thread wake-up costs 50–100 µs and the host adds
//! millisecond pauses: every table reports medians, and ratios against a reference
//! measured in the same run, never absolute targets alone.
#![deny(unsafe_code)]

mod balance;
mod cartesian;
mod cycle;
mod foxglove;
mod helpers;
mod ingest;
mod lola;
mod memory;
mod physics;
mod qi;
mod rpc;
mod stats;
mod team;
mod walk;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(version, about = "naobroker benchmarks")]
struct Cli {
    /// Print one JSON object instead of a table.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Round-trip latency of ALMemory.getData from another process, beside a TCP floor and raw zeromq.
    Rpc {
        #[arg(long, default_value_t = 5000)]
        calls: usize,
        /// Also the Python client beside libqi's (clients/python/bench_rpc.py).
        #[arg(long)]
        python: bool,
    },
    /// ALMemory round trips, getListData of 150 DCM keys, event delivery to 1 and 10 processes.
    Memory {
        #[arg(long, default_value_t = 3000)]
        calls: usize,
    },
    /// Timed commands accepted per second through setAlias time-separate.
    Ingest {
        #[arg(long, default_value_t = 2.0)]
        seconds: f64,
    },
    /// DCM cycle lateness and compute time beside a bare clock_nanosleep loop.
    Cycle {
        /// Seconds per configuration: the floor and the DCM each run this long in the five
        /// comparisons, the four buffer-depth runs at most 10 s (the default takes about 2½ min).
        #[arg(long, default_value_t = 10.0)]
        seconds: f64,
        #[arg(long, default_value_t = 80)]
        priority: u8,
        /// CPU for the cycle and the floor; the busy load runs on the other one.
        #[arg(long, default_value_t = 1)]
        cpu: usize,
        /// Also draw the lateness histograms (floor beside DCM, one panel per configuration).
        #[arg(long, value_name = "FILE.png")]
        plot: Option<std::path::PathBuf>,
    },
    /// The cycle of `cycle` on the manual clock, for counting its instructions with callgrind.
    #[command(hide = true)]
    CycleSteps {
        #[arg(long, default_value_t = 1000)]
        cycles: u64,
        #[arg(long, default_value_t = 10_000)]
        period_us: u32,
        #[arg(long, default_value_t = 2000)]
        depth: usize,
    },
    /// LoLA sensor map → actuator map latency and missed answers of naobroker driving
    /// naobroker-lolasim, beside a bare client, the cores idle then busy.
    Lola {
        /// Seconds of naobroker per load (the floor runs as long, in two halves around it).
        #[arg(long, default_value_t = 20.0)]
        seconds: f64,
    },
    /// naobroker-lolasim's physical robot (MuJoCo) beside its kinematic one: simulated seconds
    /// per wall second stepped against a bare client, and missed maps in real time with naobroker.
    Physics {
        /// Simulated seconds per stepped run, and seconds of naobroker per real-time run.
        #[arg(long, default_value_t = 20.0)]
        seconds: f64,
    },
    /// The `qi` 3.1.5 Python client calling libqi's own server and naobroker's qi listener,
    /// interleaved: ServiceDirectory.machineId on both, ALMemory.getData on naobroker.
    Qi {
        #[arg(long, default_value_t = 5000)]
        calls: usize,
        /// Calls of one server in a row before the client turns to the next.
        #[arg(long, default_value_t = 100)]
        block: usize,
    },
    /// ALMotion's Cartesian planning time (setPositions, positionInterpolations), and another
    /// client's ALMemory.getData while setPositions calls keep the planning thread busy.
    Cartesian {
        #[arg(long, default_value_t = 3000)]
        calls: usize,
    },
    /// The whole body's solve per motion cycle (naobroker-balance), beside its parts: the legs'
    /// closed-form inverse kinematics and one forward kinematics with the centre of mass.
    Balance {
        #[arg(long, default_value_t = 20000)]
        calls: usize,
    },
    /// The walk on the physical NAO (MuJoCo), ground truth: top straight speed without a fall,
    /// turn rate, odometry error per metre, falls per 100 m, the walk's compute per cycle.
    Walk {
        /// Runs per step size for the top speed.
        #[arg(long, default_value_t = 10)]
        runs: usize,
        /// Metres per run.
        #[arg(long, default_value_t = 5.0)]
        distance: f64,
    },
    /// The broker's CPU time and DCM lateness with the Foxglove live view's server, no viewer
    /// and 50 viewers coming and going, beside the broker without it, in alternating runs.
    Foxglove {
        #[arg(long, default_value_t = 10.0)]
        seconds: f64,
        #[arg(long, default_value_t = 5)]
        runs: usize,
    },
    /// Seven simulated robots at their cycle rate, without Zenoh then on one Zenoh network: each
    /// broker's CPU time and memory, and a value's latency from a robot's cycle to a subscriber.
    Team {
        #[arg(long, default_value_t = 10.0)]
        seconds: f64,
    },
    /// One client keeping `in_flight` getData calls under way against a running broker at
    /// `url`, for counting the broker's and the client's instructions per call with callgrind.
    #[command(hide = true)]
    RpcLoad {
        url: String,
        #[arg(long, default_value_t = 12_000)]
        calls: usize,
        #[arg(long, default_value_t = 128)]
        in_flight: usize,
    },
    #[command(hide = true)]
    TcpEcho { request_bytes: usize, reply_bytes: usize },
    #[command(hide = true)]
    ZmqEcho { url: String },
    #[command(hide = true)]
    Subscriber { url: String, event: String, count: usize },
    #[command(hide = true)]
    TcpRelay { subscribers: usize },
    #[command(hide = true)]
    TcpSubscriber { port: u16, count: usize },
    /// The event rows' publisher alone: `events` raises of `event`, one every 2 ms, against a
    /// running broker at `url`, for counting instructions and switches per event.
    #[command(hide = true)]
    EventLoad {
        url: String,
        event: String,
        #[arg(long, default_value_t = 1000)]
        events: usize,
    },
}

fn main() {
    let cli = Cli::parse();
    match cli.command {
        Command::Rpc { calls, python } => {
            rpc::run(calls, cli.json);
            if python {
                rpc::python(calls, cli.json);
            }
        }
        Command::Memory { calls } => memory::run(calls, cli.json),
        Command::Ingest { seconds } => ingest::run(seconds, cli.json),
        Command::Cycle { seconds, priority, cpu, plot } => {
            cycle::run(seconds, priority, cpu, cli.json, plot.as_deref())
        }
        Command::CycleSteps { cycles, period_us, depth } => cycle::steps(cycles, period_us, depth),
        Command::Lola { seconds } => lola::run(seconds, cli.json),
        Command::Physics { seconds } => physics::run(seconds, cli.json),
        Command::Qi { calls, block } => qi::run(calls, block.max(1), cli.json),
        Command::Cartesian { calls } => cartesian::run(calls, cli.json),
        Command::Balance { calls } => balance::run(calls, cli.json),
        Command::Walk { runs, distance } => walk::run(runs, distance, cli.json),
        Command::Foxglove { seconds, runs } => foxglove::run(seconds, runs.max(1), cli.json),
        Command::Team { seconds } => team::run(seconds, cli.json),
        Command::RpcLoad { url, calls, in_flight } => rpc::load(&url, calls, in_flight),
        Command::TcpEcho { request_bytes, reply_bytes } => helpers::tcp_echo(request_bytes, reply_bytes),
        Command::ZmqEcho { url } => helpers::zmq_echo(&url),
        Command::Subscriber { url, event, count } => helpers::subscriber(&url, &event, count),
        Command::TcpRelay { subscribers } => helpers::tcp_relay(subscribers),
        Command::TcpSubscriber { port, count } => helpers::tcp_subscriber(port, count),
        Command::EventLoad { url, event, events } => memory::load(&url, &event, events),
    }
}
