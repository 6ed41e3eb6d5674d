//! Where the time of a tool call goes: one stacked bar per `bench e2e` request (grammar,
//! template, prefill, decode, masks, the rest), with its limit, our unconstrained run and
//! llama-server's warm call marked on the same scale; an SVG drawn with `plotters`.
//!
//! This module must not measure: it draws the rows it is given.

use super::e2e::RequestRow;
use crate::BenchError;
use plotters::prelude::*;
use std::path::Path;

/// A segment of the stacked bar: its label, color and the time it takes in a row.
type Segment = (&'static str, RGBColor, fn(&RequestRow) -> f64);

const SEGMENTS: [Segment; 6] = [
    ("grammar", RGBColor(148, 103, 189), |r| r.grammar_ms),
    ("template", RGBColor(140, 86, 75), |r| r.template_ms),
    ("prefill", RGBColor(31, 119, 180), |r| r.prefill_ms),
    ("decode", RGBColor(44, 160, 44), |r| r.decode_ms),
    ("masks", RGBColor(214, 39, 40), |r| r.mask_ms),
    ("the rest", RGBColor(199, 199, 199), rest_ms),
];

/// A marker drawn across the bar: its label, color and the time it marks in a row.
type Marker = (&'static str, RGBColor, fn(&RequestRow) -> f64);

const MARKERS: [Marker; 3] = [
    ("limit", BLACK, |r| r.limit_ms),
    ("unconstrained", RGBColor(255, 127, 14), |r| {
        r.unconstrained_ms
    }),
    ("llama-server warm", RGBColor(23, 190, 207), |r| {
        r.llama_server_warm_ms
    }),
];

/// End to end minus the measured parts: sampling, parsing, validation, bookkeeping.
fn rest_ms(r: &RequestRow) -> f64 {
    let parts = r.grammar_ms + r.template_ms + r.prefill_ms + r.decode_ms + r.mask_ms;
    (r.e2e_ms - parts).max(0.0)
}

/// A plotting failure, as the error of writing `path`.
fn err(path: &Path, e: impl std::fmt::Display) -> BenchError {
    BenchError::Io {
        path: path.to_path_buf(),
        message: format!("chart: {e}"),
    }
}

/// Draw `rows` to `path` under `title`.
pub fn draw(rows: &[RequestRow], title: &str, path: &Path) -> Result<(), BenchError> {
    let labels: Vec<String> = rows
        .iter()
        .map(|r| format!("{} {}", r.pool, r.tool_choice))
        .collect();
    // The scale is our own times; a peer far beyond them is written out instead of drawn.
    let widest = rows
        .iter()
        .flat_map(|r| [r.e2e_ms, r.limit_ms, r.unconstrained_ms])
        .fold(0.0, f64::max);
    let x_max = widest * 1.6 + 1.0;
    let height = 120 + 70 * rows.len().max(1) as u32;
    let root = SVGBackend::new(path, (900, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(path, e))?;
    let root = root
        .titled(title, ("sans-serif", 18))
        .map_err(|e| err(path, e))?;
    let n = rows.len() as f64;
    let mut chart = ChartBuilder::on(&root)
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(140)
        // Room on the right for the legend.
        .build_cartesian_2d(0f64..x_max, -0.5f64..n - 0.5)
        .map_err(|e| err(path, e))?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(rows.len() + 1)
        .y_label_formatter(&|y| {
            let near = y.round();
            if (y - near).abs() < 1e-6 && near >= 0.0 {
                labels.get(near as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .x_desc("ms, end to end")
        .draw()
        .map_err(|e| err(path, e))?;
    for (k, (label, color, part)) in SEGMENTS.iter().enumerate() {
        let bars: Vec<Rectangle<(f64, f64)>> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let x0: f64 = SEGMENTS[..k].iter().map(|s| (s.2)(r)).sum();
                let y = i as f64;
                Rectangle::new([(x0, y - 0.3), (x0 + part(r), y + 0.3)], color.filled())
            })
            .collect();
        let color = *color;
        chart
            .draw_series(bars)
            .map_err(|e| err(path, e))?
            .label(*label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
    }
    for (label, color, at) in MARKERS {
        let off_scale: Vec<Text<'_, (f64, f64), String>> = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| at(r) > x_max)
            .map(|(i, r)| {
                let x = SEGMENTS.iter().map(|s| (s.2)(r)).sum::<f64>() + widest * 0.05;
                Text::new(
                    format!("{label}: {:.0} ms, off the scale", at(r)),
                    (x, i as f64 + 0.1),
                    ("sans-serif", 12).into_font().color(&color),
                )
            })
            .collect();
        chart.draw_series(off_scale).map_err(|e| err(path, e))?;
        let ticks: Vec<PathElement<(f64, f64)>> = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| at(r) > 0.0 && at(r) <= x_max)
            .map(|(i, r)| {
                let y = i as f64;
                PathElement::new(
                    vec![(at(r), y - 0.42), (at(r), y + 0.42)],
                    color.stroke_width(3),
                )
            })
            .collect();
        chart
            .draw_series(ticks)
            .map_err(|e| err(path, e))?
            .label(label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x + 5, y - 6), (x + 5, y + 6)], color.stroke_width(3))
            });
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| err(path, e))?;
    root.present().map_err(|e| err(path, e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(e2e_ms: f64) -> RequestRow {
        RequestRow {
            pool: "6 tools".into(),
            tool_choice: "required",
            prompt_evaluated: 15,
            prompt_cached: 1_055,
            sampled: 8,
            forced: 18,
            mask_us_p50: 120,
            mask_us_p99: 280,
            mask_ms: 1.0,
            generate_ms: 300.0,
            decode_ms_per_step: 37.5,
            grammar_ms: 2.0,
            template_ms: 3.0,
            prefill_ms: 200.0,
            decode_ms: 290.0,
            step_ms: 28.0,
            e2e_ms,
            unconstrained_ms: 700.0,
            llama_server_warm_ms: 720.0,
            limit_ms: 560.0,
            limit_forced_free_ms: 400.0,
            valid: true,
            llama_server_valid: false,
            ff_identical: true,
        }
    }

    #[test]
    fn the_rest_is_what_the_measured_parts_leave_and_never_negative() {
        assert_eq!(rest_ms(&request(520.0)), 24.0);
        assert_eq!(rest_ms(&request(100.0)), 0.0);
    }

    #[test]
    fn the_chart_names_every_part_and_marker() {
        let dir = std::env::temp_dir().join(format!("toolgram-e2e-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("where.svg");
        draw(
            &[request(520.0), request(640.0)],
            "where the time goes",
            &path,
        )
        .expect("drawn");
        let svg = std::fs::read_to_string(&path).expect("written");
        for name in ["grammar", "prefill", "decode", "masks", "the rest", "limit"] {
            assert!(svg.contains(name), "{name} missing from the legend");
        }
        assert!(svg.contains("6 tools required"));
        let mut slow_peer = request(520.0);
        slow_peer.llama_server_warm_ms = 9_000.0;
        draw(&[slow_peer], "a peer off the scale", &path).expect("drawn");
        let svg = std::fs::read_to_string(&path).expect("written");
        assert!(svg.contains("llama-server warm: 9000 ms, off the scale"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
