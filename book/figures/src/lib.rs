//! # The book's figures: attention weights, from the chapters' own tensors
//!
//! Every heatmap in the book is listed here: which tensor of which chapter it shows, with
//! the tokens that label its rows (the queries) and columns (the keys). The tensors are
//! computed by calling the chapter crates, with the same seeds and in the same order as
//! the chapters' narratives, so a figure shows exactly the weights the chapter computes.
//!
//! This library does not draw. The binary `make-figures` (feature `draw`, which brings in
//! plotters for the line charts) draws each [`Figure`] with `shared::viz::svg`, as a
//! learner's `Heatmap::to_svg` does, into `book/src/figures/NAME.svg`, and writes the
//! figure's [`Figure::digest`] into the file. The workspace test `book_includes` recomputes the
//! figures through this library and compares the digests, so a committed figure that no
//! longer shows the chapters' numbers fails `cargo test`, without compiling plotters.

pub mod bar_chart;
mod ch10;
pub mod ch11;
mod ch12;
mod ch13;
mod ch14;
mod ch17;
mod ch19;
mod ch20;
mod ch22;
pub mod line_chart;

pub use bar_chart::BarChart;
pub use line_chart::LineChart;

use ch01_embeddings::inputs::{
    LIFE_IS_SHORT, YOUR_JOURNEY_WORDS, my_name_ids, your_journey,
};
use ch01_embeddings::lookup::lookup;
use ch01_embeddings::vocabulary::{token_ids, vocabulary};
use ch02_dot_product::all_at_once::all_attention_scores;
use ch04_trainable::SelfAttentionV2;
use ch04_trainable::scaled::scaled_attention_weights;
use ch05_causal::causal_mask;
use ch05_causal::masked_softmax::masked_softmax;
use ch06_multihead_wrapper::wrapper::MultiHeadAttentionWrapper;
use ch07_multihead_split::einsum_heads::{einsum_project, einsum_scores};
use ch07_multihead_split::heads::split_heads;
use ch07_multihead_split::multihead::MultiHeadAttention;
use ch07_multihead_split::qkv::MultiHeadAttentionQkv;
use ch07_multihead_split::scaled_dot_product::scaled_dot_product_attention;
use ch08_cross_attention::cross::cross_attention;
use ch08_cross_attention::padding::{key_padding, padding_mask};
use shared::nn::{Dropout, Embedding};
use shared::{Tensor, manual_seed, rand, stack};

/// Where the figures live, relative to the repository root.
pub const FIGURES_DIR: &str = "book/src/figures";

/// The marker before the digest that every figure file carries (in an XML comment).
pub const DIGEST_MARKER: &str = "source-digest: ";

/// One heatmap: a matrix of weights, one row per query and one column per key.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    /// Written above the panel, e.g. `head 0`.
    pub title: String,
    /// The query tokens, top to bottom.
    pub rows: Vec<String>,
    /// The key tokens, left to right.
    pub cols: Vec<String>,
    /// Row-major, `rows.len() × cols.len()` values.
    pub values: Vec<f32>,
}

impl Panel {
    /// A panel of a 2-D tensor of weights.
    ///
    /// # Shapes
    /// `weights`: `[rows.len(), cols.len()]`.
    ///
    /// # Panics
    /// If the labels do not fit the tensor's shape.
    pub fn new<S: AsRef<str>>(
        title: &str,
        rows: &[S],
        cols: &[S],
        weights: &Tensor,
    ) -> Panel {
        let rows: Vec<String> = rows.iter().map(|s| s.as_ref().to_string()).collect();
        let cols: Vec<String> = cols.iter().map(|s| s.as_ref().to_string()).collect();
        assert_eq!(
            weights.sizes(),
            [rows.len(), cols.len()],
            "panel {title:?}: the labels do not fit the weights"
        );
        Panel {
            title: title.to_string(),
            rows,
            cols,
            values: weights.to_vec(),
        }
    }

    /// The value in row `row`, column `col`.
    pub fn value(&self, row: usize, col: usize) -> f32 {
        self.values[row * self.cols.len() + col]
    }
}

