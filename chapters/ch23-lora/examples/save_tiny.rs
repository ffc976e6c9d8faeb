//! `cargo run -p ch23-lora --example save_tiny -- DIR`: the adapter of the chapter's short
//! run on the tiny checkpoint, saved in PEFT's files, for `reference/ch23_lora.py
//! --fixtures` to load with PEFT.

use ch23_lora::setup::SEED;
use ch23_lora::tiny::TinyRun;

fn main() -> Result<(), ch23_lora::LoraError> {
    let dir = std::env::args().nth(1).expect("usage: save_tiny DIR");
    let mut run = TinyRun::new(SEED)?;
    run.train()?;
    ch23_lora::peft::save(&run.adapter, "tiny-llama", std::path::Path::new(&dir))
}
