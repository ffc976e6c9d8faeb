//! `--merge-to DIR`: the model with its adapter merged in, saved as a transformers folder
//! that chapter 20's loader reads back, on chapter 20's tiny checkpoints.

use ch20_real_model::loader::{Loaded, load};
use ch23_lora::adapter::{Adapter, LoraConfig};
use ch23_lora::forward::forward;
use ch23_lora::hub;
use ch23_lora::setup::{SEED, TINY, TRAIN_TARGETS, in_workspace};
use ch23_lora::tiny::TinyRun;
use shared::{Tensor, manual_seed, randn};

/// A fresh path in the temporary folder (nothing there yet).
fn temp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("ch23-merge-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The tiny checkpoint with an adapter beside all seven projections of every layer,
/// every `B` drawn at random so that every merged weight moves.
fn adapted() -> (TinyRun, Adapter) {
    let run = TinyRun::new(SEED).unwrap();
    let config = LoraConfig::new(4, 8.0, &TRAIN_TARGETS).unwrap();
    let mut adapter = Adapter::new(&run.loaded.model, &config).unwrap();
    manual_seed(7);
    for lora in adapter.layers.iter_mut().flatten() {
        lora.b = randn(lora.b.sizes()) * 0.1;
    }
    (run, adapter)
}

fn logits(loaded: &Loaded, ids: &Tensor<i64>) -> Tensor {
    loaded.model.forward(ids, &loaded.recipe).0
}

#[test]
fn the_merged_folder_runs_in_chapter_20_with_the_adapters_logits() {
    let (run, adapter) = adapted();
    let ids = run.example_ids().unwrap();
    let beside = forward(&run.loaded.model, &run.loaded.recipe, &adapter, &ids);
    let mut merged = load(&in_workspace(TINY), |_, _| {}).unwrap();
    adapter.merge_into(&mut merged.model);
    let dir = temp("folder").join("merged");
    hub::save(&merged, &dir).unwrap();
    let folder = load(&dir, |_, _| {}).unwrap();
    // The folder holds the merged model's float32 numbers as they are: its logits are the
    // merged model's, bit for bit.
    let in_memory = logits(&merged, &ids);
    let from_folder = logits(&folder, &ids);
    assert_eq!(from_folder.to_vec(), in_memory.to_vec());
    assert_eq!(folder.config, merged.config);
    assert_eq!((folder.bos, folder.eos), (merged.bos, merged.eos));
    // Merged against beside: each projection's output differs by at most 2·γ_k of the sum
    // of its terms' sizes (Higham's bound for a dot product of k = d_in + r + 2 terms,
    // γ_k = k·u / (1 − k·u); tests/lora.rs checks it for one projection). To first order
    // the relative differences of the products on a logit's path add up: 5 per layer
    // (queries·keys, weights·values, o_proj, gate_proj and up_proj side by side, down_proj)
    // and the head.
    let c = &merged.config;
    let u = f32::EPSILON / 2.0;
    let k = (c.d_ff.max(c.d_model) + 4 + 2) as f32;
    let gamma = k * u / (1.0 - k * u);
    let products = (5 * c.n_layers + 1) as f32;
    let scale = beside.abs().max().item();
    let bound = 2.0 * gamma * products * scale;
    let gap = (&in_memory - &beside).abs().max().item();
    assert!(
        gap <= bound,
        "merged and beside differ by {gap}, the bound is {bound}"
    );
    // And the adapter did move the logits, by far more than rounding.
    let (own, _) = run.loaded.model.forward(&ids, &run.loaded.recipe);
    assert!((&beside - &own).abs().max().item() > 100.0 * bound);
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

#[test]
fn a_folder_that_holds_anything_is_refused_and_kept() {
    let (run, _) = adapted();
    let dir = temp("taken");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    let error = hub::save(&run.loaded, &dir).unwrap_err().to_string();
    assert!(
        error.contains(&dir.display().to_string()) && error.contains("not empty"),
        "{error}"
    );
    let kept: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(kept.len(), 1);
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "mine"
    );
    // An empty folder is taken, and no hidden partial folder is left beside it.
    let empty = temp("empty");
    std::fs::create_dir_all(&empty).unwrap();
    hub::save(&run.loaded, &empty).unwrap();
    assert!(empty.join("model.safetensors").is_file());
    let parent = empty.parent().unwrap();
    let name = empty.file_name().unwrap().to_string_lossy().into_owned();
    let partial = parent.join(format!(".{name}.partial"));
    assert!(!partial.exists());
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&empty);
}
