//! The third kind of figure: a horizontal bar chart on a logarithmic axis, for sizes that
//! span orders of magnitude (chapter 17's bytes per cached token, model by model).
//!
//! Like the other figures, a chart is data first: [`BarChart::digest`] fingerprints every
//! bar, the SVG records it, and the workspace test `book_includes` recomputes it, so a
//! committed chart that no longer shows the chapter's numbers fails. The drawing (feature
//! `draw`) uses plotters' primitives only, like the line charts.

use crate::fnv1a64;

/// One bar: a labelled value, coloured by its group.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// Written left of the bar, e.g. `Llama 3 8B`.
    pub label: &'static str,
    /// The bar's group, written after the label and giving its colour, e.g. `GQA`.
    pub group: &'static str,
    /// The bar's length, on the logarithmic axis (at least 1).
    pub value: u64,
}

/// Bars top to bottom against a base-2 logarithmic axis.
#[derive(Clone, Debug, PartialEq)]
pub struct BarChart {
    /// The file name without `.svg`, e.g. `ch17-cache-ledger`.
    pub name: &'static str,
    /// Written above the chart.
    pub title: &'static str,
    /// The quantity along the axis, e.g. `bytes per token`.
    pub x_label: &'static str,
    /// The bars, top to bottom.
    pub bars: Vec<Bar>,
}

impl BarChart {
    /// `NAME.svg`.
    pub fn file_name(&self) -> String {
        format!("{}.svg", self.name)
    }

    /// Everything the drawing shows, as text: the titles and every bar.
    pub fn source_text(&self) -> String {
        let mut text = format!(
            "bar chart {}\ntitle {}\nx {}\n",
            self.name, self.title, self.x_label
        );
        for b in &self.bars {
            text += &format!("bar {} ({}) {}\n", b.label, b.group, b.value);
        }
        text
    }

    /// A fingerprint of [`BarChart::source_text`]: `fnv1a64:` and 16 hex digits.
    pub fn digest(&self) -> String {
        format!("fnv1a64:{:016x}", fnv1a64(self.source_text().as_bytes()))
    }

    /// The axis's ends as powers of two: one below half the smallest bar (so the shortest
    /// bar still shows), and the one at or above twice the largest (room for its value).
    pub fn axis_exponents(&self) -> (u32, u32) {
        let smallest = self.bars.iter().map(|b| b.value).min().unwrap_or(1).max(1);
        let largest = self.bars.iter().map(|b| b.value).max().unwrap_or(1).max(1);
        let low = (smallest / 2).max(1).ilog2();
        let high = (2 * largest).next_power_of_two().ilog2();
        (low, high.max(low + 1))
    }
}

#[cfg(feature = "draw")]
mod draw {
    use std::error::Error;

    use plotters::prelude::*;
    use plotters::style::text_anchor::{HPos, Pos, VPos};

    use super::BarChart;

    const WIDTH: i32 = 760;
    /// Space for the title above, the labels left, the ticks below, and right of the
    /// axis's end for the longest bar's value.
    const TOP: i32 = 52;
    const LEFT: i32 = 190;
    const RIGHT: i32 = 48;
    const BOTTOM: i32 = 60;
    /// The height of one bar's row, and of the bar in it.
    const ROW: i32 = 34;
    const BAR: i32 = 22;
    const FONT: &str = "sans-serif";
    /// One colour per group, in the order the groups first appear.
    const COLOURS: [RGBColor; 5] = [
        RGBColor(8, 48, 107),
        RGBColor(33, 113, 181),
        RGBColor(107, 174, 214),
        RGBColor(217, 95, 2),
        RGBColor(117, 112, 179),
    ];

    fn text(size: u32, h: HPos, v: VPos) -> TextStyle<'static> {
        TextStyle::from((FONT, size).into_font())
            .color(&RGBColor(40, 40, 40))
            .pos(Pos::new(h, v))
    }

    /// A power of two as bytes: `512`, `4 KiB`, `1 MiB`.
    fn power_label(exponent: u32) -> String {
        match exponent {
            0..=9 => format!("{}", 1u64 << exponent),
            10..=19 => format!("{} KiB", 1u64 << (exponent - 10)),
            _ => format!("{} MiB", 1u64 << (exponent - 20)),
        }
    }

    impl BarChart {
        /// The chart as SVG text (without the digest comment, which the binary adds).
        pub fn draw(&self) -> Result<String, Box<dyn Error>> {
            let (low, high) = self.axis_exponents();
            let height = TOP + ROW * self.bars.len() as i32 + BOTTOM;
            let (x0, x1, y0) = (LEFT, WIDTH - RIGHT, TOP);
            let y1 = height - BOTTOM;
            let px = |value: f64| {
                let t = (value.log2() - f64::from(low)) / f64::from(high - low);
                x0 + ((x1 - x0) as f64 * t).round() as i32
            };
            let grid = RGBColor(225, 225, 225);
            let axis = RGBColor(90, 90, 90);
            let mut groups: Vec<&str> = Vec::new();
            for b in &self.bars {
                if !groups.contains(&b.group) {
                    groups.push(b.group);
                }
            }

            let mut svg = String::new();
            {
                let size = (WIDTH as u32, height as u32);
                let root =
                    SVGBackend::with_string(&mut svg, size).into_drawing_area();
                root.fill(&WHITE)?;
                root.draw(&Text::new(
                    self.title,
                    (WIDTH / 2, TOP / 2),
                    text(20, HPos::Center, VPos::Center),
                ))?;
                // A grid line at every power of two, labelled below.
                for e in low..=high {
                    let x = px(2f64.powi(e as i32));
                    root.draw(&PathElement::new(vec![(x, y0), (x, y1)], grid))?;
                    root.draw(&Text::new(
                        power_label(e),
                        (x, y1 + 16),
                        text(13, HPos::Center, VPos::Center),
                    ))?;
                }
                root.draw(&Text::new(
                    format!("{} (logarithmic: each line doubles)", self.x_label),
                    ((x0 + x1) / 2, height - 18),
                    text(15, HPos::Center, VPos::Center),
                ))?;
                for (i, b) in self.bars.iter().enumerate() {
                    let middle = y0 + ROW * i as i32 + ROW / 2;
                    let group =
                        groups.iter().position(|g| *g == b.group).unwrap_or(0);
                    let colour = COLOURS[group % COLOURS.len()];
                    let end = px(b.value as f64);
                    root.draw(&Rectangle::new(
                        [(x0, middle - BAR / 2), (end, middle + BAR / 2)],
                        colour.filled(),
                    ))?;
                    root.draw(&Text::new(
                        format!("{} ({})", b.label, b.group),
                        (x0 - 8, middle),
                        text(14, HPos::Right, VPos::Center),
                    ))?;
                    root.draw(&Text::new(
                        format!("{} bytes", b.value),
                        (end + 6, middle),
                        text(13, HPos::Left, VPos::Center),
                    ))?;
                }
                root.draw(&PathElement::new(
                    vec![(x0, y0), (x0, y1), (x1, y1)],
                    axis,
                ))?;
                root.present()?;
            }
            Ok(svg)
        }
    }
}
