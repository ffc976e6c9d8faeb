//! Draws the book's attention heatmaps as SVG: `cargo run -p book-figures --features draw`
//! (or `bash scripts/make-figures.sh`), from the repository root.
//!
//! Each figure of [`book_figures::figures`] becomes `book/src/figures/NAME.svg`: one panel
//! per matrix of weights, queries down the side, keys along the top, every value written
//! in its cell, the colour growing darker with the weight. The file records the figure's
//! digest, which the workspace test `book_includes` checks against the chapters.
//!
//! `--check` draws every figure in memory and fails if a file differs from it.

use std::error::Error;
use std::fs;
use std::path::Path;
use std::process::ExitCode;

use book_figures::{DIGEST_MARKER, FIGURES_DIR, Figure, Panel, figures, line_charts};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

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
/// Font sizes as passed to plotters, whose SVG back-end writes them scaled by 1/1.24:
/// 16 gives 12.9 px in the file.
const VALUE_SIZE: u32 = 16;
const LABEL_SIZE: u32 = 16;
const PANEL_TITLE_SIZE: u32 = 18;
const TITLE_SIZE: u32 = 20;

/// The lightest and the darkest colour of the scale.
const LIGHT: (f64, f64, f64) = (247.0, 251.0, 255.0);
const DARK: (f64, f64, f64) = (8.0, 48.0, 107.0);

/// About how wide a text is, in pixels, at a plotters font size (no font metrics needed,
/// so the drawing is the same on every machine): 0.56 em per character.
fn text_width(text: &str, size: u32) -> i32 {
    let px = f64::from(size) / 1.24;
    (0.56 * px * text.chars().count() as f64).ceil() as i32
}

/// The darkest colour of a negative value (encodings and scores have a sign; weights do not).
const DARK_NEGATIVE: (f64, f64, f64) = (165.0, 15.0, 21.0);

/// The colour of a value on the figure's scale `-max ..= max`: blue above 0, red below.
fn colour(value: f32, max: f32) -> RGBColor {
    let t = f64::from((value.abs() / max).clamp(0.0, 1.0));
    let dark = if value < 0.0 { DARK_NEGATIVE } else { DARK };
    let mix = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    RGBColor(
        mix(LIGHT.0, dark.0),
        mix(LIGHT.1, dark.1),
        mix(LIGHT.2, dark.2),
    )
}

/// How a value is written in its cell: two decimals, and a plain `0` for a weight that is
/// exactly zero (masked, dropped or padding), so it stands out from a small weight.
fn cell_text(value: f32) -> String {
    if value == 0.0 {
        "0".to_string()
    } else {
        format!("{value:.2}")
    }
}

/// The size of one panel: row labels, then the cells.
fn panel_size(panel: &Panel) -> (i32, i32) {
    let label_w = panel
        .rows
        .iter()
        .map(|r| text_width(r, LABEL_SIZE))
        .max()
        .unwrap_or(0)
        + 14;
    let w = label_w + CELL * panel.cols.len() as i32;
    let h = PANEL_HEAD_H + CELL * panel.rows.len() as i32;
    (w.max(text_width(&panel.title, PANEL_TITLE_SIZE)), h)
}

/// A text style centred on its position.
fn centred(size: u32, colour: &RGBColor) -> TextStyle<'_> {
    TextStyle::from((FONT, size).into_font())
        .color(colour)
        .pos(Pos::new(HPos::Center, VPos::Center))
}

/// Draws one panel with its top-left corner at `(x, y)`.
fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    panel: &Panel,
    (x, y): (i32, i32),
    max: f32,
) -> Result<(), Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    let label_w = panel
        .rows
        .iter()
        .map(|r| text_width(r, LABEL_SIZE))
        .max()
        .unwrap_or(0)
        + 14;
    let cells_x = x + label_w;
    let cells_y = y + PANEL_HEAD_H;
    let cells_w = CELL * panel.cols.len() as i32;
    let dark_text = RGBColor(20, 20, 20);
    let grey = RGBColor(90, 90, 90);

    area.draw(&Text::new(
        panel.title.clone(),
        (cells_x + cells_w / 2, y + 10),
        centred(PANEL_TITLE_SIZE, &dark_text),
    ))?;
    for (j, key) in panel.cols.iter().enumerate() {
        let cx = cells_x + CELL * j as i32 + CELL / 2;
        area.draw(&Text::new(
            key.clone(),
            (cx, cells_y - 12),
            centred(LABEL_SIZE, &grey),
        ))?;
    }
    for (i, query) in panel.rows.iter().enumerate() {
        let cy = cells_y + CELL * i as i32 + CELL / 2;
        area.draw(&Text::new(
            query.clone(),
            (cells_x - 8, cy),
            TextStyle::from((FONT, LABEL_SIZE).into_font())
                .color(&grey)
                .pos(Pos::new(HPos::Right, VPos::Center)),
        ))?;
        for j in 0..panel.cols.len() {
            let value = panel.value(i, j);
            let x0 = cells_x + CELL * j as i32;
            let y0 = cells_y + CELL * i as i32;
            area.draw(&Rectangle::new(
                [(x0, y0), (x0 + CELL, y0 + CELL)],
                colour(value, max).filled(),
            ))?;
            area.draw(&Rectangle::new(
                [(x0, y0), (x0 + CELL, y0 + CELL)],
                RGBColor(255, 255, 255).stroke_width(1),
            ))?;
            let ink = if value.abs() / max > 0.6 {
                RGBColor(255, 255, 255)
            } else {
                dark_text
            };
            area.draw(&Text::new(
                cell_text(value),
                (x0 + CELL / 2, y0 + CELL / 2),
                centred(VALUE_SIZE, &ink),
            ))?;
        }
    }
    Ok(())
}

