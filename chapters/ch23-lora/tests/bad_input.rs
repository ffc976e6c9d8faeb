//! Bad input gets a clear error naming the file or the value, never a panic.

use ch23_lora::adapter::{Adapter, LoraConfig};
use ch23_lora::cli::{Options, model, save_dir};
use ch23_lora::peft;
use ch23_lora::setup::SEED;
use ch23_lora::tiny::TinyRun;

fn message<T>(result: Result<T, ch23_lora::LoraError>) -> String {
    match result {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

fn temp(name: &str) -> std::path::PathBuf {
    let dir =
        std::env::temp_dir().join(format!("ch23-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn a_missing_model_says_how_to_get_it() {
    let options = Options {
        model: Some("/nowhere/model.gguf".into()),
        ..Options::defaults()
    };
    let m = message(model(&options));
    assert!(
        m.contains("/nowhere/model.gguf") && m.contains("get-model.sh"),
        "{m}"
    );
}

#[test]
fn a_rank_of_zero_or_too_large_and_an_unknown_target_are_refused() {
    let m = message(LoraConfig::new(0, 16.0, &["q_proj"]));
    assert!(m.contains("rank of 0"), "{m}");
    let m = message(LoraConfig::new(8, 16.0, &["q_proj", "attention"]));
    assert!(m.contains("\"attention\"") && m.contains("v_proj"), "{m}");
    let run = TinyRun::new(SEED).unwrap();
    let config = LoraConfig::new(33, 16.0, &["v_proj"]).unwrap();
    let m = message(Adapter::new(&run.loaded.model, &config));
    assert!(
        m.contains("rank 33") && m.contains("v_proj") && m.contains("32"),
        "{m}"
    );
}

#[test]
fn an_adapter_for_another_model_or_a_cut_file_is_refused() {
    let run = TinyRun::new(SEED).unwrap();
    // Rank 4 on q_proj and o_proj of a model whose layers are wider: the shapes say so.
    let dir = temp("other");
    peft::save(&run.adapter, "tiny-llama", &dir).unwrap();
    let config = std::fs::read_to_string(dir.join(peft::CONFIG)).unwrap();
    std::fs::write(
        dir.join(peft::CONFIG),
        config.replace("\"r\": 8", "\"r\": 4"),
    )
    .unwrap();
    let m = message(peft::load(&dir, &run.loaded.model));
    assert!(
        m.contains(peft::WEIGHTS) && m.contains("another model"),
        "{m}"
    );
    // A weights file cut in half.
    peft::save(&run.adapter, "tiny-llama", &dir).unwrap();
    let bytes = std::fs::read(dir.join(peft::WEIGHTS)).unwrap();
    std::fs::write(dir.join(peft::WEIGHTS), &bytes[..bytes.len() / 2]).unwrap();
    let m = message(peft::load(&dir, &run.loaded.model));
    assert!(
        m.contains(peft::WEIGHTS) && m.contains("not a whole"),
        "{m}"
    );
    // No folder at all.
    let m = message(peft::load(&dir.join("missing"), &run.loaded.model));
    assert!(m.contains(peft::CONFIG), "{m}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_failed_save_leaves_the_previous_adapter_whole() {
    let run = TinyRun::new(SEED).unwrap();
    let dir = temp("save");
    peft::save(&run.adapter, "tiny-llama", &dir).unwrap();
    let before = std::fs::read(dir.join(peft::WEIGHTS)).unwrap();
    // The weights file's partial copy cannot be written: a folder stands in its place.
    let partial = dir.join(format!(".{}.partial", peft::WEIGHTS));
    std::fs::create_dir_all(partial.join("blocked")).unwrap();
    assert!(peft::save(&run.adapter, "tiny-llama", &dir).is_err());
    assert_eq!(std::fs::read(dir.join(peft::WEIGHTS)).unwrap(), before);
    assert!(
        peft::load(&dir, &run.loaded.model).is_ok(),
        "the previous adapter still loads"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_nan_loss_names_the_step_and_the_learning_rate_to_lower() {
    let mut run = TinyRun::new(SEED).unwrap();
    for lora in run.adapter.layers.iter_mut().flatten() {
        lora.b = shared::Tensor::full(lora.b.sizes(), f32::NAN);
    }
    let m = message(run.train());
    assert!(
        m.contains("NaN") && m.contains("step 0") && m.contains("--lr"),
        "{m}"
    );
}

#[test]
fn train_without_save_refuses_a_default_folder_that_holds_an_adapter() {
    let workspace = temp("workspace");
    let default = workspace.join("adapters/sums");
    // No folder yet, or an empty one: the default is used.
    assert_eq!(save_dir(None, &default).unwrap(), default);
    std::fs::create_dir_all(&default).unwrap();
    assert_eq!(save_dir(None, &default).unwrap(), default);
    // An adapter there: refused, naming the folder and the way out.
    let run = TinyRun::new(SEED).unwrap();
    peft::save(&run.adapter, "tiny-llama", &default).unwrap();
    let m = message(save_dir(None, &default));
    assert!(
        m.contains(&default.display().to_string()) && m.contains("--save DIR"),
        "{m}"
    );
    // Asked for by name, the same folder is replaced.
    assert_eq!(save_dir(Some(&default), &default).unwrap(), default);
    let other = workspace.join("mine");
    assert_eq!(save_dir(Some(&other), &default).unwrap(), other);
    std::fs::remove_dir_all(&workspace).unwrap();
}
