//! Draws the book's attention heatmaps as SVG: `cargo run -p book-figures --features draw`
//! (or `bash scripts/make-figures.sh`), from the repository root.
//!
//! Each figure of [`book_figures::figures`] becomes `book/src/figures/NAME.svg`: one panel
//! per matrix of weights, queries down the side, keys along the top, every value written
//! in its cell, the colour growing darker with the weight (drawn by `shared::viz::svg`;
//! the line charts by plotters). The file records the figure's digest, which the workspace
//! test `book_includes` checks against the chapters.
//!
//! `--check` draws every figure in memory and fails if a file differs from it.

use std::error::Error;
use std::fs;
use std::path::Path;
use std::process::ExitCode;

use book_figures::{
    DIGEST_MARKER, FIGURES_DIR, Figure, bar_charts, figures, line_charts,
};
use shared::viz::{Heatmap, svg};

/// The SVG text of one figure, with its digest in a comment after the opening tag. The
/// drawing is `shared::viz::svg`'s, the one a learner's `Heatmap::to_svg` makes too; the
/// panels share one scale, the largest magnitude of the figure.
fn draw(figure: &Figure) -> Result<String, Box<dyn Error>> {
    let max = figure.max_value();
    let panels: Vec<Heatmap> = figure
        .panels
        .iter()
        .map(|panel| Heatmap {
            title: panel.title.clone(),
            rows: panel.rows.clone(),
            cols: panel.cols.clone(),
            values: panel.values.clone(),
            scale: max,
            colour: false,
        })
        .collect();
    let drawn = svg::figure(figure.title, &panels, figure.panels_per_row);
    with_digest(drawn, &figure.digest())
}

/// The SVG text with the figure's digest in a comment after the opening tag.
fn with_digest(mut svg: String, digest: &str) -> Result<String, Box<dyn Error>> {
    let comment = format!(
        "\n<!-- Drawn by book/figures (bash scripts/make-figures.sh) from the chapters' tensors; \
         do not edit. {DIGEST_MARKER}{digest} -->"
    );
    let tag_end = svg.find('>').ok_or("the drawing has no <svg> tag")? + 1;
    svg.insert_str(tag_end, &comment);
    if !svg.ends_with('\n') {
        svg.push('\n');
    }
    Ok(svg)
}

fn run(check: bool) -> Result<bool, Box<dyn Error>> {
    let dir = Path::new(FIGURES_DIR);
    if !dir.is_dir() {
        return Err(
            format!("{FIGURES_DIR} not found: run from the repository root").into(),
        );
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
    for chart in bar_charts() {
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
