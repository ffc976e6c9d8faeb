//! The small model the export's checks share: a Llama of `Config::tiny`'s size with a
//! byte-pair encoding of 60 tokens, trained a few hundred steps on made-up text. Used by
//! `tests/export.rs`, `tests/export_check.rs` and `examples/export_tiny.rs` (which saves
//! it for `reference/ch22_export_check.py`).

use ch19_induction_heads::arithmetic::Formulas;
use ch22_pretraining::bpe::Bpe;
use ch22_pretraining::config::{Arch, Config};
use ch22_pretraining::model::Model;
use ch22_pretraining::train::{Settings, train};
use shared::manual_seed;

/// Made-up text, a few distinct words over and over.
pub const TEXT: &str = "the cat sat on the mat. the dog sat on the log. a cat and a dog \
    met on a mat by the log, and the cat ran. ";

/// The steps the example trains for, and `tests/export_check.rs` after it.
pub const STEPS: u32 = 200;

/// The trained model, its config and its byte-pair encoding, after `manual_seed(seed)`,
/// trained for `steps` steps at a learning rate of 1e-2.
pub fn trained(seed: u64, steps: u32) -> (Model, Config, Bpe) {
    let text = TEXT.repeat(8);
    let bpe = Bpe::train(&text, 60).expect("a byte-pair encoding");
    let ids = bpe.encode(&text).expect("ids");
    let config = Config::tiny(bpe.vocab_size());
    manual_seed(seed);
    let mut model = Model::new(Arch::Llama, &config).expect("a model");
    let settings = Settings {
        lr: 1e-2,
        min_lr: 1e-3,
        ..Settings::short(steps)
    };
    train::<Formulas>(&mut model, &ids, &config, &settings, steps, |_, _| {})
        .expect("a run");
    (model, config, bpe)
}
