//! Latency samples, their percentiles, and the tables (or JSON) the benchmarks print.

/// Latency samples in µs and their percentiles.
pub struct Samples(pub Vec<f64>);

impl Samples {
    /// The `p`th percentile (0..=100), nearest rank; NaN without samples.
    pub fn percentile(&self, p: f64) -> f64 {
        naobroker_plot::percentile(&self.0, p / 100.0).unwrap_or(f64::NAN)
    }

    pub fn p50(&self) -> f64 {
        self.percentile(50.0)
    }

    pub fn p99(&self) -> f64 {
        self.percentile(99.0)
    }

    pub fn max(&self) -> f64 {
        self.0.iter().copied().fold(f64::NAN, f64::max)
    }
}

/// One row of a results table, also one object of the `--json` output.
pub struct Row {
    pub name: String,
    pub fields: Vec<(&'static str, f64)>,
}

impl Row {
    /// A row of latencies: p50, p99 and max in µs.
    pub fn latencies(name: impl Into<String>, samples: &Samples) -> Row {
        Row {
            name: name.into(),
            fields: vec![("p50 µs", samples.p50()), ("p99 µs", samples.p99()), ("max µs", samples.max())],
        }
    }
}

pub fn print(title: &str, rows: &[Row], notes: &[String], json: bool) {
    if json {
        let rows: Vec<serde_json::Value> = rows
            .iter()
            .map(|row| {
                let mut object = serde_json::Map::new();
                object.insert("name".into(), row.name.clone().into());
                for (key, value) in &row.fields {
                    object.insert((*key).into(), serde_json::json!(value));
                }
                serde_json::Value::Object(object)
            })
            .collect();
        println!("{}", serde_json::json!({ "benchmark": title, "rows": rows, "notes": notes }));
        return;
    }
    println!("## naobench {title}\n");
    let columns: Vec<&str> =
        rows.first().map(|r| r.fields.iter().map(|(k, _)| *k).collect()).unwrap_or_default();
    println!("| what | {} |", columns.join(" | "));
    println!("|---|{}|", columns.iter().map(|_| "---:").collect::<Vec<_>>().join("|"));
    for row in rows {
        let cells: Vec<String> = row.fields.iter().map(|(_, v)| format_number(*v)).collect();
        println!("| {} | {} |", row.name, cells.join(" | "));
    }
    for note in notes {
        println!("\n{note}");
    }
}

fn format_number(value: f64) -> String {
    if value.is_nan() {
        "–".into()
    } else if value.abs() >= 1000.0 || value.fract() == 0.0 {
        format!("{value:.0}")
    } else if value.abs() >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}
