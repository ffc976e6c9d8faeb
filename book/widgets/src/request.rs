//! The requests a page sends and the answers it gets, both JSON.
//!
//! ```text
//! {"run": 5, "seed": "7"}                 -> the text `cargo run -p ch05-causal -- --seed 7` prints
//! {"run": 5}                              -> the same with the articles' seeds
//! {"heatmap": {"chapter": 5, ...}}        -> {"queries": [...], "keys": [...], "heads": [[[...]]]}
//! {"controls": 5}                         -> [{"knob": "words", "label": "sentence", "input": "words", ...}, ...]
//! {"blocks": {"block_size": 4, "steps": ["request", "token"]}} -> {"blocks": [...], "sequences": [...], ...}
//! {"gpu": {"n": 256, "heads": 1, "d": 64, "seed": "0"}}  -> {"q": [...], "k": [...], "v": [...], "out": [...], "lse": [...]}
//! ```
//!
//! Seeds travel as strings: JavaScript's numbers cannot hold every `u64`.

use serde::Deserialize;

use crate::heatmap::{Heatmap, Settings};
use crate::seed::parse_seed;

/// One request of a page.
#[derive(Deserialize)]
#[serde(untagged, deny_unknown_fields)]
enum Request {
    /// Run chapter `run` (1 to 19), with `--seed seed` if given.
    Run { run: u32, seed: Option<String> },
    /// Draw a chapter's attention weights under these settings (boxed: they are many
    /// knobs, the other requests a number or two).
    Heatmap { heatmap: Box<Settings> },
    /// The controls of chapter `controls`'s widget, for the page to draw.
    Controls { controls: u32 },
    /// Chapter 17's block pool after these steps.
    Blocks {
        blocks: crate::blocks::BlockSettings,
    },
    /// Chapter 21's inputs and chapter 9's result for them.
    Gpu { gpu: crate::gpu::GpuSettings },
}

/// Answers one request: the chapter's printed text, or a heatmap as JSON. An error is a
/// message for the reader.
pub fn answer(request: &str) -> Result<String, String> {
    let request: Request = serde_json::from_str(request)
        .map_err(|e| format!("a request the page cannot make: {e}"))?;
    match request {
        Request::Run { run, seed } => {
            let seed = seed.map(|s| parse_seed(&s)).transpose()?;
            crate::chapters::story(run, seed)
        }
        Request::Heatmap { heatmap } => {
            let map: Heatmap = crate::heatmap::heatmap(&heatmap)?;
            serde_json::to_string(&map).map_err(|e| e.to_string())
        }
        Request::Controls { controls } => {
            let controls = crate::heatmap::controls(controls)?;
            serde_json::to_string(&controls).map_err(|e| e.to_string())
        }
        Request::Blocks { blocks } => {
            let pool = crate::blocks::pool(&blocks)?;
            serde_json::to_string(&pool).map_err(|e| e.to_string())
        }
        Request::Gpu { gpu } => {
            let inputs = crate::gpu::inputs(&gpu)?;
            serde_json::to_string(&inputs).map_err(|e| e.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_prints_the_chapter_with_its_seed() {
        let text = answer(r#"{"run": 5, "seed": "7"}"#).unwrap();
        assert_eq!(
            text,
            ch05_causal::narrative::narrative(course::Seed::given(7))
                .unwrap()
                .to_string()
        );
        assert!(
            answer(r#"{"run": 20}"#)
                .unwrap_err()
                .contains("the chapters are 1 to 19")
        );
        assert!(
            answer(r#"{"run": 5, "seed": "-1"}"#)
                .unwrap_err()
                .contains("whole number")
        );
    }

    #[test]
    fn chapter_19_runs_its_saved_run_and_sends_other_seeds_to_cargo() {
        let saved = answer(r#"{"run": 19}"#).unwrap();
        assert_eq!(answer(r#"{"run": 19, "seed": "7"}"#).unwrap(), saved);
        let text = ch19_induction_heads::narrative::narrative(course::Seed::ARTICLES)
            .unwrap()
            .to_string();
        assert_eq!(saved, text);
        let other = answer(r#"{"run": 19, "seed": "8"}"#).unwrap_err();
        assert!(
            other.contains("cargo run --release -p ch19-induction-heads -- --seed 8")
        );
    }

    #[test]
    fn a_heatmap_answers_json() {
        let text =
            answer(r#"{"heatmap": {"chapter": 5, "words": ["Your", "step"]}}"#)
                .unwrap();
        let map: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(map["keys"], serde_json::json!(["Your", "step"]));
        assert!(answer(r#"{"heatmap": {"chapter": 5, "colour": 1}}"#).is_err());
    }

    #[test]
    fn the_controls_answer_json() {
        let text = answer(r#"{"controls": 14}"#).unwrap();
        let controls: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(controls[0]["knob"], "prompt");
        assert_eq!(controls[0]["input"], "words");
        assert_eq!(controls[0]["value"], "0 6 12");
        assert!(answer(r#"{"controls": 1}"#).is_err());
    }
}
