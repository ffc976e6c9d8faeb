//! What the tests share: the fixtures' folder, reading expected tensors, comparing logits.
#![allow(dead_code)] // each test file uses its own part

use std::path::PathBuf;

use shared::Tensor;
use shared::exact::{Capability, set_capability};

/// `chapters/ch20-real-model/fixtures/NAME`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// The tensors of a safetensors file the reference script wrote, and the processor it was
/// made on.
pub struct Expected {
    pub bytes: Vec<u8>,
}

impl Expected {
    pub fn open(name: &str) -> Expected {
        Expected {
            bytes: std::fs::read(fixture(name))
                .expect("a fixture of the reference script"),
        }
    }

    fn file(&self) -> safetensors::SafeTensors<'_> {
        safetensors::SafeTensors::deserialize(&self.bytes)
            .expect("a safetensors file")
    }

    /// One entry of the file's metadata ("" if absent).
    pub fn meta(&self, key: &str) -> String {
        let (_, meta) =
            safetensors::SafeTensors::read_metadata(&self.bytes).expect("a header");
        meta.metadata()
            .as_ref()
            .and_then(|m| m.get(key).cloned())
            .unwrap_or_default()
    }

    /// Where the reference script ran.
    pub fn made_on(&self) -> String {
        self.meta("made_on")
    }

    /// Follows, on this thread, the build of PyTorch's CPU kernels the fixture was made
    /// with (`torch.backends.cpu.get_cpu_capability()`): an AMD processor runs the AVX2
    /// build, whose softmax adds a row in 8 lanes instead of 16.
    pub fn follow_capability(&self) {
        let capability = match self.meta("capability").as_str() {
            "AVX2" => Some(Capability::Avx2),
            "DEFAULT" => Some(Capability::Default),
            _ => None,
        };
        set_capability(capability);
    }

    pub fn names(&self) -> Vec<String> {
        self.file()
            .names()
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    pub fn f32(&self, name: &str) -> Tensor {
        let file = self.file();
        let view = file.tensor(name).expect(name);
        assert_eq!(view.dtype(), safetensors::Dtype::F32, "{name}");
        let values = view
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        Tensor::from_vec(values, view.shape())
    }

    pub fn i64(&self, name: &str) -> Vec<i64> {
        let file = self.file();
        let view = file.tensor(name).expect(name);
        view.data()
            .chunks_exact(8)
            .map(|b| i64::from_le_bytes(b.try_into().unwrap()))
            .collect()
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

/// Asserts that two tensors hold the same bits, printing how far apart they are if not.
pub fn assert_bits(ours: &Tensor, theirs: &Tensor, what: &str) {
    let (max, differ) = distance(ours, theirs);
    assert_eq!(
        differ,
        0,
        "{what}: {differ} of {} values differ from transformers', by up to {max:e}",
        ours.numel()
    );
}

/// Asserts that our logits are transformers' within the rounding a float32 sum of `k`
/// products can pick up, `k · ε · max |logit|`: for products whose order of additions we do
/// not follow (the real model's, longer than 256; one-row against many-row products).
pub fn assert_within_rounding(ours: &Tensor, theirs: &Tensor, k: usize, what: &str) {
    let (max, differ) = distance(ours, theirs);
    let scale = theirs.to_vec().iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let tolerance = k as f32 * f32::EPSILON * scale;
    assert!(
        max <= tolerance,
        "{what}: {differ} of {} logits differ, by up to {max:e} (tolerance {tolerance:e})",
        ours.numel()
    );
}
