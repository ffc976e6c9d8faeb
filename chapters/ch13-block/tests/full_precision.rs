//! The block's numbers to the last bit, against the tensors PyTorch computed: the fixture
//! `tests/fixtures/block_bits.json` is written by `reference/ch13_block.py --bits PATH` and
//! holds, as float32 bits, the input, every intermediate tensor and the output of the
//! chapter's block (`d_model = 8`) and of a wider one (`d_model = 64`, 4 heads, 16 tokens).
//!
//! - Given PyTorch's own inputs, `layer_norm` and the tanh GELU must give PyTorch's bits
//!   exactly: `shared` follows their kernels operation for operation.
//! - Through the whole block, the matrix products add in the order of Intel's MKL on an
//!   AVX-512 CPU. MKL takes other orders on other CPUs (on an AMD EPYC with AVX2 it adds
//!   the short products of the attention scores without fused multiply-adds, and the
//!   256-term sums of `c_proj` in another grouping), so the test prints how many values
//!   are bit-identical to the fixture's and checks that every value is within
//!   `MAX_ULPS` units in the last place of the tensor's largest value: far below any
//!   mistake in the block, far above what a summation order changes.

use ch13_block::block::TransformerBlock;
use serde_json::Value;
use shared::{GeluApproximate, Tensor, manual_seed, randn};

const FIXTURE: &str = include_str!("fixtures/block_bits.json");

/// The largest distance allowed from PyTorch's value, in ulps of the tensor's largest
/// value (a sum of `n` terms in another order moves by about `√n` of them).
const MAX_ULPS: f64 = 16.0;

/// One configuration of the fixture: its sizes and its tensors as float32 bits.
struct Case<'a> {
    name: &'a str,
    json: &'a Value,
}

impl Case<'_> {
    fn usize(&self, key: &str) -> usize {
        self.json[key].as_u64().expect("a size") as usize
    }

    fn shape(&self) -> Vec<usize> {
        let shape = self.json["shape"].as_array().expect("a shape");
        shape
            .iter()
            .map(|n| n.as_u64().expect("a size") as usize)
            .collect()
    }

    fn bits(&self, key: &str) -> Vec<u32> {
        let values = self.json[key].as_array().expect("a list of bits");
        values
            .iter()
            .map(|v| v.as_u64().expect("bits") as u32)
            .collect()
    }

    /// PyTorch's tensor `key`, with the given shape.
    fn tensor(&self, key: &str, shape: &[usize]) -> Tensor {
        let values = self.bits(key).into_iter().map(f32::from_bits).collect();
        Tensor::from_vec(values, shape)
    }
}

fn cases(fixture: &Value) -> Vec<Case<'_>> {
    ["chapter", "wide"]
        .into_iter()
        .map(|name| Case {
            name,
            json: &fixture[name],
        })
        .collect()
}

fn bits_of(t: &Tensor) -> Vec<u32> {
    t.contiguous()
        .to_vec()
        .into_iter()
        .map(f32::to_bits)
        .collect()
}

/// How many of `ours` equal `theirs` bit for bit, and the largest distance in units of the
/// last place of the tensor's largest magnitude (rounding errors of a sum scale with its
/// terms, which that stands in for).
fn compare(ours: &[u32], theirs: &[u32]) -> (usize, f64) {
    assert_eq!(ours.len(), theirs.len());
    let values = |b: &[u32]| b.iter().map(|&x| f32::from_bits(x)).collect::<Vec<_>>();
    let (a, b) = (values(ours), values(theirs));
    let largest = b.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let ulp = f64::from(f32::from_bits(largest.to_bits() + 1) - largest);
    let equal = ours.iter().zip(theirs).filter(|(x, y)| x == y).count();
    let worst = a
        .iter()
        .zip(&b)
        .map(|(x, y)| f64::from((x - y).abs()) / ulp)
        .fold(0.0, f64::max);
    (equal, worst)
}

#[test]
fn layer_norm_and_gelu_give_pytorchs_bits_from_pytorchs_inputs() {
    let fixture: Value = serde_json::from_str(FIXTURE).expect("valid JSON");
    for case in cases(&fixture) {
        let shape = case.shape();
        let d = case.usize("d_model");
        let x = case.tensor("x", &shape);
        let block = TransformerBlock::new(d, case.usize("n_heads"), shape[1]);
        assert_eq!(
            bits_of(&block.ln_1.forward(&x)),
            case.bits("ln_1"),
            "{}",
            case.name
        );
        let hidden = [shape[0], shape[1], 4 * d];
        let up = case.tensor("c_fc", &hidden);
        let gelu = up.gelu(GeluApproximate::Tanh);
        assert_eq!(bits_of(&gelu), case.bits("gelu"), "{}", case.name);
    }
}

#[test]
fn the_whole_block_agrees_with_pytorch_to_the_last_bits() {
    let fixture: Value = serde_json::from_str(FIXTURE).expect("valid JSON");
    let seed = fixture["seed"].as_u64().expect("a seed");
    for case in cases(&fixture) {
        let shape = case.shape();
        let d = case.usize("d_model");
        // As the script: the input, then the block, right after manual_seed.
        manual_seed(seed);
        let x = randn(&shape);
        let block = TransformerBlock::new(d, case.usize("n_heads"), shape[1]);
        assert_eq!(bits_of(&x), case.bits("x"), "{}: the generator", case.name);

        let h = block.ln_1.forward(&x);
        let a = block.attn.forward(&h);
        let x1 = &x + &a;
        let up = block.mlp.c_fc.forward(&block.ln_2.forward(&x1));
        let act = up.gelu(GeluApproximate::Tanh);
        let m = block.mlp.c_proj.forward(&act);
        let out = &x1 + &m;
        assert_eq!(bits_of(&out), bits_of(&block.forward(&x)));
        for (key, ours) in [
            ("ln_1", &h),
            ("attn", &a),
            ("c_fc", &up),
            ("gelu", &act),
            ("mlp", &m),
            ("out", &out),
        ] {
            let (equal, worst) = compare(&bits_of(ours), &case.bits(key));
            let n = ours.numel();
            println!(
                "{} {key}: {equal} of {n} bit-identical, worst {worst} ulp",
                case.name
            );
            assert!(
                worst <= MAX_ULPS,
                "{} {key}: {worst} ulps from PyTorch",
                case.name
            );
        }
    }
}
