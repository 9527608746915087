//! `naocli get`, `set` and `watch`: ALMemory's values read, written and followed.

use naobroker_framework::{CallError, ClientSession, Value};

use crate::output::{json_of, parse_arg, to_json, Output};

const MEMORY: &str = "ALMemory";

/// `get KEY...`: one `KEY: value` line per key, or with `--json` one object `{KEY: value}`.
pub(crate) async fn get(session: &ClientSession, keys: &[String], output: Output) -> Result<(), CallError> {
    let list = Value::Array(keys.iter().map(|key| Value::from(key.as_str())).collect());
    let Value::Array(values) = session.call(MEMORY, "getListData", vec![list], false).await? else {
        return Err(CallError::new("ALMemory.getListData answered no list"));
    };
    if output.json {
        let object: serde_json::Map<String, serde_json::Value> =
            keys.iter().cloned().zip(values.iter().map(json_of)).collect();
        return output.emit(&serde_json::Value::Object(object), String::new);
    }
    for (key, value) in keys.iter().zip(&values) {
        crate::output::print_line(&format!("{key}: {}", to_json(value)))?;
    }
    Ok(())
}

/// `set KEY VALUE`: ALMemory's `insertData`, VALUE read as `call` reads its arguments.
pub(crate) async fn set(
    session: &ClientSession,
    key: &str,
    value: &str,
    output: Output,
) -> Result<(), CallError> {
    let value = parse_arg(value);
    session.call(MEMORY, "insertData", vec![key.into(), value.clone()], false).await?;
    output.emit(&serde_json::json!({"key": key, "value": json_of(&value)}), || {
        format!("{key}: {}", to_json(&value))
    })
}

/// How long one `getDataOnChange` waits before naocli reads the key again: the read catches a
/// change made between one answer and the next wait.
const CHANGE_WAIT_MS: i64 = 1000;

/// `watch KEY...`: each key's value, then every change, one line each.
///
/// One `getDataOnChange` waits per key: ALMemory wakes it on a write through ALMemory (module
/// data) and on the DCM's next different value of a real-time key (device keys are written by
/// the cycle, not through `insertData`, so subscribing to them would never fire; the DCM's
/// per-cycle `DCM/PostProcess` fires whether a value changed or not).
pub(crate) async fn watch(session: &ClientSession, keys: &[String], output: Output) -> Result<(), CallError> {
    let (lines, mut changes) = tokio::sync::mpsc::unbounded_channel::<(String, Value)>();
    for key in keys {
        let (session, key, lines) = (session.clone(), key.clone(), lines.clone());
        actix_rt::spawn(async move {
            let result = follow(&session, &key, &lines).await;
            let _ = lines.send((key, Value::from(format!("error: {}", error_text(result)))));
        });
    }
    drop(lines);
    while let Some((key, value)) = changes.recv().await {
        output.emit(&serde_json::json!({"key": key, "value": json_of(&value)}), || {
            format!("{key}: {}", to_json(&value))
        })?;
    }
    Ok(())
}

fn error_text(result: Result<(), CallError>) -> String {
    result.err().map(|error| error.to_string()).unwrap_or_default()
}

async fn follow(
    session: &ClientSession,
    key: &str,
    lines: &tokio::sync::mpsc::UnboundedSender<(String, Value)>,
) -> Result<(), CallError> {
    let mut last = session.call(MEMORY, "getData", vec![key.into()], false).await?;
    if lines.send((key.to_owned(), last.clone())).is_err() {
        return Ok(());
    }
    loop {
        let args = vec![key.into(), CHANGE_WAIT_MS.into()];
        let value = match session.call(MEMORY, "getDataOnChange", args, false).await {
            Ok(value) => value,
            Err(_) => session.call(MEMORY, "getData", vec![key.into()], false).await?,
        };
        if value != last {
            last = value.clone();
            if lines.send((key.to_owned(), value)).is_err() {
                return Ok(());
            }
        }
    }
}
