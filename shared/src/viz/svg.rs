//! Heatmaps as SVG, drawn exactly as the book's figures are (the book draws its figures
//! with this module): one panel per matrix, queries down the side, keys along the top,
//! every value written in its cell, the colour growing darker with the magnitude.
//!
//! The SVG is built as text, with no font metrics (a text is taken to be 0.56 em wide per
//! character), so a figure is the same file on every machine.

use std::fmt::Write;

use super::{Heatmap, cell_colour, cell_text, needs_light_ink};

/// The side of one cell, in pixels.
const CELL: i32 = 52;
/// Space between panels and around the figure.
const GAP: i32 = 28;
/// The height of the figure's title line.
const TITLE_H: i32 = 34;
/// The height of a panel's title line plus the key labels above its cells.
const PANEL_HEAD_H: i32 = 46;
/// The font of the labels and values.
const FONT: &str = "sans-serif";
/// Font sizes in points; the file gives them in pixels, divided by 1.24
/// (16 becomes 12.9 px).
const VALUE_SIZE: u32 = 16;
const LABEL_SIZE: u32 = 16;
const PANEL_TITLE_SIZE: u32 = 18;
const TITLE_SIZE: u32 = 20;

/// The colours of the text: titles, labels, and values in a light cell.
const BLACK: (u8, u8, u8) = (0, 0, 0);
const DARK_TEXT: (u8, u8, u8) = (20, 20, 20);
const GREY: (u8, u8, u8) = (90, 90, 90);
const WHITE: (u8, u8, u8) = (255, 255, 255);

/// About how wide a text is, in pixels, at a font size in points: 0.56 em per character.
pub fn text_width(text: &str, size: u32) -> i32 {
    let px = f64::from(size) / 1.24;
    (0.56 * px * text.chars().count() as f64).ceil() as i32
}

/// Where a text sits relative to its position: centred on it, or ending at it.
#[derive(Clone, Copy)]
enum Anchor {
    Middle,
    End,
}

/// An SVG document being written, one element per line.
struct Svg(String);

impl Svg {
    fn rect_filled(
        &mut self,
        (x, y): (i32, i32),
        (w, h): (i32, i32),
        fill: (u8, u8, u8),
    ) {
        let _ = writeln!(
            self.0,
            r#"<rect x="{x}" y="{y}" width="{w}" height="{h}" opacity="1" fill="{}" stroke="none"/>"#,
            hex(fill)
        );
    }

    fn rect_outline(
        &mut self,
        (x, y): (i32, i32),
        (w, h): (i32, i32),
        stroke: (u8, u8, u8),
    ) {
        let _ = writeln!(
            self.0,
            r#"<rect x="{x}" y="{y}" width="{w}" height="{h}" opacity="1" fill="none" stroke="{}"/>"#,
            hex(stroke)
        );
    }

    fn text(
        &mut self,
        text: &str,
        (x, y): (i32, i32),
        size: u32,
        fill: (u8, u8, u8),
        at: Anchor,
    ) {
        let anchor = match at {
            Anchor::Middle => "middle",
            Anchor::End => "end",
        };
        let _ = writeln!(
            self.0,
            "<text x=\"{x}\" y=\"{y}\" dy=\"0.5ex\" text-anchor=\"{anchor}\" font-family=\"{FONT}\" \
             font-size=\"{}\" opacity=\"1\" fill=\"{}\">\n{}\n</text>",
            f64::from(size) / 1.24,
            hex(fill),
            escape(text)
        );
    }
}

/// `#RRGGBB`.
fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02X}{g:02X}{b:02X}")
}

/// Text as XML needs it inside an element.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// The width of the row labels' column, with its margin.
fn label_width(panel: &Heatmap) -> i32 {
    panel
        .rows
        .iter()
        .map(|r| text_width(r, LABEL_SIZE))
        .max()
        .unwrap_or(0)
        + 14
}

/// The size of one panel: row labels, then the cells.
fn panel_size(panel: &Heatmap) -> (i32, i32) {
    let w = label_width(panel) + CELL * panel.cols.len() as i32;
    let h = PANEL_HEAD_H + CELL * panel.rows.len() as i32;
    (w.max(text_width(&panel.title, PANEL_TITLE_SIZE)), h)
}