/// The SVG text of one figure, with its digest in a comment after the opening tag.
fn draw(figure: &Figure) -> Result<String, Box<dyn Error>> {
    let per_row = figure.panels_per_row.max(1);
    let sizes: Vec<(i32, i32)> = figure.panels.iter().map(panel_size).collect();
    let col_w = sizes.iter().map(|s| s.0).max().unwrap_or(0);
    let row_h = sizes.iter().map(|s| s.1).max().unwrap_or(0);
    let n_cols = per_row.min(figure.panels.len()) as i32;
    let n_rows = figure.panels.len().div_ceil(per_row) as i32;
    let panels_w = GAP + n_cols * (col_w + GAP);
    let width = panels_w.max(text_width(figure.title, TITLE_SIZE) + 2 * GAP);
    let left = (width - panels_w) / 2;
    let height = TITLE_H + n_rows * (row_h + GAP);
    let max = figure.max_value();

    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (width as u32, height as u32)).into_drawing_area();
        root.fill(&WHITE)?;
        root.draw(&Text::new(
            figure.title,
            (width / 2, TITLE_H / 2 + 4),
            centred(TITLE_SIZE, &RGBColor(0, 0, 0)),
        ))?;
        for (k, panel) in figure.panels.iter().enumerate() {
            let (col, row) = ((k % per_row) as i32, (k / per_row) as i32);
            let x = left + GAP + col * (col_w + GAP) + (col_w - sizes[k].0) / 2;
            let y = TITLE_H + row * (row_h + GAP);
            draw_panel(&root, panel, (x, y), max)?;
        }
        root.present()?;
    }
    with_digest(svg, &figure.digest())
}

/// The SVG text with the figure's digest in a comment after the opening tag.
fn with_digest(mut svg: String, digest: &str) -> Result<String, Box<dyn Error>> {
    let comment = format!(
        "\n<!-- Drawn by book/figures (bash scripts/make-figures.sh) from the chapters' tensors; \
         do not edit. {DIGEST_MARKER}{digest} -->"
    );
    let tag_end = svg.find('>').ok_or("plotters wrote no <svg> tag")? + 1;
    svg.insert_str(tag_end, &comment);
    if !svg.ends_with('\n') {
        svg.push('\n');
    }
    Ok(svg)
}

fn run(check: bool) -> Result<bool, Box<dyn Error>> {
    let dir = Path::new(FIGURES_DIR);
    if !dir.is_dir() {
        return Err(format!("{FIGURES_DIR} not found: run from the repository root").into());
    }
    let mut stale = Vec::new();
    let mut drawn = Vec::new();
    for figure in figures() {
        drawn.push((figure.file_name(), draw(&figure)?));
    }
    for chart in line_charts() {
        drawn.push((
            chart.file_name(),
            with_digest(chart.draw()?, &chart.digest())?,
        ));
    }
    for (file, svg) in drawn {
        let path = dir.join(file);
        let current = fs::read_to_string(&path).unwrap_or_default();
        if current == svg {
            continue;
        }
        if check {
            stale.push(path.display().to_string());
        } else {
            fs::write(&path, svg)?;
            println!("wrote {}", path.display());
        }
    }
    for path in &stale {
        eprintln!("stale: {path} (run: bash scripts/make-figures.sh)");
    }
    Ok(stale.is_empty())
}

fn main() -> ExitCode {
    let check = std::env::args().any(|a| a == "--check");
    match run(check) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("make-figures: {e}");
            ExitCode::FAILURE
        }
    }
}
