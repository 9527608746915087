//! `head-tracker [URL]`: run HeadTracker as its own process.
fn main() -> std::process::ExitCode {
    let url = std::env::args().nth(1).or_else(|| std::env::var("NAOBROKER_URL").ok());
    let url = url.unwrap_or_else(|| "tcp://127.0.0.1:9559".into());
    match naobroker_framework::remote::run(&url, head_tracker::HeadTracker::default()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("head-tracker: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