/// One figure of the book: one or more panels side by side, one SVG file.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// The file name without `.svg`, e.g. `ch05-causal-mask`.
    pub name: &'static str,
    /// Written above the panels.
    pub title: &'static str,
    /// The panels, left to right, then top to bottom.
    pub panels: Vec<Panel>,
    /// How many panels go in one row.
    pub panels_per_row: usize,
}

impl Figure {
    /// `NAME.svg`.
    pub fn file_name(&self) -> String {
        format!("{}.svg", self.name)
    }

    /// Everything the drawing shows, as text: the titles, the labels, and every value with
    /// all its digits (Rust's shortest exact form of an `f32`).
    pub fn source_text(&self) -> String {
        let mut text = format!("figure {}\ntitle {}\n", self.name, self.title);
        text.push_str(&format!("panels_per_row {}\n", self.panels_per_row));
        for panel in &self.panels {
            text.push_str(&format!("panel {}\n", panel.title));
            text.push_str(&format!("rows {:?}\ncols {:?}\n", panel.rows, panel.cols));
            for row in panel.values.chunks(panel.cols.len()) {
                text.push_str(&format!("{row:?}\n"));
            }
        }
        text
    }

    /// A fingerprint of [`Figure::source_text`]: `fnv1a64:` and 16 hex digits.
    pub fn digest(&self) -> String {
        format!("fnv1a64:{:016x}", fnv1a64(self.source_text().as_bytes()))
    }

    /// The largest magnitude of all panels (the darkest colour), at least 1e-6.
    pub fn max_value(&self) -> f32 {
        self.panels
            .iter()
            .flat_map(|p| p.values.iter().map(|v| v.abs()))
            .filter(|v| v.is_finite())
            .fold(1e-6, f32::max)
    }
}

/// The 64-bit FNV-1a hash: enough to notice that a figure's numbers changed.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The digest a figure file records after [`DIGEST_MARKER`], if any.
pub fn recorded_digest(svg: &str) -> Option<&str> {
    let start = svg.find(DIGEST_MARKER)? + DIGEST_MARKER.len();
    let rest = &svg[start..];
    let end = rest.find(|c: char| c.is_whitespace()).unwrap_or(rest.len());
    Some(&rest[..end])
}

/// Every figure of the book, in the order of the chapters.
pub fn figures() -> Vec<Figure> {
    vec![
        ch02_weights(),
        ch04_scaled_weights(),
        ch04_linear_weights(),
        ch05_causal_mask(),
        ch05_dropout(),
        ch06_wrapper_heads(),
        ch07_split_heads(),
        ch07_einsum_heads(),
        ch08_cross_attention(),
        ch08_padded_cross_attention(),
        ch10::ch10_score_gradients(),
        ch11::attention_before_after(),
        ch12::ch12_sinusoidal(),
        ch12::ch12_rope(),
        ch13::three_attentions(),
    ]
    .into_iter()
    .chain(ch14::figures())
    .chain([ch19::heads_before(), ch19::heads_after()])
    .chain([ch20::sink(), ch20::induction()])
    .chain([ch22::trained_heads()])
    .collect()
}

/// Every line chart of the book (see [`line_chart`]), in the order of the chapters.
pub fn line_charts() -> Vec<LineChart> {
    vec![
        ch11::loss_curve(),
        ch19::loss_curve(),
        ch19::score_curves(),
        ch22::validation_loss(),
    ]
}

/// Every bar chart of the book (see [`bar_chart`]), in the order of the chapters.
pub fn bar_charts() -> Vec<BarChart> {
    vec![ch17::cache_ledger()]
}

/// The words of Raschka's sentence in sentence order: `Life`, `is`, `short`, ...
fn life_is_short_words() -> Vec<String> {
    LIFE_IS_SHORT
        .split_whitespace()
        .map(|w| w.trim_matches(',').to_string())
        .collect()
}

