//! The second kind of figure: a line chart, for quantities that change step by step (the
//! loss of chapter 11's training run, chapter 19's loss and scores).
//!
//! Like a heatmap [`Figure`](crate::Figure), a chart is data first: [`LineChart::digest`]
//! fingerprints every point, the SVG records it, and the workspace test `book_includes`
//! recomputes it, so a committed chart that no longer shows the chapter's numbers fails.
//! The drawing (feature `draw`) uses plotters' primitives only, with the same
//! font-metrics-free text layout as the heatmaps, so the SVG is the same on every machine.

use crate::fnv1a64;

/// One curve: `y` against the training step.
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    /// Its name in the legend (drawn when a chart has more than one curve).
    pub label: &'static str,
    /// The steps between two values: the values are at steps `every`, `2 · every`, ...
    pub every: usize,
    /// The values, in order.
    pub values: Vec<f32>,
}

/// Curves against the step `1, 2, ...`.
#[derive(Clone, Debug, PartialEq)]
pub struct LineChart {
    /// The file name without `.svg`, e.g. `ch11-loss`.
    pub name: &'static str,
    /// Written above the chart.
    pub title: &'static str,
    /// The quantity on the vertical axis, e.g. `loss`.
    pub y_label: &'static str,
    /// The curves, drawn in order.
    pub curves: Vec<Curve>,
    /// The step numbers below the axis: the first step, then the multiples of this.
    pub x_tick: usize,
    /// The spacing of the grid lines on the vertical axis.
    pub y_tick: f32,
}

impl LineChart {
    /// One curve, every step: chapter 11's loss.
    pub fn one_curve(
        name: &'static str,
        title: &'static str,
        y_label: &'static str,
        values: Vec<f32>,
    ) -> LineChart {
        LineChart {
            name,
            title,
            y_label,
            curves: vec![Curve {
                label: y_label,
                every: 1,
                values,
            }],
            x_tick: 10,
            y_tick: 0.5,
        }
    }

    /// `NAME.svg`.
    pub fn file_name(&self) -> String {
        format!("{}.svg", self.name)
    }

    /// Everything the drawing shows, as text: the titles, the ticks and every value with
    /// all its digits.
    pub fn source_text(&self) -> String {
        let mut text = format!(
            "line chart {}\ntitle {}\ny {}\nticks {} {}\n",
            self.name, self.title, self.y_label, self.x_tick, self.y_tick
        );
        for c in &self.curves {
            text += &format!("curve {} every {}\n{:?}\n", c.label, c.every, c.values);
        }
        text
    }

    /// A fingerprint of [`LineChart::source_text`]: `fnv1a64:` and 16 hex digits.
    pub fn digest(&self) -> String {
        format!("fnv1a64:{:016x}", fnv1a64(self.source_text().as_bytes()))
    }

    /// The last step any curve reaches.
    pub fn last_step(&self) -> usize {
        let last = |c: &Curve| c.every * c.values.len();
        self.curves.iter().map(last).max().unwrap_or(0)
    }

    /// The top of the vertical axis: the largest value rounded up to a multiple of
    /// [`LineChart::y_tick`].
    pub fn y_max(&self) -> f32 {
        let tick = self.y_tick;
        let values = self.curves.iter().flat_map(|c| c.values.iter().copied());
        let max = values.fold(0.0, f32::max);
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
    /// The height of one legend row (a chart with several curves grows by one per curve).
    const LEGEND_ROW: i32 = 20;
    /// The curves' colours, in order.
    const COLOURS: [RGBColor; 4] = [
        RGBColor(8, 48, 107),
        RGBColor(217, 95, 2),
        RGBColor(27, 158, 119),
        RGBColor(117, 112, 179),
    ];

    fn text(size: u32, h: HPos, v: VPos) -> TextStyle<'static> {
        TextStyle::from((FONT, size).into_font())
            .color(&RGBColor(40, 40, 40))
            .pos(Pos::new(h, v))
    }

    impl LineChart {
        /// The chart as SVG text (without the digest comment, which the binary adds).
        pub fn draw(&self) -> Result<String, Box<dyn Error>> {
            let n = self.last_step().max(2);
            let y_max = self.y_max();
            let (x0, x1, y0, y1) = (LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP);
            let px = |step: usize| {
                x0 + ((x1 - x0) as f32 * (step - 1) as f32 / (n - 1) as f32).round()
                    as i32
            };
            let py = |y: f32| y0 - ((y0 - y1) as f32 * y / y_max).round() as i32;
            let grid = RGBColor(225, 225, 225);
            let axis = RGBColor(90, 90, 90);

            let mut svg = String::new();
            {
                let legend = if self.curves.len() > 1 {
                    LEGEND_ROW * self.curves.len() as i32 + 8
                } else {
                    0
                };
                let size = (WIDTH as u32, (HEIGHT + legend) as u32);
                let root =
                    SVGBackend::with_string(&mut svg, size).into_drawing_area();
                root.fill(&WHITE)?;
                root.draw(&Text::new(
                    self.title,
                    (WIDTH / 2, TOP / 2),
                    text(20, HPos::Center, VPos::Center),
                ))?;
                // Horizontal grid lines with their values on the left.
                let ticks = (y_max / self.y_tick).round() as usize;
                for k in 0..=ticks {
                    let y = k as f32 * self.y_tick;
                    root.draw(&PathElement::new(
                        vec![(x0, py(y)), (x1, py(y))],
                        grid,
                    ))?;
                    root.draw(&Text::new(
                        format!("{y:.1}"),
                        (x0 - 8, py(y)),
                        text(14, HPos::Right, VPos::Center),
                    ))?;
                }
                // Step numbers below: the first step, then every `x_tick`-th.
                let steps =
                    std::iter::once(1).chain((self.x_tick..=n).step_by(self.x_tick));
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
                root.draw(&PathElement::new(
                    vec![(x0, y1), (x0, y0), (x1, y0)],
                    axis,
                ))?;
                for (c, colour) in self.curves.iter().zip(COLOURS.iter().cycle()) {
                    let curve: Vec<(i32, i32)> = c
                        .values
                        .iter()
                        .enumerate()
                        .map(|(i, &v)| (px((i + 1) * c.every), py(v)))
                        .collect();
                    root.draw(&PathElement::new(curve, colour.stroke_width(2)))?;
                }
                // With several curves, a legend under the chart: a stroke of each colour, then
                // its label.
                if self.curves.len() > 1 {
                    let colours = COLOURS.iter().cycle();
                    for (i, (c, colour)) in
                        self.curves.iter().zip(colours).enumerate()
                    {
                        let y = HEIGHT + 4 + LEGEND_ROW * i as i32;
                        root.draw(&PathElement::new(
                            vec![(x0, y), (x0 + 24, y)],
                            colour.stroke_width(2),
                        ))?;
                        root.draw(&Text::new(
                            c.label,
                            (x0 + 32, y),
                            text(14, HPos::Left, VPos::Center),
                        ))?;
                    }
                }
                root.present()?;
            }
            Ok(svg)
        }
    }
}
