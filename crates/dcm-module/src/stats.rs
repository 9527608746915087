//! `DCM.stats` and `special("Diagnostic")`: the cycle's counters as one map, each hook
//! named.

use naobroker_dcm::cycle::{StatsSnapshot, LATENESS_BUCKETS_US};
use naobroker_framework::Value;

/// The counters as one map; hooks are named from `hook_names` (`(id, name)`).
pub(crate) fn stats_value(stats: &StatsSnapshot, hook_names: &[(u32, String)]) -> Value {
    let last = LATENESS_BUCKETS_US[LATENESS_BUCKETS_US.len() - 1];
    let histogram = std::iter::once(0)
        .chain(LATENESS_BUCKETS_US)
        .zip(LATENESS_BUCKETS_US)
        .map(|(lower, upper)| format!("{lower}-{upper}us"))
        .chain(std::iter::once(format!(">={last}us")))
        .zip(stats.lateness_histogram)
        .map(|(label, count)| (Value::from(label), Value::from(count)))
        .collect();
    let hooks = stats
        .hooks
        .iter()
        .map(|hook| {
            let name = hook_names.iter().find(|(id, _)| *id == hook.id).map_or("", |(_, name)| name.as_str());
            Value::Map(vec![
                ("id".into(), hook.id.into()),
                ("name".into(), name.into()),
                ("calls".into(), hook.calls.into()),
                ("over_budget".into(), hook.over_budget.into()),
                ("last_us".into(), hook.last_us.into()),
                ("max_us".into(), hook.max_us.into()),
            ])
        })
        .collect();
    Value::Map(vec![
        ("cycles".into(), stats.cycles.into()),
        ("overruns".into(), stats.overruns.into()),
        ("requests_refused".into(), stats.requests_refused.into()),
        ("reports_dropped".into(), stats.reports_dropped.into()),
        ("hooks_refused".into(), stats.hooks_refused.into()),
        ("compute_last_us".into(), stats.compute_last_us.into()),
        ("compute_max_us".into(), stats.compute_max_us.into()),
        ("lateness_max_us".into(), stats.lateness_max_us.into()),
        ("lateness_histogram".into(), Value::Map(histogram)),
        ("hooks".into(), Value::Array(hooks)),
    ])
}

#[cfg(test)]
mod tests {
    use naobroker_dcm::cycle::HookSnapshot;

    use super::*;

    #[test]
    fn buckets_are_labelled_by_their_bounds_and_hooks_by_their_names() {
        let mut lateness_histogram = [0; LATENESS_BUCKETS_US.len() + 1];
        lateness_histogram[0] = 7;
        lateness_histogram[LATENESS_BUCKETS_US.len()] = 2;
        let hook = HookSnapshot { id: 3, calls: 5, over_budget: 1, last_us: 12, max_us: 40 };
        let stats = StatsSnapshot {
            cycles: 9,
            overruns: 0,
            requests_refused: 0,
            reports_dropped: 0,
            hooks_refused: 0,
            compute_last_us: 1,
            compute_max_us: 2,
            lateness_max_us: 10500,
            lateness_histogram,
            hooks: vec![hook],
        };
        let value = stats_value(&stats, &[(3, "ALMotion".into())]);
        let entry = |map: &Value, key: &str| {
            map.as_map().unwrap().iter().find(|(name, _)| name.as_str() == Some(key)).unwrap().1.clone()
        };
        let histogram = entry(&value, "lateness_histogram");
        assert_eq!(entry(&histogram, "0-10us"), Value::from(7));
        assert_eq!(entry(&histogram, ">=10000us"), Value::from(2));
        let hooks = entry(&value, "hooks");
        assert_eq!(entry(&hooks.as_array().unwrap()[0], "name"), Value::from("ALMotion"));
        assert_eq!(entry(&value, "cycles"), Value::from(9));
    }
}
