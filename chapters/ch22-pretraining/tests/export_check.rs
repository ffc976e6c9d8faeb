//! transformers on the saved model: `tests/fixtures/export_check.txt` is what
//! `reference/ch22_export_check.py` printed after loading the small model of
//! `tests/common/tiny_export.rs` with `AutoModelForCausalLM` and `AutoTokenizer`. Chapter
//! 20's loader, on the same model saved here, must read the prompts as the same ids,
//! continue them with the same greedy tokens, and compute the logits after the prompt
//! within the rounding of float32 sums taken in another order.

#[path = "common/tiny_export.rs"]
mod tiny_export;

use ch20_real_model::generate::{Choice, Limits, as_batch, generate};
use ch20_real_model::loader::load;
use ch20_real_model::tokenizer::encode;
use ch22_pretraining::export::save_hub;
use ch22_pretraining::tokenizer_json::to_tokenizer;

const FIXTURE: &str = include_str!("fixtures/export_check.txt");

/// The rule for the logits: within `K` float32 epsilons of the largest logit, as chapter
/// 20 compares its own logits with transformers' (there 1536 for 30 layers; measured
/// here: 2 for 2 layers).
const K: f32 = 16.0;

/// One prompt of the fixture.
struct Expected {
    prompt: String,
    ids: Vec<u32>,
    greedy: Vec<u32>,
    logits: Vec<f32>,
}

fn numbers(line: &str, prefix: &str) -> Vec<u32> {
    line.strip_prefix(prefix)
        .unwrap_or_else(|| panic!("a line {prefix:?}, got {line:?}"))
        .split_whitespace()
        .map(|n| n.parse().expect("a number"))
        .collect()
}

fn expected() -> (u64, Vec<Expected>) {
    let lines: Vec<&str> = FIXTURE.lines().collect();
    let seed = lines
        .iter()
        .find_map(|l| l.strip_prefix("seed "))
        .expect("a seed line")
        .parse()
        .expect("a seed");
    let mut all = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(prompt) = line.strip_prefix("prompt ") else {
            continue;
        };
        let logits = lines[i + 4]
            .strip_prefix("last logits ")
            .expect("the logits line")
            .split_whitespace()
            .map(|w| f32::from_bits(u32::from_str_radix(w, 16).expect("hex")))
            .collect();
        all.push(Expected {
            prompt: prompt.trim_matches('\'').to_string(),
            ids: numbers(lines[i + 1], "ids "),
            greedy: numbers(lines[i + 2], "greedy "),
            logits,
        });
    }
    (seed, all)
}

#[test]
fn chapter_20_on_the_saved_model_answers_as_transformers() {
    let (seed, prompts) = expected();
    assert_eq!(prompts.len(), 2, "the fixture's prompts");
    let (model, config, bpe) = tiny_export::trained(seed, tiny_export::STEPS);
    let dir = std::env::temp_dir()
        .join(format!("ch22-export-check-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let tokenizer = to_tokenizer(&bpe).expect("a tokenizer");
    save_hub(&dir, &model, &config, &tokenizer).expect("saved");
    let loaded = load(&dir, |_, _| {}).expect("loaded");
    let _ = std::fs::remove_dir_all(&dir);
    for p in prompts {
        let ids = encode(&loaded.tokenizer, &p.prompt).expect("ids");
        assert_eq!(
            ids, p.ids,
            "{:?}: the ids (ours left, transformers' right)",
            p.prompt
        );
        let limits = Limits {
            max_new_tokens: config.context - ids.len(),
            eos: loaded.eos,
            context_length: config.context,
        };
        let greedy = generate(
            &loaded.model,
            &loaded.recipe,
            &ids,
            Choice::Greedy,
            &limits,
            |_| {},
        )
        .expect("generated");
        assert_eq!(
            greedy, p.greedy,
            "{:?}: greedy tokens (ours left)",
            p.prompt
        );
        let (logits, _) = loaded.model.forward(&as_batch(&ids), &loaded.recipe);
        let ours = logits.select(0, 0).select(0, -1).to_vec();
        let scale = p.logits.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let tolerance = K * f32::EPSILON * scale;
        let (worst, at) = ours
            .iter()
            .zip(&p.logits)
            .map(|(a, b)| (a - b).abs())
            .enumerate()
            .fold(
                (0.0f32, 0),
                |(m, i), (j, d)| if d > m { (d, j) } else { (m, i) },
            );
        println!(
            "{:?}: largest difference {worst:e} (logit {at}), {:.1} epsilons of the largest logit {scale}",
            p.prompt,
            worst / (f32::EPSILON * scale)
        );
        assert!(
            worst <= tolerance,
            "{:?}: logit {at} is {} here, {} in transformers (tolerance {tolerance:e})",
            p.prompt,
            ours[at],
            p.logits[at]
        );
    }
}
