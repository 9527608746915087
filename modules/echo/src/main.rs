//! Runs Echo as its own process: `echo [URL]` (default `$NAOBROKER_URL` or tcp://127.0.0.1:9559).
fn main() -> std::process::ExitCode {
    naobroker_framework::remote::main("echo", echo::Echo::default())
}
