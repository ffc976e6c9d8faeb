//! A run stopped and resumed from its checkpoint gives the losses of the run that never
//! stopped, bit for bit; a checkpoint cut short, altered or of another run is an error
//! naming the file; a run that fails keeps its last good checkpoint. No data needed: tiny
//! models on made-up text.

use std::path::{Path, PathBuf};

use ch19_induction_heads::arithmetic::Formulas;
use ch22_pretraining::checkpoint::{
    CHECKPOINT_FILE, Checkpoint, resume, train_until,
};
use ch22_pretraining::config::{Arch, Config};
use ch22_pretraining::model::Model;
use ch22_pretraining::train::{Settings, train};
use shared::manual_seed;

const TEXT: &str = "to be or not to be, that is the question: whether 'tis nobler \
    in the mind to suffer the slings and arrows of outrageous fortune. ";

/// The text as ids of its sorted distinct characters, and the vocabulary's size.
fn data() -> (Vec<u32>, usize) {
    let mut chars: Vec<char> = TEXT.chars().collect();
    chars.sort_unstable();
    chars.dedup();
    let ids = TEXT
        .repeat(4)
        .chars()
        .map(|c| chars.binary_search(&c).expect("in the vocabulary") as u32)
        .collect();
    (ids, chars.len())
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("ch22-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

const SEED: u64 = 5;
const STEPS: u32 = 20;

fn start(arch: Arch, config: &Config, settings: &Settings) -> Checkpoint {
    manual_seed(SEED);
    Checkpoint::start(arch, config, settings, "char").expect("a run")
}

#[test]
fn a_resumed_run_has_the_losses_of_an_uninterrupted_one() {
    let (ids, vocab) = data();
    let config = Config::tiny(vocab);
    let settings = Settings::short(STEPS);
    for arch in [Arch::Llama, Arch::Gpt2] {
        // The loop of `train::train`, uninterrupted.
        manual_seed(SEED);
        let mut model = Model::new(arch, &config).expect("a model");
        let straight =
            train::<Formulas>(&mut model, &ids, &config, &settings, STEPS, |_, _| {})
                .expect("a run");
        // The same run, saved every 5 steps and stopped after 10.
        let dir = fresh_dir(&format!("resume-{arch}"));
        let mut run = start(arch, &config, &settings);
        let first = train_until::<Formulas>(
            &mut run,
            &ids,
            10,
            Some((&dir, 5)),
            |_, _, _| {},
        )
        .expect("the first half");
        drop(run);
        manual_seed(999); // the generator moves on: the checkpoint must put it back
        let mut run =
            resume(&dir, arch, &config, &settings, "char").expect("resumed");
        assert_eq!(run.step, 10, "{arch}: the step the checkpoint was taken at");
        let second =
            train_until::<Formulas>(&mut run, &ids, STEPS, None, |_, _, _| {})
                .expect("the second half");
        let resumed: Vec<f32> = first.into_iter().chain(second).collect();
        assert_eq!(resumed.len(), straight.len());
        for (step, (a, b)) in straight.iter().zip(&resumed).enumerate() {
            assert_eq!(
                a.to_bits(),
                b.to_bits(),
                "{arch} step {step}: uninterrupted loss {a}, resumed {b}"
            );
        }
        for ((name, a), (_, b)) in model
            .named_parameters()
            .iter()
            .zip(run.model.named_parameters())
        {
            assert_eq!(a.to_vec(), b.to_vec(), "{arch}: the final {name}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A checkpoint of a 4-step run in `dir`.
fn saved_run(dir: &Path) -> (Config, Settings) {
    let (ids, vocab) = data();
    let config = Config::tiny(vocab);
    let settings = Settings::short(STEPS);
    let mut run = start(Arch::Llama, &config, &settings);
    train_until::<Formulas>(&mut run, &ids, 4, Some((dir, 2)), |_, _, _| {})
        .expect("a run");
    (config, settings)
}

fn resume_error(dir: &Path, config: &Config, settings: &Settings) -> String {
    match resume(dir, Arch::Llama, config, settings, "char") {
        Ok(_) => panic!("resumed from a checkpoint that should be refused"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_checkpoint_cut_short_or_altered_is_an_error_naming_the_file() {
    let dir = fresh_dir("damaged");
    let (config, settings) = saved_run(&dir);
    let path = dir.join(CHECKPOINT_FILE);
    let good = std::fs::read(&path).expect("the checkpoint");
    for keep in [0, 7, 100, good.len() / 2, good.len() - 1] {
        std::fs::write(&path, &good[..keep]).expect("cut");
        let message = resume_error(&dir, &config, &settings);
        assert!(
            message.contains(CHECKPOINT_FILE),
            "cut to {keep} bytes: {message}"
        );
        assert!(
            message.contains("cut short"),
            "cut to {keep} bytes: {message}"
        );
    }
    // One byte of a weight changed: the checksum sees it.
    let mut altered = good.clone();
    let last = altered.len() - 1;
    altered[last - 6000] ^= 0x40;
    std::fs::write(&path, &altered).expect("altered");
    let message = resume_error(&dir, &config, &settings);
    assert!(message.contains("altered"), "{message}");
    assert!(message.contains(CHECKPOINT_FILE), "{message}");
    // The step in its settings changed ("step":"4" to "step":"5", the same length).
    let header_len =
        u64::from_le_bytes(good[..8].try_into().expect("8 bytes")) as usize;
    let header = String::from_utf8_lossy(&good[8..8 + header_len]).into_owned();
    let at = header
        .find("\"step\":\"4\"")
        .expect("the step in the metadata");
    let mut moved = good.clone();
    moved[8 + at + 8] = b'5';
    std::fs::write(&path, &moved).expect("altered");
    let message = resume_error(&dir, &config, &settings);
    assert!(message.contains("altered"), "a changed step: {message}");
    let _ = std::fs::remove_dir_all(&dir);
    let message = resume_error(&dir, &config, &settings);
    assert!(
        message.contains(CHECKPOINT_FILE),
        "no checkpoint: {message}"
    );
}

#[test]
fn a_checkpoint_of_another_run_is_refused_naming_what_differs() {
    let dir = fresh_dir("mismatch");
    let (config, settings) = saved_run(&dir);
    let wider = Config { batch: 8, ..config };
    let message = resume_error(&dir, &wider, &settings);
    assert!(
        message.contains("saved with batch 4, this run asks for batch 8"),
        "{message}"
    );
    let longer = Settings::short(STEPS + 10);
    let message = resume_error(&dir, &config, &longer);
    assert!(message.contains("decay_steps 20"), "{message}");
    let error = resume(&dir, Arch::Gpt2, &config, &settings, "char")
        .err()
        .expect("refused");
    assert!(error.to_string().contains("arch llama"), "{error}");
    let error = resume(&dir, Arch::Llama, &config, &settings, "bpe")
        .err()
        .expect("refused");
    assert!(error.to_string().contains("tokenizer char"), "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_run_that_fails_keeps_its_last_good_checkpoint() {
    let dir = fresh_dir("fails");
    let (config, settings) = saved_run(&dir);
    let before = std::fs::read(dir.join(CHECKPOINT_FILE)).expect("the checkpoint");
    // A learning rate that sends the weights to infinity at the first update.
    let (ids, _) = data();
    let wild = Settings {
        lr: f64::INFINITY,
        ..settings
    };
    let mut run = start(Arch::Llama, &config, &wild);
    let error =
        train_until::<Formulas>(&mut run, &ids, STEPS, Some((&dir, 1)), |_, _, _| {})
            .expect_err("the run fails");
    assert!(error.to_string().contains("step 0"), "{error}");
    assert!(error.to_string().contains("last checkpoint"), "{error}");
    let after = std::fs::read(dir.join(CHECKPOINT_FILE)).expect("still there");
    assert!(before == after, "the good checkpoint was replaced");
    // Reading a checkpoint draws nothing from the default generator.
    manual_seed(21);
    let generator = shared::rng::get_rng_state();
    Checkpoint::read(&dir).expect("readable");
    assert!(
        shared::rng::get_rng_state() == generator,
        "reading moved the generator"
    );
    let run = resume(&dir, Arch::Llama, &config, &settings, "char")
        .expect("still resumable");
    assert_eq!(run.step, 4);
    let leftovers: Vec<_> = std::fs::read_dir(&dir).expect("the folder").collect();
    assert_eq!(leftovers.len(), 1, "only the checkpoint in the folder");
    let _ = std::fs::remove_dir_all(&dir);
}
