//! `naocli subscribe` and `trace`: events as they arrive, and the broker's trace of each call
//! and event (`ServiceDirectory/Trace`, raised by the broker only while someone listens).

use naobroker_framework::{CallError, ClientSession, Event};

use crate::output::{field, json_of, text_field, to_json, Output};

/// Every event of `names`, each handed to `print` as it arrives, until the broker goes.
pub(crate) async fn each_event(
    session: &ClientSession,
    names: &[String],
    mut print: impl FnMut(Event) -> Result<(), CallError>,
) -> Result<(), CallError> {
    let (events, mut arrived) = tokio::sync::mpsc::unbounded_channel();
    for name in names {
        let mut stream = session.subscribe(name).await?;
        let events = events.clone();
        actix_rt::spawn(async move {
            while let Some(event) = stream.next().await {
                if events.send(event).is_err() {
                    break;
                }
            }
        });
    }
    drop(events);
    while let Some(event) = arrived.recv().await {
        print(event)?;
    }
    Ok(())
}

/// `subscribe EVENT...`: `{"event", "value"}` per event.
pub(crate) async fn subscribe(
    session: &ClientSession,
    names: &[String],
    output: Output,
) -> Result<(), CallError> {
    each_event(session, names, |event| {
        let json = serde_json::json!({"event": event.name, "value": json_of(&event.value)});
        output.emit(&json, || format!("{}: {}", event.name, to_json(&event.value)))
    })
    .await
}

const TRACE_EVENT: &str = "ServiceDirectory/Trace";

/// `trace [MODULE...]`: each call (to one of `modules`, or any) and each event, one line each.
pub(crate) async fn trace(
    session: &ClientSession,
    modules: &[String],
    output: Output,
) -> Result<(), CallError> {
    each_event(session, &[TRACE_EVENT.to_owned()], |event| {
        let record = &event.value;
        let is_call = text_field(record, "kind") == "call";
        let module = text_field(record, "module");
        let wanted = modules.is_empty() || (is_call && modules.contains(&module));
        if !wanted {
            return Ok(());
        }
        output.emit(&json_of(record), || {
            if !is_call {
                return format!(
                    "event {} → {} subscribers",
                    text_field(record, "event"),
                    text_field(record, "subscribers")
                );
            }
            let outcome = match field(record, "ok").and_then(|ok| ok.as_bool()) {
                Some(true) => "ok".to_owned(),
                _ => format!("error: {}", text_field(record, "error")),
            };
            format!(
                "{} → {module}.{} {} µs {outcome}",
                text_field(record, "caller"),
                text_field(record, "method"),
                text_field(record, "duration_us")
            )
        })
    })
    .await
}
