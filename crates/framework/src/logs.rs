//! `tracing` lines for whoever listens: [`LogForwarding`], a layer that hands each line to
//! the process's log sink (the broker's `ServiceDirectory/Log` event, or a module process's
//! session that sends them to its broker) without ever blocking.

use std::cell::Cell;
use std::fmt::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use tokio::sync::mpsc;
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::Context;
use tracing_subscriber::Layer;

/// The event the broker raises per log line, only while someone subscribes to it.
pub(crate) const LOG_EVENT: &str = "ServiceDirectory/Log";

/// One log line, as `ServiceDirectory/Log` carries it.
pub(crate) struct LogLine {
    pub(crate) level: &'static str,
    pub(crate) target: String,
    pub(crate) message: String,
}

/// Lines waiting for the sink's task; more are dropped, never waited for.
const SINK_CAPACITY: usize = 256;

/// Whether the sink wants lines now: the one check a line costs when nobody listens.
static WANTED: AtomicBool = AtomicBool::new(false);
static SINK: Mutex<Option<mpsc::Sender<LogLine>>> = Mutex::new(None);

thread_local! {
    /// Set while this thread delivers lines, so that what delivering logs is not delivered
    /// again (a line about a dropped event would otherwise feed itself).
    static DELIVERING: Cell<bool> = const { Cell::new(false) };
}

/// Make this process's lines go to a new sink (replacing any earlier one): the receiver.
pub(crate) fn attach_sink() -> mpsc::Receiver<LogLine> {
    let (sender, receiver) = mpsc::channel(SINK_CAPACITY);
    *SINK.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(sender);
    receiver
}

/// Whether lines are handed to the sink (the broker: someone subscribes to them).
pub(crate) fn set_wanted(wanted: bool) {
    WANTED.store(wanted, Ordering::Relaxed);
}

/// Run `deliver` with this thread's lines kept from the sink.
pub(crate) fn delivering<T>(deliver: impl FnOnce() -> T) -> T {
    DELIVERING.with(|flag| flag.set(true));
    let result = deliver();
    DELIVERING.with(|flag| flag.set(false));
    result
}

fn offer(line: LogLine) {
    // try_lock: a thread never waits for another's line.
    if let Ok(sink) = SINK.try_lock() {
        if let Some(sender) = sink.as_ref() {
            let _ = sender.try_send(line);
        }
    }
}

/// The message and the other fields of an event, as `message key=value ...`.
#[derive(Default)]
struct MessageText(String);

impl Visit for MessageText {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let separator = if self.0.is_empty() { "" } else { " " };
        let _ = match field.name() {
            "message" => write!(self.0, "{separator}{value:?}"),
            name => write!(self.0, "{separator}{name}={value:?}"),
        };
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        let separator = if self.0.is_empty() { "" } else { " " };
        let _ = match field.name() {
            "message" => write!(self.0, "{separator}{value}"),
            name => write!(self.0, "{separator}{name}={value}"),
        };
    }
}

/// A `tracing` layer that forwards each line the subscriber's filter lets through to the
/// process's log sink while the sink wants lines: the broker installs it beside its stderr
/// output, and [`crate::remote::main`] in module processes. Add it to your own subscriber
/// (`tracing_subscriber::registry().with(LogForwarding)`) to forward a module's lines when you
/// set up `tracing` yourself.
pub struct LogForwarding;

impl<S: tracing::Subscriber> Layer<S> for LogForwarding {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if !WANTED.load(Ordering::Relaxed) || DELIVERING.with(Cell::get) {
            return;
        }
        let mut message = MessageText::default();
        event.record(&mut message);
        let metadata = event.metadata();
        offer(LogLine {
            level: metadata.level().as_str(),
            target: metadata.target().to_owned(),
            message: message.0,
        });
    }
}

/// What a module process's `main` sets up when the author did not: `tracing` lines to stderr
/// (coloured only on a terminal: a file or a pipe gets plain text), filtered by `RUST_LOG`
/// (`info` when unset), and forwarded to the broker. Does nothing when the process already
/// has a `tracing` subscriber.
pub(crate) fn init_module_logging() {
    use std::io::IsTerminal;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let output = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .finish();
    let _ = output.with(LogForwarding).try_init();
}
