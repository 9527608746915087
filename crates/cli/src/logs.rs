//! `naocli log`: the broker's and its module processes' log lines, live
//! (`ServiceDirectory/Log`, raised by the broker only while someone listens).

use naobroker_framework::{CallError, ClientSession};

use crate::events::each_event;
use crate::output::{json_of, text_field, Output};

const LOG_EVENT: &str = "ServiceDirectory/Log";
const LEVELS: [&str; 5] = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR"];

fn severity(level: &str) -> Option<usize> {
    LEVELS.iter().position(|known| known.eq_ignore_ascii_case(level))
}

/// `log [--level LEVEL] [--module NAME]`: lines at LEVEL or above, of module NAME (`broker` for
/// the broker's own lines) or whose target starts with NAME.
pub(crate) async fn log(
    session: &ClientSession,
    level: Option<&str>,
    module: Option<&str>,
    output: Output,
) -> Result<(), CallError> {
    let least = match level {
        Some(level) => severity(level).ok_or_else(|| {
            CallError::new(format!("--level {level}: expected one of {}", LEVELS.join(", ")))
        })?,
        None => 0,
    };
    each_event(session, &[LOG_EVENT.to_owned()], |event| {
        let line = &event.value;
        let (line_level, line_module, target) =
            (text_field(line, "level"), text_field(line, "module"), text_field(line, "target"));
        let severe_enough = severity(&line_level).is_some_and(|severity| severity >= least);
        let of_module = module.is_none_or(|name| line_module == name || target.starts_with(name));
        if !(severe_enough && of_module) {
            return Ok(());
        }
        output.emit(&json_of(line), || {
            format!("{line_level:>5} {line_module} {target}: {}", text_field(line, "message"))
        })
    })
    .await
}
