//! `led-breather [URL] [PERIOD_MS]`: run LedBreather as its own process.
fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .or_else(|| std::env::var("NAOBROKER_URL").ok())
        .unwrap_or_else(|| "tcp://127.0.0.1:9559".into());
    let period = args.next().and_then(|p| p.parse().ok()).unwrap_or(2000);
    match naobroker_framework::remote::run(&url, led_breather::LedBreather::new(period)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("led-breather: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