/// Raschka's sentence embedded as chapter 1 does it: `Embedding(6, 16)` after
/// `manual_seed(123)`, rows in sentence order.
///
/// # Shapes
/// Returns `[6, 16]`.
fn life_is_short_embedded() -> Tensor {
    let vocab = vocabulary(LIFE_IS_SHORT);
    let sentence_int = token_ids(LIFE_IS_SHORT, &vocab);
    manual_seed(123);
    let embed = Embedding::new(6, 16);
    lookup(&embed.weight, &sentence_int)
}

/// `["#1", "#2", ...]`: labels for tokens that are random vectors, not words.
fn numbered(prefix: &str, n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("{prefix}{i}")).collect()
}

/// Chapter 2: softmax of the dot products of "Your journey starts with one step".
fn ch02_weights() -> Figure {
    let inputs = your_journey();
    let weights = all_attention_scores(&inputs).softmax(-1);
    Figure {
        name: "ch02-weights",
        title: "Attention weights: softmax of the dot products (rows sum to 1)",
        panels: vec![Panel::new(
            "softmax(inputs · inputsᵀ)",
            &YOUR_JOURNEY_WORDS,
            &YOUR_JOURNEY_WORDS,
            &weights,
        )],
        panels_per_row: 1,
    }
}

/// Chapter 4: the scaled attention weights of Raschka's article (rand weights after
/// `manual_seed(123)`), for every query; the chapter prints row `is`, the query of x(2).
fn ch04_scaled_weights() -> Figure {
    let words = life_is_short_words();
    let embedded_sentence = life_is_short_embedded();
    manual_seed(123);
    let d = embedded_sentence.size(1);
    let (d_q, d_k) = (24, 24);
    let w_query = rand(&[d_q, d]);
    let w_key = rand(&[d_k, d]);
    // W · Eᵀ projects every token (one column each); `.t()` turns columns into rows.
    let queries = w_query.matmul(&embedded_sentence.t()).t();
    let keys = w_key.matmul(&embedded_sentence.t()).t();
    let weights = scaled_attention_weights(&queries.matmul(&keys.t()), d_k);
    Figure {
        name: "ch04-scaled-weights",
        title: "Scaled attention weights, softmax(Q·Kᵀ / √24), rand weights (Raschka's article)",
        panels: vec![Panel::new("queries × keys", &words, &words, &weights)],
        panels_per_row: 1,
    }
}

/// Chapter 4: the scaled attention weights of `SelfAttention_v2` (`nn::Linear` weights after
/// `manual_seed(789)`), every key visible: the weights beside which the `rand` weights of
/// Raschka's article look one-hot.
fn ch04_linear_weights() -> Figure {
    let (weights, _) = ch05_weights();
    Figure {
        name: "ch04-linear-weights",
        title: "Scaled attention weights of SelfAttention_v2 (nn.Linear weights, manual_seed(789))",
        panels: vec![Panel::new(
            "queries × keys",
            &YOUR_JOURNEY_WORDS,
            &YOUR_JOURNEY_WORDS,
            &weights,
        )],
        panels_per_row: 1,
    }
}

/// Chapter 5's scores and weights: `SelfAttention_v2` after `manual_seed(789)`.
///
/// Returns `(weights without mask, causal weights)`, both `[6, 6]`.
fn ch05_weights() -> (Tensor, Tensor) {
    let inputs = your_journey();
    manual_seed(789);
    let sa_v2 = SelfAttentionV2::new(inputs.size(1), 2, false);
    let queries = sa_v2.w_query.forward(&inputs);
    let keys = sa_v2.w_key.forward(&inputs);
    let d_k = keys.size(-1);
    let scores = queries.matmul(&keys.t());
    let before = scaled_attention_weights(&scores, d_k);
    let after = masked_softmax(&scores, &causal_mask(scores.size(0)), d_k);
    (before, after)
}

/// Chapter 5: the weights before and after the causal mask.
fn ch05_causal_mask() -> Figure {
    let (before, after) = ch05_weights();
    Figure {
        name: "ch05-causal-mask",
        title: "Before and after the causal mask (SelfAttention_v2, manual_seed(789))",
        panels: vec![
            Panel::new(
                "every key visible",
                &YOUR_JOURNEY_WORDS,
                &YOUR_JOURNEY_WORDS,
                &before,
            ),
            Panel::new(
                "future keys masked (-inf, then softmax)",
                &YOUR_JOURNEY_WORDS,
                &YOUR_JOURNEY_WORDS,
                &after,
            ),
        ],
        panels_per_row: 2,
    }
}

