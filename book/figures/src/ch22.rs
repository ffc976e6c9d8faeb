//! Chapter 22's figures, from the runs the chapter commits: the validation loss of both
//! architectures as they trained from the same seed on the same batches (GPT-2 as PyTorch
//! trained it, Llama as the chapter did), and where the heads of the trained Llama model's
//! last layer look in a line of Twelfth Night.

use ch22_pretraining::chars::Chars;
use ch22_pretraining::config::{Arch, Config};
use ch22_pretraining::model::Model;
use ch22_pretraining::runs::parse_log;
use ch22_pretraining::setup::{
    CHARACTERS, LOSS_LOG, SAMPLE, TRAINED_LLAMA, TRAINED_STEPS,
};
use ch22_pretraining::weights::load_safetensors;
use shared::Tensor;

use crate::line_chart::{Curve, LineChart};
use crate::{Figure, Panel};

/// The validation loss of each logged run of [`TRAINED_STEPS`] steps, after every
/// evaluation but the first (before training, all near ln 84).
pub fn validation_loss() -> LineChart {
    let rows = parse_log(LOSS_LOG).expect("the chapter's log reads");
    let curve = |label: &'static str, source: &str, arch: &str| {
        let values: Vec<f32> = rows
            .iter()
            .filter(|r| {
                r.source == source && r.arch == arch && r.steps == TRAINED_STEPS
            })
            .filter(|r| r.evaluation.step > 0)
            .map(|r| r.evaluation.val)
            .collect();
        let first = rows
            .iter()
            .filter(|r| {
                r.source == source && r.arch == arch && r.steps == TRAINED_STEPS
            })
            .filter(|r| r.evaluation.step > 0)
            .map(|r| r.evaluation.step as usize)
            .min()
            .unwrap_or(1);
        Curve {
            label,
            every: first,
            values,
        }
    };
    LineChart {
        name: "ch22-validation-loss",
        title: "The validation loss, 20 fixed batches",
        y_label: "validation loss",
        curves: vec![
            curve("gpt2, trained by PyTorch", "pytorch", "gpt2"),
            curve("llama, trained by the chapter", "ours", "llama"),
        ],
        x_tick: 250,
        y_tick: 0.1,
    }
}

/// How many characters of the chapter's line the heads are drawn over.
const SHOWN: usize = 20;

/// The four heads of the trained Llama model's last layer over the start of the
/// chapter's line.
pub fn trained_heads() -> Figure {
    let chars = Chars::new(CHARACTERS);
    let config = Config::baby(chars.vocab_size());
    let mut model = Model::new(Arch::Llama, &config).expect("a model");
    load_safetensors(&mut model, TRAINED_LLAMA).expect("the trained weights read");
    let Model::Llama(llama) = &model else {
        unreachable!("built as Llama")
    };
    let line: String = SAMPLE.chars().take(SHOWN).collect();
    let ids: Vec<i64> = chars
        .encode(&line)
        .expect("the line's characters")
        .into_iter()
        .map(i64::from)
        .collect();
    let tokens = ids.len();
    let weights = llama.attention_weights(&Tensor::from_vec(ids, &[1, tokens]));
    let last = weights.last().expect("four layers").select(0, 0);
    let labels: Vec<String> = line
        .chars()
        .map(|c| {
            if c == ' ' {
                "␣".to_string()
            } else {
                c.to_string()
            }
        })
        .collect();
    let panels = (0..config.n_heads)
        .map(|h| {
            Panel::new(
                &format!("layer 3 head {h}"),
                &labels,
                &labels,
                &last.select(0, h as i64),
            )
        })
        .collect();
    Figure {
        name: "ch22-trained-heads",
        title: "After training: the last layer's heads over a line of Twelfth Night",
        panels,
        panels_per_row: 2,
    }
}
