//! `head-tracker [URL]`: run HeadTracker as its own process.
fn main() -> std::process::ExitCode {
    naobroker_framework::remote::main("head-tracker", head_tracker::HeadTracker::default())
}