/// Chapter 5: the causal weights before and after `Dropout(0.5)` (after `manual_seed(123)`).
fn ch05_dropout() -> Figure {
    let (_, causal) = ch05_weights();
    manual_seed(123);
    let dropped = Dropout::new(0.5).forward(&causal);
    Figure {
        name: "ch05-dropout",
        title: "Before and after Dropout(0.5) (manual_seed(123)): kept weights are doubled",
        panels: vec![
            Panel::new(
                "causal weights",
                &YOUR_JOURNEY_WORDS,
                &YOUR_JOURNEY_WORDS,
                &causal,
            ),
            Panel::new(
                "after dropout",
                &YOUR_JOURNEY_WORDS,
                &YOUR_JOURNEY_WORDS,
                &dropped,
            ),
        ],
        panels_per_row: 2,
    }
}

/// The batch of chapters 5 to 7: "Your journey starts with one step" twice.
///
/// # Shapes
/// Returns `[2, 6, 3]`.
fn your_journey_batch() -> Tensor {
    let inputs = your_journey();
    stack(&[&inputs, &inputs], 0)
}

/// Chapter 6: the causal weights of each head of the blog post's `MultiHeadAttentionWrapper`
/// (`manual_seed(123)`, two heads of `d_out = 2`), first sequence of the batch.
fn ch06_wrapper_heads() -> Figure {
    let batch = your_journey_batch();
    let num_tokens = batch.size(1);
    manual_seed(123);
    let mha = MultiHeadAttentionWrapper::new(3, 2, num_tokens, 0.0, 2, false);
    let panels = mha
        .heads
        .iter()
        .enumerate()
        .map(|(i, head)| {
            // Inside CausalAttention::forward, up to the weights (dropout is 0).
            let keys = head.w_key.forward(&batch);
            let queries = head.w_query.forward(&batch);
            let scores = queries.matmul(&keys.transpose(-2, -1));
            let mask = head.mask.slice(0, ..num_tokens).slice(1, ..num_tokens);
            let weights = masked_softmax(&scores, &mask, keys.size(-1));
            Panel::new(
                &format!("head {i}"),
                &YOUR_JOURNEY_WORDS,
                &YOUR_JOURNEY_WORDS,
                &weights.get(0),
            )
        })
        .collect();
    Figure {
        name: "ch06-wrapper-heads",
        title: "MultiHeadAttentionWrapper: each head's causal weights (manual_seed(123))",
        panels,
        panels_per_row: 2,
    }
}

/// Chapter 7: the causal weights of each head of the blog post's `MultiHeadAttention`
/// (`manual_seed(123)`, `d_out = 2`, two heads of one feature), first sequence.
fn ch07_split_heads() -> Figure {
    let batch = your_journey_batch();
    let num_tokens = batch.size(1);
    manual_seed(123);
    let mha = MultiHeadAttention::new(3, 2, num_tokens, 0.0, 2, false);
    // Inside MultiHeadAttention::forward, up to the weights (dropout is 0).
    let keys = split_heads(&mha.w_key.forward(&batch), mha.num_heads);
    let queries = split_heads(&mha.w_query.forward(&batch), mha.num_heads);
    let scores = queries.matmul(&keys.transpose(2, 3));
    let mask = mha.mask.slice(0, ..num_tokens).slice(1, ..num_tokens);
    let weights = masked_softmax(&scores, &mask, keys.size(-1)); // [b, heads, tokens, tokens]
    let first = weights.get(0);
    let panels = (0..mha.num_heads)
        .map(|h| {
            Panel::new(
                &format!("head {h}"),
                &YOUR_JOURNEY_WORDS,
                &YOUR_JOURNEY_WORDS,
                &first.get(h),
            )
        })
        .collect();
    Figure {
        name: "ch07-split-heads",
        title: "MultiHeadAttention with weight splits: each head's causal weights",
        panels,
        panels_per_row: 2,
    }
}

