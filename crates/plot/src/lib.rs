//! PNG charts for `naocli plot` and `naobench cycle --plot`: plotters' bitmap backend with
//! an embedded DejaVu Sans Mono (fonts/LICENSE-DejaVu.txt), so that no system font is needed.
#![deny(unsafe_code)]

use std::path::Path;
use std::sync::Once;

use plotters::prelude::*;
use plotters::style::FontStyle;

/// The font every label is drawn with, registered once under [`FONT`].
const FONT_BYTES: &[u8] = include_bytes!("../fonts/DejaVuSansMono.ttf");
const FONT: &str = "sans-serif";
const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// A chart could not be drawn or written.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("{path}: {message}")]
    Drawing { path: String, message: String },
    #[error("nothing to plot: {0}")]
    Empty(String),
}

/// A named line: `(x, y)` points in x order.
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// Samples whose distribution a histogram shows.
pub struct Distribution {
    pub label: String,
    pub samples: Vec<f64>,
}

/// One histogram panel: its distributions overlaid on the same bins.
pub struct Panel {
    pub title: String,
    pub distributions: Vec<Distribution>,
}

fn register_font() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        // The font is part of this crate: it parses, or no chart could ever be drawn.
        if plotters::style::register_font(FONT, FontStyle::Normal, FONT_BYTES).is_err() {
            panic!("the embedded font does not parse");
        }
    });
}

fn drawing_error(path: &Path, error: impl std::fmt::Display) -> PlotError {
    PlotError::Drawing { path: path.display().to_string(), message: error.to_string() }
}

/// The range covering `values`, widened a little (and made non-empty).
fn padded_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (low, high) = values.filter(|v| v.is_finite()).fold(None, |range: Option<(f64, f64)>, v| {
        Some(range.map_or((v, v), |(l, h)| (l.min(v), h.max(v))))
    })?;
    let margin = if high > low { (high - low) * 0.05 } else { low.abs().max(1.0) * 0.05 };
    Some((low - margin, high + margin))
}

/// Lines over one x axis, with a legend: written to `path` as a 1200×600 PNG.
pub fn line_chart(path: &Path, title: &str, x_label: &str, series: &[Series]) -> Result<(), PlotError> {
    register_font();
    let points = || series.iter().flat_map(|s| s.points.iter());
    let x_range = padded_range(points().map(|p| p.0)).ok_or_else(|| PlotError::Empty(title.into()))?;
    let y_range = padded_range(points().map(|p| p.1)).ok_or_else(|| PlotError::Empty(title.into()))?;
    let root = BitMapBackend::new(path, (1200, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| drawing_error(path, e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FONT, 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(x_range.0..x_range.1, y_range.0..y_range.1)
        .map_err(|e| drawing_error(path, e))?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 16))
        .draw()
        .map_err(|e| drawing_error(path, e))?;
    for (index, line) in series.iter().enumerate() {
        let color = PALETTE[index % PALETTE.len()];
        chart
            .draw_series(LineSeries::new(line.points.iter().copied(), color.stroke_width(2)))
            .map_err(|e| drawing_error(path, e))?
            .label(line.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(3)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FONT, 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| drawing_error(path, e))?;
    root.present().map_err(|e| drawing_error(path, e))
}

/// Bins of width `width` from 0 holding every sample up to `high` (higher ones in the last).
fn bin_counts(samples: &[f64], bins: usize, high: f64) -> Vec<u64> {
    let mut counts = vec![0u64; bins];
    for &sample in samples {
        let bin = ((sample.max(0.0) / high) * bins as f64) as usize;
        counts[bin.min(bins - 1)] += 1;
    }
    counts
}

/// Histograms, one panel per entry in a grid two wide, on a shared x axis up to the largest
/// 99.9th percentile (slower samples counted in the last bin); the y axis is logarithmic so
/// that the rare late cycles show. Written to `path` as a PNG.
pub fn histogram_panels(path: &Path, title: &str, x_label: &str, panels: &[Panel]) -> Result<(), PlotError> {
    register_font();
    const BINS: usize = 60;
    let high = panels
        .iter()
        .flat_map(|panel| &panel.distributions)
        .filter_map(|d| percentile(&d.samples, 0.999))
        .fold(0.0f64, f64::max)
        .max(1.0);
    let rows = panels.len().div_ceil(2).max(1);
    let root = BitMapBackend::new(path, (1400, 60 + 300 * rows as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| drawing_error(path, e))?;
    let root = root.titled(title, (FONT, 24)).map_err(|e| drawing_error(path, e))?;
    for (area, panel) in root.split_evenly((rows, 2)).iter().zip(panels) {
        let counted: Vec<Vec<u64>> =
            panel.distributions.iter().map(|d| bin_counts(&d.samples, BINS, high)).collect();
        let top = counted.iter().flatten().copied().max().unwrap_or(1).max(1) as f64 * 2.0;
        let mut chart = ChartBuilder::on(area)
            .caption(&panel.title, (FONT, 16))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(55)
            .build_cartesian_2d(0.0..high, (0.8..top).log_scale())
            .map_err(|e| drawing_error(path, e))?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc("cycles")
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 13))
            .draw()
            .map_err(|e| drawing_error(path, e))?;
        let width = high / BINS as f64;
        for (index, (distribution, counts)) in panel.distributions.iter().zip(&counted).enumerate() {
            let color = PALETTE[index % PALETTE.len()];
            let bars = counts.iter().enumerate().filter(|(_, &count)| count > 0).map(|(bin, &count)| {
                let x = bin as f64 * width;
                Rectangle::new([(x, 0.8), (x + width, count as f64)], color.mix(0.45).filled())
            });
            chart
                .draw_series(bars)
                .map_err(|e| drawing_error(path, e))?
                .label(distribution.label.as_str())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 15, y + 5)], color.mix(0.45).filled())
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .label_font((FONT, 12))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| drawing_error(path, e))?;
    }
    root.present().map_err(|e| drawing_error(path, e))
}

