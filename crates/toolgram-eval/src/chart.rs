//! The SVG chart: accuracy (top) and schema-valid first replies (bottom) per category, one bar
//! per mode, drawn with `plotters`.
//!
//! This module must not compute rows: it draws the ones it is given.

use crate::EvalError;
use crate::report::Row;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::path::Path;

/// A rate read from a row.
type Metric = fn(&Row) -> f64;

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// A plotting failure, as the error of writing `path`.
fn err(path: &Path, e: impl std::fmt::Display) -> EvalError {
    EvalError::Io {
        path: path.to_path_buf(),
        message: format!("chart: {e}"),
    }
}

/// Draw `rows` (category rows; `all` included if present) to `path`.
pub fn draw(rows: &[Row], title: &str, path: &Path) -> Result<(), EvalError> {
    let mut categories: Vec<&str> = Vec::new();
    let mut modes: Vec<String> = Vec::new();
    for r in rows {
        if !categories.contains(&r.category.as_str()) {
            categories.push(&r.category);
        }
        if !modes.contains(&r.label()) {
            modes.push(r.label());
        }
    }
    let width = (160 * categories.len().max(1) as u32 + 160).max(640);
    let root = SVGBackend::new(path, (width, 720)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(path, e))?;
    let root = root
        .titled(title, ("sans-serif", 20))
        .map_err(|e| err(path, e))?;
    let panels = root.split_evenly((2, 1));
    let metrics: [(&str, Metric); 2] = [
        ("accuracy %", |r| r.accuracy),
        ("schema-valid first replies %", |r| r.valid),
    ];
    let slot = 0.8 / modes.len().max(1) as f64;
    for (panel, (label, metric)) in panels.iter().zip(metrics) {
        let mut chart = ChartBuilder::on(panel)
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            // One empty slot on the right holds the legend.
            .build_cartesian_2d(-0.5f64..categories.len() as f64 + 0.5, 0f64..100f64)
            .map_err(|e| err(path, e))?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(WHITE)
            .x_labels(categories.len() + 2)
            .x_label_formatter(&|x| {
                let near = x.round();
                if (x - near).abs() < 1e-6 && near >= 0.0 {
                    categories
                        .get(near as usize)
                        .map_or(String::new(), |c| (*c).to_owned())
                } else {
                    String::new()
                }
            })
            .y_desc(label)
            .draw()
            .map_err(|e| err(path, e))?;
        for (j, mode) in modes.iter().enumerate() {
            let color = COLORS[j % COLORS.len()];
            let bars: Vec<Rectangle<(f64, f64)>> = rows
                .iter()
                .filter(|r| r.label() == *mode)
                .filter_map(|r| {
                    let i = categories.iter().position(|c| *c == r.category)? as f64;
                    let x0 = i - 0.4 + j as f64 * slot;
                    Some(Rectangle::new(
                        [(x0, 0.0), (x0 + slot * 0.9, metric(r) * 100.0)],
                        color.filled(),
                    ))
                })
                .collect();
            chart
                .draw_series(bars)
                .map_err(|e| err(path, e))?
                .label(mode.as_str())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled())
                });
        }
        legend(&mut chart, path)?;
    }
    root.present().map_err(|e| err(path, e))?;
    Ok(())
}

/// The legend of every series drawn on `chart`, boxed, in its upper right corner.
fn legend<'a, 'b: 'a>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    path: &Path,
) -> Result<(), EvalError> {
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| err(path, e))
}
