//! What the tests share: the fixtures' folder, reading expected tensors, comparing logits.
#![allow(dead_code)] // each test file uses its own part

use std::path::PathBuf;

use shared::Tensor;

/// `chapters/ch20-real-model/fixtures/NAME`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name)
}

/// The tensors of a safetensors file the reference script wrote, and the processor it was
/// made on.
pub struct Expected {
    bytes: Vec<u8>,
}

impl Expected {
    pub fn open(name: &str) -> Expected {
        Expected { bytes: std::fs::read(fixture(name)).expect("a fixture of the reference script") }
    }

    fn file(&self) -> safetensors::SafeTensors<'_> {
        safetensors::SafeTensors::deserialize(&self.bytes).expect("a safetensors file")
    }

    /// Where the reference script ran.
    pub fn made_on(&self) -> String {
        let (_, meta) = safetensors::SafeTensors::read_metadata(&self.bytes).expect("a header");
        meta.metadata().as_ref().and_then(|m| m.get("made_on").cloned()).unwrap_or_default()
    }

    pub fn names(&self) -> Vec<String> {
        self.file().names().into_iter().cloned().collect()
    }

    pub fn f32(&self, name: &str) -> Tensor {
        let file = self.file();
        let view = file.tensor(name).expect(name);
        assert_eq!(view.dtype(), safetensors::Dtype::F32, "{name}");
        let values = view.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        Tensor::from_vec(values, view.shape())
    }

    pub fn i64(&self, name: &str) -> Vec<i64> {
        let file = self.file();
        let view = file.tensor(name).expect(name);
        view.data().chunks_exact(8).map(|b| i64::from_le_bytes(b.try_into().unwrap())).collect()
    }
}

/// The largest difference between two tensors of one shape, and how many values differ.
pub fn distance(ours: &Tensor, theirs: &Tensor) -> (f32, usize) {
    assert_eq!(ours.sizes(), theirs.sizes());
    let (a, b) = (ours.to_vec(), theirs.to_vec());
    a.iter().zip(&b).fold((0.0f32, 0), |(max, n), (x, y)| {
        let d = (x - y).abs();
        (max.max(d), n + usize::from(x.to_bits() != y.to_bits()))
    })
}

/// Asserts that our logits are transformers': bit for bit where the fixture was made on
/// the platform our products follow (an Intel processor), and where it was made elsewhere
/// (an AMD processor, whose MKL adds some products in another order) within the rounding
/// a float32 sum of `k` products can pick up: `k · ε · max |logit|` per layer of products.
pub fn assert_logits(ours: &Tensor, theirs: &Tensor, made_on: &str, k: usize, what: &str) {
    let (max, differ) = distance(ours, theirs);
    if differ == 0 {
        return;
    }
    let scale = theirs.to_vec().iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let tolerance = k as f32 * f32::EPSILON * scale;
    assert!(
        !made_on.contains("Intel") && max <= tolerance,
        "{what}: {differ} of {} logits differ from transformers' (made on {made_on}), by up to {max:e} \
         (tolerance {tolerance:e})",
        ours.numel()
    );
}
