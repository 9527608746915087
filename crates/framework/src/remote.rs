//! Running a module as its own process, connected to a broker.

use crate::actor::ModuleActor;
use crate::client::ClientSession;
use crate::error::CallError;
use crate::logs;
use crate::module::{Module, ModuleContext};
use crate::session::Session;

/// Connect to the broker at `url` and serve `module` there until `exit` is called
/// or the process ends. Must run inside an actix system (`#[actix_rt::main]`).
///
/// The session reconnects and registers the module again if the broker restarts.
pub async fn serve<M: Module>(url: &str, module: M) -> Result<ClientSession, CallError> {
    let name = module.name();
    tracing::debug!(module = %name, %url, "connecting to the broker");
    let session = ClientSession::connect(url, &name).await?;
    attach(&session, module).await?;
    forward_logs(&session);
    // After forward_logs, so that the broker's log shows it too.
    tracing::info!(module = %name, %url, "module registered, serving");
    Ok(session)
}

/// Send the lines [`crate::LogForwarding`] catches in this process to the broker
/// (`ServiceDirectory.log`), one call at a time; lines beyond the sink's capacity are dropped.
fn forward_logs(session: &ClientSession) {
    let mut lines = logs::attach_sink();
    logs::set_wanted(true);
    let session = session.clone();
    actix_rt::spawn(async move {
        while let Some(line) = lines.recv().await {
            // The client's own lines are about the sending itself: forwarding them would feed
            // the sending.
            if line.target.starts_with("naobroker_framework::client") {
                continue;
            }
            let args = vec![line.level.into(), line.target.into(), line.message.into()];
            let _ = session.call("ServiceDirectory", "log", args, false).await;
        }
    });
}

/// Serve `module` over an existing session (several modules can share one).
pub async fn attach<M: Module>(session: &ClientSession, module: M) -> Result<(), CallError> {
    let name = module.name();
    let context = ModuleContext::new(Session::Client(session.clone()), &name);
    let on_exit: Box<dyn Fn()> = Box::new(|| {
        // Let the reply to `exit` leave before the process goes.
        actix_rt::spawn(async {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            actix_rt::System::current().stop();
        });
    });
    session.register(&name, ModuleActor::start(module, context, Some(on_exit))).await
}

/// The broker URL a module process was given: its first argument, else
/// `$NAOBROKER_URL`, else `tcp://127.0.0.1:9559`.
fn url_from_args() -> String {
    std::env::args()
        .nth(1)
        .or_else(|| std::env::var("NAOBROKER_URL").ok())
        .unwrap_or_else(|| "tcp://127.0.0.1:9559".into())
}

/// The whole `main` of a module process: serve `module` at the URL the process was given until it
/// exits; a failure is printed as `program: error` with exit code 1. Its `tracing` lines go to
/// stderr (`RUST_LOG`, `info` by default) and to the broker (`naocli log`), unless the process
/// set up `tracing` itself.
pub fn main<M: Module>(program: &str, module: M) -> std::process::ExitCode {
    logs::init_module_logging();
    match run(&url_from_args(), module) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{program}: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Block on a remote module until its system stops (`exit`, or a signal).
pub fn run<M: Module>(url: &str, module: M) -> Result<(), CallError> {
    let system = actix_rt::System::new();
    let url = url.to_owned();
    let session = system.block_on(async move { serve(&url, module).await })?;
    system.run().map_err(|error| CallError::new(error.to_string()))?;
    drop(session);
    Ok(())
}
