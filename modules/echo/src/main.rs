//! Runs Echo as its own process: `echo [URL]` (default `$NAOBROKER_URL` or tcp://127.0.0.1:9559).
fn main() -> std::process::ExitCode {
    let url = std::env::args().nth(1).or_else(|| std::env::var("NAOBROKER_URL").ok());
    let url = url.unwrap_or_else(|| "tcp://127.0.0.1:9559".into());
    match naobroker_framework::remote::run(&url, echo::Echo::default()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("echo: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
