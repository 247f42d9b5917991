//! The context query's chart: each allocator's transaction rate over malloc's,
//! sequential and parallel, as horizontal bars in an SVG file (plotters' SVG
//! backend, which writes text as SVG text and needs no font library).

use std::error::Error;
use std::path::Path;

use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The colours of the two series.
const COLORS: [RGBColor; 2] = [RGBColor(0x4e, 0x79, 0xa7), RGBColor(0xf2, 0x8e, 0x2b)];
const FONT: &str = "sans-serif";

/// One bar pair per row, the first row at the top: `rows[i]` is the row's name and
/// its values in each of the `series`.
pub fn ratio_bars(
    path: &Path,
    title: &str,
    caption: &str,
    series: [&str; 2],
    rows: &[(&str, [f64; 2])],
) -> Result<(), Box<dyn Error>> {
    let n = rows.len();
    let max = rows.iter().flat_map(|(_, v)| *v).fold(1.0, f64::max);
    // Multiples of 0.5, with room for the labels after the longest bar.
    let x_max = (max * 2.0).ceil() / 2.0 + 0.5;
    // Row k (0 = top) is centred on y = n - 1 - k, so that the integers of the axis
    // are the rows' centres.
    let centre = |k: usize| (n - 1 - k) as f64;
    let height = 110 + 44 * n as u32;

    let root = SVGBackend::new(path, (760, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, (FONT, 18).into_font().style(FontStyle::Bold))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            caption,
            (FONT, 13).into_font().color(&RGBColor(0x55, 0x55, 0x55)),
        )
        .margin_left(10)
        .margin_right(20)
        .margin_bottom(10)
        .x_label_area_size(40)
        .y_label_area_size(190)
        .build_cartesian_2d(0f64..x_max, -0.5f64..(n as f64 - 0.5))?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .max_light_lines(0)
        .x_labels((x_max * 2.0) as usize + 1)
        .x_label_formatter(&|x| format!("{x:.1}x"))
        .x_desc("transaction rate over malloc's (higher is faster)")
        .y_labels(n)
        .y_label_formatter(&|y| {
            let row = n as f64 - 1.0 - y.round();
            match rows.get(row as usize) {
                Some((name, _)) if (y - y.round()).abs() < 1e-6 && row >= 0.0 => name.to_string(),
                _ => String::new(),
            }
        })
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 13))
        .draw()?;

    // Malloc's rate, the 1.0x reference.
    chart.draw_series(std::iter::once(DashedPathElement::new(
        vec![(1.0, -0.5), (1.0, n as f64 - 0.5)],
        4,
        3,
        BLACK.stroke_width(1),
    )))?;
    let label_style =
        TextStyle::from((FONT, 11).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (s, (name, color)) in series.iter().zip(COLORS).enumerate() {
        // The first series in the upper half of each row, the second in the lower.
        let (top, bottom) = if s == 0 { (0.38, 0.02) } else { (-0.02, -0.38) };
        let bars = rows.iter().enumerate().map(|(k, (_, values))| {
            let c = centre(k);
            Rectangle::new([(0.0, c + top), (values[s], c + bottom)], color.filled())
        });
        chart
            .draw_series(bars)?
            .label(*name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 12, y + 6)], color.filled()));
        let labels = rows.iter().enumerate().map(|(k, (_, values))| {
            let c = centre(k);
            Text::new(
                format!("{:.2}x", values[s]),
                (values[s] + x_max * 0.008, c + (top + bottom) / 2.0),
                label_style.clone(),
            )
        });
        chart.draw_series(labels)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .label_font((FONT, 13))
        .background_style(WHITE)
        .border_style(RGBColor(0xcc, 0xcc, 0xcc))
        .draw()?;
    root.present()?;
    Ok(())
}
