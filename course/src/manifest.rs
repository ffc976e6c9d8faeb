//! A chapter's manifest, `chapters/chNN-slug/chapter.toml`: what the tools around a chapter
//! need to know about it, in one place inside the chapter's own folder, so that adding a
//! chapter touches no script.
//!
//! ```toml
//! needs_model = false     # reads the real model's file (bash scripts/get-model.sh)
//! needs_data = false      # reads a downloaded text (bash scripts/get-shakespeare.sh)
//! needs_gpu = false       # runs kernels on a GPU through wgpu (a software GPU in CI)
//! libtorch = true         # its output tests also run on libtorch (scripts/test-tch.sh)
//! page_run = "any seed"   # the book's page runs its narrative: "any seed", "seed N", "none"
//! widget = "heatmap"      # the page's widget: "heatmap", "block", "gpu" or "none"
//! seeds = ["0", "10"]     # seeds besides the articles' whose PyTorch output is committed
//! ```
//!
//! The output tests read `seeds` here ([`crate::narrative::seed_references`]); the shell and
//! Node scripts read the same keys with `scripts/chapters.sh` and `scripts/chapters.mjs`;
//! `tests/tests/manifests.rs` checks each key against the chapter itself.

use std::path::Path;

use serde::Deserialize;

/// The manifest's file name, in the chapter's folder.
pub const FILE: &str = "chapter.toml";

/// What the book's page does with the chapter's narrative.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageRun {
    /// The page's run panel runs the narrative for any seed the reader types.
    AnySeed,
    /// The page replays one saved run (the chapter trains too long for a page); another
    /// seed answers with the command that runs it natively.
    Saved(u64),
    /// The page runs nothing (the chapter needs a model file or a GPU).
    None,
}

/// The widget on the chapter's page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Widget {
    /// Attention weights as a heatmap, with controls.
    Heatmap,
    /// A diagram of blocks (chapter 17's paged cache).
    Block,
    /// Kernels run on the reader's GPU.
    Gpu,
    /// No widget.
    None,
}

/// A chapter's manifest, read and checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// The chapter reads the real model's file.
    pub needs_model: bool,
    /// The chapter reads a text the workspace does not hold (`data/`, downloaded).
    pub needs_data: bool,
    /// The chapter runs kernels on a GPU.
    pub needs_gpu: bool,
    /// The chapter's output tests also run on libtorch.
    pub libtorch: bool,
    /// What the book's page runs.
    pub page_run: PageRun,
    /// The widget on the chapter's page.
    pub widget: Widget,
    /// Seeds besides the articles' whose PyTorch output is committed, in order.
    pub seeds: Vec<u64>,
}

/// The file as written: seeds are strings because TOML's integers stop at `i64::MAX`,
/// and `page_run` is checked after reading.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Written {
    needs_model: bool,
    needs_data: bool,
    needs_gpu: bool,
    libtorch: bool,
    page_run: String,
    widget: Widget,
    seeds: Vec<String>,
}

impl Manifest {
    /// Reads the text of a `chapter.toml`. An unknown or missing key, a value of the wrong
    /// type, a `page_run` that is not one of its forms or a seed that is not a `u64` is an
    /// error that names it.
    pub fn parse(text: &str) -> Result<Self, String> {
        let written: Written = toml::from_str(text).map_err(|e| e.to_string())?;
        let page_run = match written.page_run.as_str() {
            "any seed" => PageRun::AnySeed,
            "none" => PageRun::None,
            other => match other.strip_prefix("seed ").map(str::parse::<u64>) {
                Some(Ok(seed)) => PageRun::Saved(seed),
                _ => {
                    return Err(format!(
                        "page_run = {other:?}: expected \"any seed\", \"seed N\" or \"none\""
                    ));
                }
            },
        };
        let seeds = written
            .seeds
            .iter()
            .map(|s| {
                s.parse::<u64>().map_err(|_| {
                    format!("seeds: {s:?} is not a seed (0 to 2^64 - 1)")
                })
            })
            .collect::<Result<Vec<u64>, String>>()?;
        Ok(Self {
            needs_model: written.needs_model,
            needs_data: written.needs_data,
            needs_gpu: written.needs_gpu,
            libtorch: written.libtorch,
            page_run,
            widget: written.widget,
            seeds,
        })
    }

    /// Reads `chapter_dir/chapter.toml`; the error names the file.
    pub fn read(chapter_dir: &Path) -> Result<Self, String> {
        let path = chapter_dir.join(FILE);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CH19: &str = "needs_model = false\nneeds_data = false\nneeds_gpu = false\n\
                        libtorch = false\n\
                        page_run = \"seed 7\"\nwidget = \"heatmap\"\n\
                        seeds = [\"1\", \"18446744073709551615\"]\n";

    #[test]
    fn a_manifest_reads_into_its_fields() {
        let manifest = Manifest::parse(CH19).unwrap();
        assert_eq!(manifest.page_run, PageRun::Saved(7));
        assert_eq!(manifest.widget, Widget::Heatmap);
        assert_eq!(manifest.seeds, vec![1, u64::MAX]);
        assert!(!manifest.libtorch && !manifest.needs_model && !manifest.needs_gpu);
        assert!(!manifest.needs_data);
    }

    #[test]
    fn a_bad_manifest_says_what_is_wrong() {
        let error = |text: &str| Manifest::parse(text).unwrap_err();
        assert!(
            error(&CH19.replace("seed 7", "seven")).contains("page_run = \"seven\"")
        );
        assert!(
            error(&CH19.replace("\"1\"", "\"-1\"")).contains("\"-1\" is not a seed")
        );
        assert!(error(&CH19.replace("heatmap", "chart")).contains("chart"));
        assert!(error(&format!("{CH19}needs_tpu = true\n")).contains("needs_tpu"));
        assert!(error(&CH19.replace("libtorch = false\n", "")).contains("libtorch"));
    }
}
