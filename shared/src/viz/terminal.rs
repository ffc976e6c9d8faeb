//! The text form of a heatmap: one cell per weight, a shade block then the value, so the
//! picture reads in any terminal, in a log and in a test's failure message.

use std::fmt::{self, Display};

use super::{Heatmap, cell_colour, cell_text, needs_light_ink};

/// The shades from magnitude 0 to the scale's maximum, two characters wide so a shade is
/// about as wide as it is tall.
const SHADES: [&str; 5] = ["  ", "░░", "▒▒", "▓▓", "██"];

/// Space between the two heatmaps of [`side_by_side`].
const GAP: &str = "   ";

/// One line of text and how many columns it takes on screen (colour codes take none).
struct Line {
    text: String,
    width: usize,
}

impl Line {
    fn plain(text: String) -> Line {
        let width = text.chars().count();
        Line { text, width }
    }
}

/// The shade of `value` on the scale `-max ..= max`.
fn shade(value: f32, max: f32) -> &'static str {
    let t = (value.abs() / max).clamp(0.0, 1.0);
    // NaN becomes index 0: a blank cell, whose value says `nan`.
    SHADES[((t * (SHADES.len() - 1) as f32).round() as usize).min(SHADES.len() - 1)]
}

/// `text` centred in `width` columns (an odd space goes to the right).
fn centred(text: &str, width: usize) -> String {
    let pad = width.saturating_sub(text.chars().count());
    format!("{}{text}{}", " ".repeat(pad / 2), " ".repeat(pad - pad / 2))
}

impl Heatmap {
    /// The lines of the heatmap on the scale `-max ..= max`, without the legend: the title
    /// (if any), the key labels, then one line per query.
    fn body(&self, max: f32) -> Vec<Line> {
        let texts: Vec<String> = self.values.iter().map(|&v| cell_text(v)).collect();
        let value_w = texts.iter().map(|t| t.chars().count()).max().unwrap_or(1);
        let cell_w = self
            .cols
            .iter()
            .map(|c| c.chars().count())
            .max()
            .unwrap_or(0)
            .max(2 + value_w);
        let label_w = self
            .rows
            .iter()
            .map(|r| r.chars().count())
            .max()
            .unwrap_or(0);

        let mut lines = Vec::new();
        if !self.title.is_empty() {
            lines.push(Line::plain(self.title.clone()));
        }
        let mut head = " ".repeat(label_w);
        for col in &self.cols {
            head.push(' ');
            head.push_str(&centred(col, cell_w));
        }
        lines.push(Line::plain(head.trim_end().to_string()));
        for (i, row) in self.rows.iter().enumerate() {
            let mut line = Line::plain(format!("{row:<label_w$}"));
            for (j, text) in texts[i * self.cols.len()..][..self.cols.len()]
                .iter()
                .enumerate()
            {
                let value = self.value(i, j);
                // The shade and the value stay together; a wide key label pads on the right.
                let cell = format!(
                    "{:<cell_w$}",
                    format!("{}{text:>value_w$}", shade(value, max))
                );
                line.text.push(' ');
                line.width += 1 + cell_w;
                if self.colour {
                    let (r, g, b) = cell_colour(value, max);
                    let ink = if needs_light_ink(value, max) {
                        "255;255;255"
                    } else {
                        "20;20;20"
                    };
                    line.text.push_str(&format!(
                        "\x1b[48;2;{r};{g};{b}m\x1b[38;2;{ink}m{cell}\x1b[0m"
                    ));
                } else {
                    line.text.push_str(&cell);
                }
            }
            if !self.colour {
                line = Line::plain(line.text.trim_end().to_string());
            }
            lines.push(line);
        }
        lines
    }

    /// What the shades mean: `(blank = 0, ██ = 1.00)`.
    fn legend(&self, max: f32) -> String {
        let sign = if self.values.iter().any(|&v| v < 0.0) {
            "±"
        } else {
            ""
        };
        format!("(blank = 0, {} = {sign}{max:.2})", SHADES[SHADES.len() - 1])
    }
}

