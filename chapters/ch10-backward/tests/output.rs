//! The chapter's output, checked against PyTorch:
//! - with the default seed it equals what the PyTorch reference script printed,
//!   `reference/expected/ch10-backward.txt`, except for the one number listed in
//!   [`MKL_ORDER_DIFFERENCES`];
//! - with each seed `reference/expected/seeds/SEEDS` lists for the chapter, it equals what
//!   the script printed with `--seed S`, `reference/expected/seeds/ch10-backward.seed-S.txt`,
//!   exactly;
//! - it matches the insta snapshots of the whole output and of every step (the answer key
//!   the book includes).

use ch10_backward::narrative::narrative;
use course::Seed;
use course::narrative::seed_references;

const PYTORCH: &str = include_str!("../../../reference/expected/ch10-backward.txt");

/// Printed numbers where the committed PyTorch text, made on an AMD processor, differs from
/// ours because MKL adds the small products of `nn.Linear` there without fused
/// multiply-adds, while `shared` follows the fused order of the Intel reference machine:
/// `(step, PyTorch's text, ours)`. `out_proj.weight.grad[0, 3]` is a sum over 12 tokens
/// that cancels to 2e-5 of the tensor's largest value, so a last-bit difference of its
/// terms reaches the printed digits. `tests/bits.rs` measures every such value.
const MKL_ORDER_DIFFERENCES: &[(&str, &str, &str)] = &[(
    "MultiHeadAttention, 2 heads (manual_seed(123)): out_proj.weight.grad",
    "1.0966e-04]",
    "1.0968e-04]",
)];

/// Whether the products run on libtorch (`SHARED_DEVICE=torch-cpu`, `cuda`): then MKL of
/// this machine adds them, and the text is PyTorch's own, without the differences above.
fn on_libtorch() -> bool {
    std::env::var("SHARED_DEVICE").is_ok_and(|device| device != "cpu")
}

#[test]
fn output_equals_pytorch() {
    let ours = narrative(Seed::ARTICLES)
        .expect("the chapter runs")
        .to_string();
    let mut expected = PYTORCH.to_string();
    let differences = if on_libtorch() {
        &[][..]
    } else {
        MKL_ORDER_DIFFERENCES
    };
    for (step, theirs, our_text) in differences {
        let start = expected
            .find(&format!("## {step}\n"))
            .expect("the step is printed");
        let end = start + expected[start..].find("\n\n").expect("the step ends");
        let block = expected[start..end].replacen(theirs, our_text, 1);
        expected.replace_range(start..end, &block);
    }
    assert_eq!(ours, expected);
}

#[test]
fn output_equals_pytorch_for_other_seeds() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let seeds = seed_references(&root, env!("CARGO_PKG_NAME"));
    assert_eq!(seeds.len(), 2, "two committed seeds");
    for (seed, pytorch) in seeds {
        let story = narrative(Seed::given(seed)).expect("the chapter runs");
        assert_eq!(story.to_string(), pytorch, "ch10-backward --seed {seed}");
    }
}

#[test]
fn output_snapshots() {
    if on_libtorch() {
        return; // the snapshots hold our kernels' digits; see MKL_ORDER_DIFFERENCES
    }
    let story = narrative(Seed::ARTICLES).expect("the chapter runs");
    insta::assert_snapshot!("output", story.to_string());
    for step in &story.steps {
        insta::assert_snapshot!(step.slug(), step.text(), &step.title);
    }
}
