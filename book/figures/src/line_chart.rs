//! The second kind of figure: a line chart, for a quantity that changes step by step (the
//! loss of chapter 11's training run).
//!
//! Like a heatmap [`Figure`](crate::Figure), a chart is data first: [`LineChart::digest`]
//! fingerprints every point, the SVG records it, and the workspace test `book_includes`
//! recomputes it, so a committed chart that no longer shows the chapter's numbers fails.
//! The drawing (feature `draw`) uses plotters' primitives only, with the same
//! font-metrics-free text layout as the heatmaps, so the SVG is the same on every machine.

use crate::fnv1a64;

/// One curve: `y` against the step `1, 2, ...`.
#[derive(Clone, Debug, PartialEq)]
pub struct LineChart {
    /// The file name without `.svg`, e.g. `ch11-loss`.
    pub name: &'static str,
    /// Written above the chart.
    pub title: &'static str,
    /// The quantity on the vertical axis, e.g. `loss`.
    pub y_label: &'static str,
    /// The values at steps 1, 2, ... in order.
    pub values: Vec<f32>,
}

impl LineChart {
    /// `NAME.svg`.
    pub fn file_name(&self) -> String {
        format!("{}.svg", self.name)
    }

    /// Everything the drawing shows, as text: the titles and every value with all its
    /// digits.
    pub fn source_text(&self) -> String {
        format!(
            "line chart {}\ntitle {}\ny {}\n{:?}\n",
            self.name, self.title, self.y_label, self.values
        )
    }

    /// A fingerprint of [`LineChart::source_text`]: `fnv1a64:` and 16 hex digits.
    pub fn digest(&self) -> String {
        format!("fnv1a64:{:016x}", fnv1a64(self.source_text().as_bytes()))
    }

    /// The top of the vertical axis: the largest value rounded up to a multiple of `tick`.
    pub fn y_max(&self, tick: f32) -> f32 {
        let max = self.values.iter().copied().fold(0.0, f32::max);
        ((max / tick).ceil() * tick).max(tick)
    }
}

#[cfg(feature = "draw")]
mod draw {
    use std::error::Error;

    use plotters::prelude::*;
    use plotters::style::text_anchor::{HPos, Pos, VPos};

    use super::LineChart;

    const WIDTH: i32 = 640;
    const HEIGHT: i32 = 360;
    /// Space for the title above, the tick labels left and below.
    const TOP: i32 = 48;
    const LEFT: i32 = 64;
    const RIGHT: i32 = 24;
    const BOTTOM: i32 = 56;
    const FONT: &str = "sans-serif";
    /// The spacing of the grid lines on the vertical axis.
    const Y_TICK: f32 = 0.5;

    fn text(size: u32, h: HPos, v: VPos) -> TextStyle<'static> {
        TextStyle::from((FONT, size).into_font())
            .color(&RGBColor(40, 40, 40))
            .pos(Pos::new(h, v))
    }

    impl LineChart {
        /// The chart as SVG text (without the digest comment, which the binary adds).
        pub fn draw(&self) -> Result<String, Box<dyn Error>> {
            let n = self.values.len().max(2);
            let y_max = self.y_max(Y_TICK);
            let (x0, x1, y0, y1) = (LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP);
            let px = |step: usize| {
                x0 + ((x1 - x0) as f32 * (step - 1) as f32 / (n - 1) as f32).round() as i32
            };
            let py = |y: f32| y0 - ((y0 - y1) as f32 * y / y_max).round() as i32;
            let grid = RGBColor(225, 225, 225);
            let axis = RGBColor(90, 90, 90);

            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, (WIDTH as u32, HEIGHT as u32))
                    .into_drawing_area();
                root.fill(&WHITE)?;
                root.draw(&Text::new(
                    self.title,
                    (WIDTH / 2, TOP / 2),
                    text(20, HPos::Center, VPos::Center),
                ))?;
                // Horizontal grid lines with their values on the left.
                let ticks = (y_max / Y_TICK).round() as usize;
                for k in 0..=ticks {
                    let y = k as f32 * Y_TICK;
                    root.draw(&PathElement::new(vec![(x0, py(y)), (x1, py(y))], grid))?;
                    root.draw(&Text::new(
                        format!("{y:.1}"),
                        (x0 - 8, py(y)),
                        text(14, HPos::Right, VPos::Center),
                    ))?;
                }
                // Step numbers below: the first step, then every tenth.
                let steps = std::iter::once(1).chain((10..=n).step_by(10));
                for step in steps {
                    root.draw(&PathElement::new(
                        vec![(px(step), y0), (px(step), y0 + 5)],
                        axis,
                    ))?;
                    root.draw(&Text::new(
                        step.to_string(),
                        (px(step), y0 + 16),
                        text(14, HPos::Center, VPos::Center),
                    ))?;
                }
                root.draw(&Text::new(
                    format!("step (vertical: {})", self.y_label),
                    ((x0 + x1) / 2, HEIGHT - 16),
                    text(15, HPos::Center, VPos::Center),
                ))?;
                root.draw(&PathElement::new(vec![(x0, y1), (x0, y0), (x1, y0)], axis))?;
                let curve: Vec<(i32, i32)> = self
                    .values
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| (px(i + 1), py(v)))
                    .collect();
                root.draw(&PathElement::new(
                    curve,
                    RGBColor(8, 48, 107).stroke_width(2),
                ))?;
                root.present()?;
            }
            Ok(svg)
        }
    }
}