/// The `p`-quantile (0..=1) of `samples` by nearest rank (the sorted finite samples' value at
/// rank `round(p * (n - 1))`), or `None` when there are none: what the histograms mark and the
/// benchmarks print.
pub fn percentile(samples: &[f64], p: f64) -> Option<f64> {
    let mut sorted: Vec<f64> = samples.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let last = sorted.len().checked_sub(1)?;
    Some(sorted[((last as f64) * p).round() as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank_over_the_finite_samples() {
        let samples = [5.0, 1.0, f64::NAN, 3.0, 2.0, 4.0];
        assert_eq!(percentile(&samples, 0.0), Some(1.0));
        assert_eq!(percentile(&samples, 0.5), Some(3.0));
        assert_eq!(percentile(&samples, 0.99), Some(5.0));
        assert_eq!(percentile(&[f64::NAN], 0.5), None);
    }

    #[test]
    fn samples_past_the_range_land_in_the_last_bin() {
        assert_eq!(bin_counts(&[0.0, 0.4, 1.0, 5.0, -1.0], 2, 1.0), vec![3, 2]);
    }

    #[test]
    fn charts_are_written_without_system_fonts() {
        let dir = std::env::temp_dir().join(format!("naobroker-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let line = dir.join("line.png");
        let series = [Series {
            label: "sine".into(),
            points: (0..100).map(|i| (i as f64, (i as f64).sin())).collect(),
        }];
        line_chart(&line, "test", "s", &series).unwrap();
        let bars = dir.join("bars.png");
        let panel = Panel {
            title: "panel".into(),
            distributions: vec![Distribution { label: "a".into(), samples: vec![1.0, 2.0, 2.0, 30.0] }],
        };
        histogram_panels(&bars, "test", "µs", &[panel]).unwrap();
        for file in [line, bars] {
            assert_eq!(&std::fs::read(&file).unwrap()[1..4], b"PNG");
        }
        assert!(matches!(line_chart(&dir.join("none.png"), "empty", "s", &[]), Err(PlotError::Empty(_))));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
