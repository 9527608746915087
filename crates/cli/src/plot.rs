//! `naocli plot FILE.mcap [KEY...] --out FILE.png`: recorded keys over time from the recording's
//! start on one chart (an actuator's command beside its sensor, say), from a file `naocli record`
//! wrote.

use std::path::Path;

use naobroker_framework::CallError;
use naobroker_plot::{line_chart, Series};

use crate::mcap_file::{read_keys, KeySeries};

/// The legend's name for a key: without the DCM's `Device/SubDeviceList/` prefix.
fn label(key: &str) -> String {
    key.strip_prefix("Device/SubDeviceList/").unwrap_or(key).to_owned()
}

/// Make every time the seconds since the recording's first cycle (of any key, plotted or not);
/// that cycle's DCM time in seconds.
fn shift_to_start(recorded: &mut KeySeries) -> f64 {
    let start = recorded.values().flatten().map(|&(time, _)| time).fold(f64::INFINITY, f64::min);
    for (time, _) in recorded.values_mut().flatten() {
        *time -= start;
    }
    start
}

/// Plot `keys` (every recorded key when empty) from `recording` into `out`.
pub(crate) fn plot(recording: &Path, keys: &[String], out: &Path) -> Result<(), CallError> {
    let mut recorded = read_keys(recording)?;
    let start = shift_to_start(&mut recorded);
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
    let x_label = format!("seconds since the recording's start (DCM time {start:.3} s)");
    line_chart(out, &title, &x_label, &series).map_err(|error| CallError::new(error.to_string()))?;
    eprintln!("naocli plot: {} keys to {}", series.len(), out.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_count_from_the_first_cycle_of_any_key() {
        let mut recorded = KeySeries::new();
        recorded.insert("A".into(), vec![(100.02, 1.0), (100.03, 2.0)]);
        recorded.insert("B".into(), vec![(100.01, 5.0)]);
        assert_eq!(shift_to_start(&mut recorded), 100.01);
        let a: Vec<f64> = recorded["A"].iter().map(|&(time, _)| (time * 1000.0).round()).collect();
        assert_eq!(a, vec![10.0, 20.0]);
        assert_eq!(recorded["B"], vec![(0.0, 5.0)]);
    }
}