/// Draws one panel with its top-left corner at `(x, y)`, on the scale `-max ..= max`.
fn draw_panel(svg: &mut Svg, panel: &Heatmap, (x, y): (i32, i32), max: f32) {
    let cells_x = x + label_width(panel);
    let cells_y = y + PANEL_HEAD_H;
    let cells_w = CELL * panel.cols.len() as i32;
    let mid = Anchor::Middle;

    let title_at = (cells_x + cells_w / 2, y + 10);
    svg.text(&panel.title, title_at, PANEL_TITLE_SIZE, DARK_TEXT, mid);
    for (j, key) in panel.cols.iter().enumerate() {
        let cx = cells_x + CELL * j as i32 + CELL / 2;
        svg.text(key, (cx, cells_y - 12), LABEL_SIZE, GREY, mid);
    }
    for (i, query) in panel.rows.iter().enumerate() {
        let cy = cells_y + CELL * i as i32 + CELL / 2;
        svg.text(query, (cells_x - 8, cy), LABEL_SIZE, GREY, Anchor::End);
        for j in 0..panel.cols.len() {
            let value = panel.value(i, j);
            let corner = (cells_x + CELL * j as i32, cells_y + CELL * i as i32);
            svg.rect_filled(corner, (CELL, CELL), cell_colour(value, max));
            svg.rect_outline(corner, (CELL, CELL), WHITE);
            let ink = if needs_light_ink(value, max) {
                WHITE
            } else {
                DARK_TEXT
            };
            let centre = (corner.0 + CELL / 2, corner.1 + CELL / 2);
            svg.text(&cell_text(value), centre, VALUE_SIZE, ink, mid);
        }
    }
}

/// One figure: `title` above the panels, `per_row` panels to a row, all on one scale
/// (the largest [`Heatmap::scale`] of the panels), as the text of an SVG file.
pub fn figure(title: &str, panels: &[Heatmap], per_row: usize) -> String {
    let per_row = per_row.max(1);
    let sizes: Vec<(i32, i32)> = panels.iter().map(panel_size).collect();
    let col_w = sizes.iter().map(|s| s.0).max().unwrap_or(0);
    let row_h = sizes.iter().map(|s| s.1).max().unwrap_or(0);
    let n_cols = per_row.min(panels.len()) as i32;
    let n_rows = panels.len().div_ceil(per_row) as i32;
    let panels_w = GAP + n_cols * (col_w + GAP);
    let width = panels_w.max(text_width(title, TITLE_SIZE) + 2 * GAP);
    let left = (width - panels_w) / 2;
    let height = TITLE_H + n_rows * (row_h + GAP);
    let max = panels.iter().map(|p| p.scale).fold(1e-6, f32::max);

    let mut svg = Svg(format!(
        "<svg width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" \
         xmlns=\"http://www.w3.org/2000/svg\">\n"
    ));
    svg.rect_filled((0, 0), (width, height), WHITE);
    let title_at = (width / 2, TITLE_H / 2 + 4);
    svg.text(title, title_at, TITLE_SIZE, BLACK, Anchor::Middle);
    for (k, panel) in panels.iter().enumerate() {
        let (col, row) = ((k % per_row) as i32, (k / per_row) as i32);
        let x = left + GAP + col * (col_w + GAP) + (col_w - sizes[k].0) / 2;
        let y = TITLE_H + row * (row_h + GAP);
        draw_panel(&mut svg, panel, (x, y), max);
    }
    svg.0.push_str("</svg>\n");
    svg.0
}

impl Heatmap {
    /// The heatmap as an SVG file, drawn as the book's figures are: its title above it, one
    /// panel.
    pub fn to_svg(&self) -> String {
        figure(&self.title, std::slice::from_ref(self), 1)
    }
}

#[cfg(test)]
mod tests {
    use crate::tensor;
    use crate::viz::heatmap;

    #[test]
    fn one_panel_has_a_cell_and_a_value_per_weight() {
        let map = heatmap(&tensor!([[1.0, 0.0]]), &["q"], &["a&b", "<c>"])
            .unwrap()
            .title("it's");
        let svg = map.to_svg();
        assert!(svg.starts_with("<svg width=\""));
        assert!(svg.ends_with("</svg>\n"));
        assert_eq!(
            svg.matches("<rect").count(),
            1 + 2 * 2,
            "background, fill and outline"
        );
        assert!(svg.contains("\nit&apos;s\n") && svg.contains("\na&amp;b\n"));
        assert!(svg.contains("\n&lt;c&gt;\n"));
        // The weight 1 is the darkest blue, with white ink; the 0 is written `0`.
        assert!(svg.contains(r##"fill="#08306B" stroke="none"/>"##));
        assert!(svg.contains("fill=\"#FFFFFF\">\n1.00\n</text>"));
        assert!(svg.contains("fill=\"#141414\">\n0\n</text>"));
    }
}
