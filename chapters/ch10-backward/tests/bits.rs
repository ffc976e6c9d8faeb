//! The gradients at full precision against autograd's. `tests/fixtures/autograd-seed-123.json`
//! (`reference/ch10_backward.py --json` under PyTorch 2.13.0 on an Intel CPU with AVX-512)
//! holds, as float32 bit patterns, every tensor the chapter prints and, for each module, its
//! attention core's inputs and gradients.
//!
//! - The attention core's backward (batched products of small matrices, softmax, mask,
//!   scale, dropout) uses no MKL product, so its order is PyTorch's own on every machine:
//!   fed autograd's queries, keys, values and output gradient, it must give autograd's
//!   gradients bit for bit.
//! - The printed gradients also go through `nn.Linear`'s products, which PyTorch hands to
//!   MKL. `shared` follows the order MKL uses on Intel processors (a fused multiply-add per
//!   term), so every printed gradient must have autograd's bits too. (Where libtorch's MKL
//!   adds them in another order, on another processor, they are held to 1e-6 of their
//!   tensor's largest magnitude; see `course::platform`.)

use ch01_embeddings::inputs::your_journey;
use ch05_causal::CausalAttention;
use ch07_multihead_split::heads::split_heads;
use ch07_multihead_split::multihead::MultiHeadAttention;
use ch10_backward::attention::{attention_backward, attention_forward};
use ch10_backward::causal::{causal_backward, causal_forward};
use ch10_backward::heads::{merge_heads_backward, split_heads_backward};
use ch10_backward::multihead::{multihead_backward, multihead_forward};
use ch10_backward::softmax::softmax_backward;
use serde_json::Value;
use shared::nn::Dropout;
use shared::testing::assert_same_bits;
use shared::{Tensor, manual_seed, stack, tensor};

const FIXTURE: &str = include_str!("fixtures/autograd-seed-123.json");

/// Every tensor of the chapter's default run, under the reference script's step titles.
fn our_tensors() -> Vec<(String, Vec<Tensor>)> {
    let mut steps = Vec::new();
    let weights = tensor!([1.0, 2.0, 0.5]).softmax(-1);
    let grad = softmax_backward(&weights, &tensor!([1.0, 0.0, 0.0]));
    steps.push((
        "Softmax of [1.0, 2.0, 0.5] and the gradient of its scores for dP = [1, 0, 0]".into(),
        vec![weights, grad],
    ));
    let inputs = your_journey();
    let batch = stack(&[&inputs, &inputs], 0);
    for dropout in [0.0, 0.5] {
        manual_seed(123);
        let ca = CausalAttention::new(3, 2, 6, dropout, false);
        let (out, tape) = causal_forward(&ca, &batch);
        let grads = causal_backward(&ca, &tape, &(&out * 2.0));
        let title =
            format!("CausalAttention, dropout {dropout:.1} (manual_seed(123))");
        steps.push((format!("{title}: loss"), vec![(&out * &out).sum()]));
        for (name, grad) in [
            ("W_query.weight", grads.w_query.weight),
            ("W_key.weight", grads.w_key.weight),
            ("W_value.weight", grads.w_value.weight),
            ("batch", grads.input),
        ] {
            steps.push((format!("{title}: {name}.grad"), vec![grad]));
        }
    }
    manual_seed(123);
    let mha = MultiHeadAttention::new(3, 4, 6, 0.0, 2, false);
    let (out, tape) = multihead_forward(&mha, &batch);
    let grads = multihead_backward(&mha, &tape, &(&out * 2.0));
    let title = "MultiHeadAttention, 2 heads (manual_seed(123))";
    steps.push((format!("{title}: loss"), vec![(&out * &out).sum()]));
    for (name, grad) in [
        ("W_query.weight", grads.w_query.weight),
        ("W_key.weight", grads.w_key.weight),
        ("W_value.weight", grads.w_value.weight),
        ("out_proj.weight", grads.out_proj.weight),
        ("out_proj.bias", grads.out_proj.bias.expect("a bias")),
        ("batch", grads.input),
    ] {
        steps.push((format!("{title}: {name}.grad"), vec![grad]));
    }
    steps
}