/// Chapter 7: Politi's four einsum heads over "my name is marcello politi" (no mask).
fn ch07_einsum_heads() -> Figure {
    let words = ["my", "name", "is", "marcello", "politi"];
    manual_seed(0);
    let embed = Embedding::new(10, 16);
    let sentence_embed = lookup(&embed.weight, &my_name_ids());
    let d = sentence_embed.size(1);
    let h = 4;
    let d_k = d / h;
    let w_query = rand(&[h, d, d_k]);
    let w_key = rand(&[h, d, d_k]);
    let queries = einsum_project(&sentence_embed, &w_query);
    let keys = einsum_project(&sentence_embed, &w_key);
    let weights = einsum_scores(&queries, &keys).softmax(-1); // [h, seq, seq]
    let panels = (0..h)
        .map(|i| Panel::new(&format!("head {i}"), &words, &words, &weights.get(i)))
        .collect();
    Figure {
        name: "ch07-einsum-heads",
        title: "Four heads with einsum (Politi's article, manual_seed(0)): each head attends its own way",
        panels,
        panels_per_row: 2,
    }
}

/// Chapter 8: every token of Raschka's sentence attends to the second sequence of 8
/// tokens (rand after the weights); the chapter prints row `is`.
fn ch08_cross_attention() -> Figure {
    let words = life_is_short_words();
    let embedded_sentence = life_is_short_embedded();
    manual_seed(123);
    let d = embedded_sentence.size(1);
    let (d_q, d_k, d_v) = (24, 24, 28);
    let w_query = rand(&[d_q, d]);
    let w_key = rand(&[d_k, d]);
    let w_value = rand(&[d_v, d]);
    let embedded_sentence_2 = rand(&[8, 16]);
    let rows: Vec<Tensor> = embedded_sentence
        .iter()
        .map(|x| {
            let query = w_query.matmul(&x);
            cross_attention(&query, &embedded_sentence_2, &w_key, &w_value).0
        })
        .collect();
    Figure {
        name: "ch08-cross-attention",
        title: "Cross-attention: 6 queries of the first sentence, 8 keys of the second",
        panels: vec![Panel::new(
            "first sentence × second sequence",
            &words,
            &numbered("#", 8),
            &stack(&rows, 0),
        )],
        panels_per_row: 1,
    }
}

