//! SVG charts for the report directory: throughput against input size per op (one line per
//! implementation, both axes logarithmic), and bar charts of the per-operation rates.

use std::path::Path;

use plotters::prelude::*;

use crate::harness::{Figure, Unit};

const COLOURS: [RGBColor; 8] = [
    RGBColor(200, 30, 30),
    RGBColor(30, 90, 200),
    RGBColor(30, 150, 60),
    RGBColor(200, 130, 0),
    RGBColor(120, 60, 170),
    RGBColor(0, 150, 160),
    RGBColor(120, 120, 120),
    RGBColor(180, 60, 130),
];

fn colour(imps: &[String], imp: &str) -> RGBColor {
    let i = imps.iter().position(|x| x == imp).unwrap_or(0);
    COLOURS[i % COLOURS.len()]
}

/// One chart per op measured at two or more sizes; returns the files written.
pub fn throughput(figs: &[Figure], imps: &[String], dir: &Path) -> Vec<String> {
    let mut ops: Vec<&str> = Vec::new();
    for f in figs {
        if f.size.is_some() && !ops.contains(&f.op.as_str()) {
            ops.push(&f.op);
        }
    }
    let mut written = Vec::new();
    for op in ops {
        // Only the MB/s figures (small SM2 messages are in ops/s).
        let pts: Vec<&Figure> = figs
            .iter()
            .filter(|f| f.op == op && f.unit == Unit::MBps && f.size.is_some())
            .collect();
        let mut sizes: Vec<usize> = pts.iter().filter_map(|f| f.size).collect();
        sizes.sort_unstable();
        sizes.dedup();
        if sizes.len() < 2 {
            continue;
        }
        let name = format!("{op}.svg");
        if draw_lines(op, &pts, imps, &dir.join(&name)).is_ok() {
            written.push(name);
        }
    }
    written
}

fn draw_lines(
    op: &str,
    pts: &[&Figure],
    imps: &[String],
    path: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (760, 460)).into_drawing_area();
    root.fill(&WHITE)?;
    let xmin = pts.iter().filter_map(|f| f.size).min().unwrap_or(1) as f64;
    let xmax = pts.iter().filter_map(|f| f.size).max().unwrap_or(2) as f64;
    let ymax = pts.iter().map(|f| f.median).fold(1.0, f64::max) * 1.5;
    let ymin = pts
        .iter()
        .map(|f| f.median)
        .fold(f64::MAX, f64::min)
        .max(1e-3)
        / 1.5;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{op}: throughput (MB/s, median) vs input size (bytes)"),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d((xmin..xmax).log_scale(), (ymin..ymax).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("bytes")
        .y_desc("MB/s")
        .draw()?;
    for imp in imps {
        let mut line: Vec<(f64, f64)> = pts
            .iter()
            .filter(|f| &f.imp == imp)
            .filter_map(|f| f.size.map(|s| (s as f64, f.median)))
            .collect();
        if line.is_empty() {
            continue;
        }
        line.sort_by(|a, b| a.0.total_cmp(&b.0));
        let c = colour(imps, imp);
        chart
            .draw_series(LineSeries::new(line.clone(), c.stroke_width(2)))?
            .label(imp.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2)));
        chart.draw_series(line.into_iter().map(|p| Circle::new(p, 3, c.filled())))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()?;
    root.present()?;
    Ok(())
}

/// Bars of the per-operation rates of `ops`, grouped by op, one bar per implementation.
pub fn bars(
    figs: &[Figure],
    imps: &[String],
    ops: &[&str],
    title: &str,
    path: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let rows: Vec<(&str, Vec<&Figure>)> = ops
        .iter()
        .map(|op| {
            (
                *op,
                figs.iter()
                    .filter(|f| f.op == *op && f.size.is_none())
                    .collect::<Vec<_>>(),
            )
        })
        .filter(|(_, v)| !v.is_empty())
        .collect();
    if rows.is_empty() {
        return Ok(());
    }
    let root = SVGBackend::new(path, (900, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let ymax = rows
        .iter()
        .flat_map(|(_, v)| v.iter().map(|f| f.median))
        .fold(1.0, f64::max)
        * 1.15;
    let slots: usize = rows.iter().map(|(_, v)| v.len() + 1).sum();
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(56)
        .y_label_area_size(64)
        .build_cartesian_2d(0f64..slots as f64, 0f64..ymax)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc("operations per second (median)")
        .draw()?;
    let mut x = 0.5;
    for (op, v) in &rows {
        let start = x;
        for f in v {
            let c = colour(imps, &f.imp);
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x, 0.0), (x + 0.9, f.median)],
                c.filled(),
            )))?;
            chart.draw_series(std::iter::once(Text::new(
                f.imp.clone(),
                (x, f.median),
                ("sans-serif", 11).into_font(),
            )))?;
            x += 1.0;
        }
        chart.draw_series(std::iter::once(Text::new(
            op.to_string(),
            (start, -ymax * 0.06),
            ("sans-serif", 13).into_font(),
        )))?;
        x += 1.0;
    }
    root.present()?;
    Ok(())
}