/// The fixture's tensors of one section (`steps` or `cores`) under `title`.
fn fixture_tensors(section: &str, title: &str) -> Vec<Tensor> {
    let fixture: Value = serde_json::from_str(FIXTURE).expect("the fixture is JSON");
    let entries = fixture[section][title]
        .as_array()
        .unwrap_or_else(|| panic!("{title}"));
    entries
        .iter()
        .map(|entry| {
            let shape: Vec<usize> =
                serde_json::from_value(entry["shape"].clone()).unwrap();
            let bits: Vec<i32> =
                serde_json::from_value(entry["bits"].clone()).unwrap();
            let values = bits.iter().map(|&b| f32::from_bits(b as u32)).collect();
            Tensor::from_vec(values, &shape)
        })
        .collect()
}

#[test]
fn attention_core_gradients_have_autograds_bits() {
    let hidden = ch05_causal::causal_mask(6);
    let mut total = 0;
    for (title, heads, dropout) in [
        ("CausalAttention, dropout 0.0 (manual_seed(123))", 0, 0.0),
        ("CausalAttention, dropout 0.5 (manual_seed(123))", 0, 0.5),
        ("MultiHeadAttention, 2 heads (manual_seed(123))", 2, 0.0),
    ] {
        let t = fixture_tensors("cores", title);
        let (queries, keys, values, grad_core, want) =
            (&t[0], &t[1], &t[2], &t[3], &t[4..]);
        // The dropout noise is drawn after the module's initialisation, as in the module.
        manual_seed(123);
        let _init = CausalAttention::new(3, 2, 6, dropout, false);
        let dropout = Dropout::new(dropout);
        let got = if heads == 0 {
            let (_, tape) =
                attention_forward(queries, keys, values, &hidden, &dropout);
            let g = attention_backward(&tape, grad_core);
            vec![g.queries, g.keys, g.values]
        } else {
            let split = |x: &Tensor| split_heads(x, heads);
            let (_, tape) = attention_forward(
                &split(queries),
                &split(keys),
                &split(values),
                &hidden,
                &dropout,
            );
            let g =
                attention_backward(&tape, &merge_heads_backward(grad_core, heads));
            [g.queries, g.keys, g.values]
                .iter()
                .map(split_heads_backward)
                .collect()
        };
        for (name, (got, want)) in ["queries", "keys", "values"]
            .iter()
            .zip(got.iter().zip(want))
        {
            assert_same_bits(got, want, format!("{title}: gradient of the {name}"));
            total += got.numel();
        }
    }
    println!(
        "{total}/{total} gradients of queries, keys and values bit-equal to autograd's"
    );
}

#[test]
fn printed_gradients_have_autograds_bits() {
    // The fixture holds autograd's bits on the reference platform. Where libtorch's MKL
    // adds the Linear products in another order (another processor), each value is held to
    // 1e-6 of its tensor's largest magnitude instead.
    let platform = course::platform::platform();
    let mut total = 0;
    let mut differing = 0;
    for (title, tensors) in our_tensors() {
        let theirs = fixture_tensors("steps", &title);
        assert_eq!(theirs.len(), tensors.len(), "{title}");
        for (ours, theirs) in tensors.iter().zip(&theirs) {
            assert_eq!(ours.sizes(), theirs.sizes(), "{title}");
            let theirs = theirs.to_vec();
            let scale = theirs.iter().fold(0.0f32, |m, t| m.max(t.abs()));
            for (i, (o, t)) in ours.to_vec().iter().zip(theirs).enumerate() {
                if o.to_bits() == t.to_bits() {
                    continue;
                }
                differing += 1;
                assert!(
                    !platform.is_reference() && (o - t).abs() <= 1e-6 * scale,
                    "{title}[{i}]: ours {o:e}, autograd {t:e} ({} ulps apart; {platform})",
                    shared::testing::ulps(*o, t)
                );
            }
            total += ours.numel();
        }
    }
    println!(
        "{}/{total} printed values bit-equal to autograd's ({platform})",
        total - differing
    );
}