/// The text form: the title, the key labels along the top, the query labels down the
/// side, one cell per value, then what the shades mean.
impl Display for Heatmap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for line in self.body(self.scale) {
            writeln!(f, "{}", line.text)?;
        }
        writeln!(f, "{}", self.legend(self.scale))
    }
}

/// Two heatmaps next to each other on one scale (the larger of theirs), for instance
/// the weights a test expects and the weights it got, so a mask on the wrong side of the
/// diagonal or a softmax over the wrong dim shows at a glance.
pub fn side_by_side(left: &Heatmap, right: &Heatmap) -> String {
    let max = left.scale.max(right.scale);
    let (a, b) = (left.body(max), right.body(max));
    let width = a.iter().map(|l| l.width).max().unwrap_or(0);
    let mut out = String::new();
    for k in 0..a.len().max(b.len()) {
        let (text, used) = a.get(k).map_or(("", 0), |l| (l.text.as_str(), l.width));
        let line = match b.get(k) {
            Some(r) => format!("{text}{}{GAP}{}", " ".repeat(width - used), r.text),
            None => text.to_string(),
        };
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let legend = if left.values.iter().any(|&v| v < 0.0) {
        left.legend(max)
    } else {
        right.legend(max)
    };
    out.push_str(&legend);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor;
    use crate::viz::heatmap;

    fn causal() -> Heatmap {
        let weights = tensor!([[1.0, 0.0, 0.0], [0.4, 0.6, 0.0], [0.2, 0.3, 0.5]]);
        heatmap(
            &weights,
            &["Your", "journey", "starts"],
            &["Your", "journey", "starts"],
        )
        .unwrap()
    }

    #[test]
    fn plain_text_has_a_shade_and_a_value_per_cell() {
        assert_eq!(
            causal().title("causal weights").to_string(),
            "causal weights\n\
             \x20        Your   journey starts\n\
             Your    ██1.00       0       0\n\
             journey ▒▒0.40  ▒▒0.60       0\n\
             starts  ░░0.20  ░░0.30  ▒▒0.50\n\
             (blank = 0, ██ = 1.00)\n"
        );
    }

    #[test]
    fn colour_paints_each_cell_background_and_keeps_the_text() {
        let map = heatmap(&tensor!([[1.0, 0.0]]), &["q"], &["a", "b"])
            .unwrap()
            .colour(true);
        assert_eq!(
            map.to_string(),
            "    a      b\n\
             q \x1b[48;2;8;48;107m\x1b[38;2;255;255;255m██1.00\x1b[0m \
             \x1b[48;2;247;251;255m\x1b[38;2;20;20;20m     0\x1b[0m\n\
             (blank = 0, ██ = 1.00)\n"
        );
    }

    #[test]
    fn scores_use_their_largest_magnitude() {
        let map = heatmap(&tensor!([[2.0, -4.0]]), &["q"], &["a", "b"]).unwrap();
        assert_eq!(
            map.to_string(),
            "     a       b\nq ▒▒ 2.00 ██-4.00\n(blank = 0, ██ = ±4.00)\n"
        );
    }

    #[test]
    fn side_by_side_aligns_rows_on_one_scale() {
        let want = causal().title("want");
        let got = heatmap(
            &tensor!([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.0, 0.0, 1.0]]),
            &["Your", "journey", "starts"],
            &["Your", "journey", "starts"],
        )
        .unwrap()
        .title("got");
        let text = side_by_side(&want, &got);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 6, "{text}");
        assert_eq!(lines[0], format!("want{}got", " ".repeat(30 - 4 + 3)));
        assert_eq!(
            lines[2],
            "Your    ██1.00       0       0   Your    ▒▒0.50  ▒▒0.50       0"
        );
        assert_eq!(lines[5], "(blank = 0, ██ = 1.00)");
    }
}