/// Chapter 8: multi-head cross-attention of a padded batch: 3 decoder queries over 5
/// encoder keys, the second sequence with 2 padded keys (weight exactly 0).
fn ch08_padded_cross_attention() -> Figure {
    manual_seed(123);
    let cross_attn = MultiHeadAttentionQkv::new(4, 2);
    let x_dec = rand(&[2, 3, 4]);
    let mut x_enc = rand(&[2, 5, 4]);
    let lengths = [5, 3];
    let key_padding = key_padding(&lengths, 5);
    let padded_rows = key_padding.eq_scalar(0).unsqueeze(-1);
    x_enc.masked_fill_(&padded_rows, 0.0);
    let mask = padding_mask(&key_padding);
    let q = split_heads(&cross_attn.w_q.forward(&x_dec), cross_attn.n_heads);
    let k = split_heads(&cross_attn.w_k.forward(&x_enc), cross_attn.n_heads);
    let v = split_heads(&cross_attn.w_v.forward(&x_enc), cross_attn.n_heads);
    let (_, weights) = scaled_dot_product_attention(&q, &k, &v, Some(&mask)); // [2, 2, 3, 5]
    let queries = numbered("dec ", 3);
    let mut panels = Vec::new();
    for (b, &len) in lengths.iter().enumerate() {
        let keys: Vec<String> = (1..=5)
            .map(|j| {
                if j <= len {
                    format!("enc {j}")
                } else {
                    "pad".to_string()
                }
            })
            .collect();
        for h in 0..cross_attn.n_heads {
            let title = format!("sequence {}, head {h}", b + 1);
            let w = weights.get(b).get(h);
            panels.push(Panel::new(&title, &queries, &keys, &w));
        }
    }
    Figure {
        name: "ch08-padded-cross-attention",
        title: "Multi-head cross-attention over a padded batch: padded keys get weight 0",
        panels,
        panels_per_row: 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_differ_when_a_value_changes() {
        let mut figure = ch02_weights();
        let before = figure.digest();
        figure.panels[0].values[7] =
            f32::from_bits(figure.panels[0].values[7].to_bits() + 1);
        assert_ne!(before, figure.digest());
    }

    #[test]
    fn recorded_digest_reads_the_marker() {
        let svg = "<svg>\n<!-- source-digest: fnv1a64:0123456789abcdef -->\n</svg>";
        assert_eq!(recorded_digest(svg), Some("fnv1a64:0123456789abcdef"));
        assert_eq!(recorded_digest("<svg/>"), None);
    }

    #[test]
    fn the_figures_show_the_printed_weights() {
        // Chapter 4 prints row `is`: tensor([0.2912, 0.0106, 0.0982, 0.0625, 0.4917, 0.0458]).
        let fig = ch04_scaled_weights();
        let row: Vec<String> = (0..6)
            .map(|j| format!("{:.4}", fig.panels[0].value(1, j)))
            .collect();
        assert_eq!(
            row,
            ["0.2912", "0.0106", "0.0982", "0.0625", "0.4917", "0.0458"]
        );
        // Chapter 8 prints row `is` of the cross-attention weights.
        let fig = ch08_cross_attention();
        let row: Vec<String> = (0..8)
            .map(|j| format!("{:.4}", fig.panels[0].value(1, j)))
            .collect();
        assert_eq!(
            row,
            [
                "0.1027", "0.1024", "0.0986", "0.1038", "0.1400", "0.0904", "0.1580",
                "0.2041"
            ]
        );
        // Chapter 5: dropout keeps (2.0 ×) the first weight of row 0 and drops all of row 1.
        let fig = ch05_dropout();
        assert_eq!(fig.panels[1].value(0, 0), 2.0);
        assert!((0..6).all(|j| fig.panels[1].value(1, j) == 0.0));
        // Chapter 8: the padded keys of the second sequence get weight exactly 0.
        let fig = ch08_padded_cross_attention();
        assert!(
            fig.panels[2..]
                .iter()
                .all(|p| (0..3).all(|i| p.value(i, 3) == 0.0 && p.value(i, 4) == 0.0))
        );
    }

    #[test]
    fn rand_weights_make_softmax_one_hot_and_linear_weights_do_not() {
        // The text of chapter 4: with `rand` weights (mean 0.5) four rows of Raschka's
        // weights are nearly one-hot even after scaling; `nn.Linear`'s weights stay soft.
        let largest = |figure: &Figure| -> Vec<f32> {
            let panel = &figure.panels[0];
            (0..panel.rows.len())
                .map(|i| {
                    (0..panel.cols.len())
                        .map(|j| panel.value(i, j))
                        .fold(0.0, f32::max)
                })
                .collect()
        };
        let one_hot = largest(&ch04_scaled_weights())
            .iter()
            .filter(|&&w| w > 0.99)
            .count();
        assert_eq!(one_hot, 4);
        assert!(largest(&ch04_linear_weights()).iter().all(|&w| w < 0.25));
    }

    #[test]
    fn every_row_of_weights_sums_to_one() {
        for figure in figures() {
            if figure.name == "ch05-dropout" || figure.name.starts_with("ch12") {
                continue; // dropout rescales; chapter 12 draws encodings and scores
            }
            for panel in &figure.panels {
                if panel.title.starts_with("|dS|") {
                    continue; // chapter 10's gradient sizes, beside its weights
                }
                // Chapter 19 shows the last 2k keys of 32: a row keeps at most all its weight.
                let cropped = figure.name.starts_with("ch19");
                for row in panel.values.chunks(panel.cols.len()) {
                    let sum: f32 = row.iter().sum();
                    let fits = if cropped {
                        sum > 0.0 && sum < 1.0 + 1e-5
                    } else {
                        (sum - 1.0).abs() < 1e-5
                    };
                    assert!(fits, "{} {}: {sum}", figure.name, panel.title);
                }
            }
        }
    }
}
