//! `led-breather [URL] [PERIOD_MS]`: run LedBreather as its own process.
fn main() -> std::process::ExitCode {
    let period = std::env::args().nth(2).and_then(|p| p.parse().ok()).unwrap_or(2000);
    naobroker_framework::remote::main("led-breather", led_breather::LedBreather::new(period))
}
