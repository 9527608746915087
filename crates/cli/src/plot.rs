//! `naocli plot FILE.mcap [KEY...] --out FILE.png`: recorded keys over DCM time on one chart
//! (an actuator's command beside its sensor, say), from a file `naocli record` wrote.

use std::path::Path;

use naobroker_framework::CallError;
use naobroker_plot::{line_chart, Series};

use crate::mcap_file::read_keys;

/// The legend's name for a key: without the DCM's `Device/SubDeviceList/` prefix.
fn label(key: &str) -> String {
    key.strip_prefix("Device/SubDeviceList/").unwrap_or(key).to_owned()
}

/// Plot `keys` (every recorded key when empty) from `recording` into `out`.
pub(crate) fn plot(recording: &Path, keys: &[String], out: &Path) -> Result<(), CallError> {
    let mut recorded = read_keys(recording)?;
    let wanted: Vec<String> =
        if keys.is_empty() { recorded.keys().cloned().collect() } else { keys.to_vec() };
    let mut series = Vec::new();
    for key in &wanted {
        let points = recorded.remove(key).ok_or_else(|| {
            CallError::new(format!("{key}: not in {} (recorded: {:?})", recording.display(), recorded.keys()))
        })?;
        series.push(Series { label: label(key), points });
    }
    let title =
        recording.file_name().map_or_else(|| recording.display().to_string(), |n| n.to_string_lossy().into());
    line_chart(out, &title, "DCM time (s)", &series).map_err(|error| CallError::new(error.to_string()))?;
    eprintln!("naocli plot: {} keys to {}", series.len(), out.display());
    Ok(())
}
