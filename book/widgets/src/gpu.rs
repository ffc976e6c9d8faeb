//! Chapter 21's live page: the inputs its WebGPU kernels run on in the reader's browser, and
//! chapter 9's result on the CPU, which the page compares their results with.
//!
//! The page runs chapter 21's own `.wgsl` files straight from JavaScript (the browser is the
//! GPU's host there); this module only draws the inputs, as the chapter does
//! (`manual_seed(seed)`, then `randn` for the queries, the keys and the values), and runs
//! chapter 9's kernel on them, causal.

use ch09_flash_attention::kernel::{Isa, flash_attention_lse_with};
use serde::{Deserialize, Serialize};
use shared::{manual_seed, randn};

/// The kernel compiled for any CPU, the one WebAssembly runs (as in [`crate::heatmap`]).
const KERNEL: Isa = Isa::Portable;
/// The most tokens the page asks for (the naive kernel takes seconds there already).
pub const MAX_TOKENS: usize = 2048;
/// The most features per head: chapter 21's kernel 3 keeps a row in registers, 64 at most.
pub const MAX_FEATURES: usize = 64;

/// What the page asks for: `heads` heads of `n` tokens with `d` features, from `seed`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuSettings {
    /// Tokens (queries and keys).
    pub n: usize,
    /// Heads.
    pub heads: usize,
    /// Features of a query, key and value.
    pub d: usize,
    /// The seed, as text (JavaScript's numbers cannot hold every `u64`); 0 if none.
    pub seed: Option<String>,
}

/// The inputs, row-major `[heads, n, d]`, and chapter 9's causal output `[heads, n, d]`
/// and log-sum-exp `[heads, n]`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GpuInputs {
    /// The queries.
    pub q: Vec<f32>,
    /// The keys.
    pub k: Vec<f32>,
    /// The values.
    pub v: Vec<f32>,
    /// Chapter 9's output on the CPU.
    pub out: Vec<f32>,
    /// Chapter 9's log-sum-exp of every row.
    pub lse: Vec<f32>,
}

/// Draws the inputs and runs chapter 9's kernel on them; sizes out of range are a message
/// for the reader.
pub fn inputs(settings: &GpuSettings) -> Result<GpuInputs, String> {
    let GpuSettings { n, heads, d, .. } = *settings;
    if !(1..=MAX_TOKENS).contains(&n) || !(1..=16).contains(&heads) {
        return Err(format!(
            "the page runs 1 to {MAX_TOKENS} tokens and 1 to 16 heads, not {n} and {heads}"
        ));
    }
    if !(1..=MAX_FEATURES).contains(&d) {
        return Err(format!(
            "the kernels take 1 to {MAX_FEATURES} features, not {d}"
        ));
    }
    let seed = match &settings.seed {
        Some(text) => crate::seed::parse_seed(text)?,
        None => 0,
    };
    manual_seed(seed);
    let shape = [heads, n, d];
    let (q, k, v) = (randn(&shape), randn(&shape), randn(&shape));
    let (out, lse) = flash_attention_lse_with(KERNEL, &q, &k, &v, true);
    Ok(GpuInputs {
        q: q.to_vec(),
        k: k.to_vec(),
        v: v.to_vec(),
        out: out.to_vec(),
        lse: lse.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inputs_are_the_chapter_s_draws_and_chapter_9_s_result() {
        let settings = GpuSettings {
            n: 5,
            heads: 2,
            d: 3,
            seed: Some("7".into()),
        };
        let got = inputs(&settings).unwrap();
        manual_seed(7);
        assert_eq!(got.q, randn(&[2, 5, 3]).to_vec());
        assert_eq!((got.out.len(), got.lse.len()), (30, 10));
        // The first query sees only the first key under the causal mask.
        assert_eq!(got.out[..3], got.v[..3]);
        let too_long = GpuSettings {
            n: 5000,
            ..settings
        };
        assert!(inputs(&too_long).unwrap_err().contains("1 to 2048 tokens"));
    }
}
