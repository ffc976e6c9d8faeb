//! The chapter's choices: the prompts it runs, how many tokens, which draft, which seed.

/// The prompt whose next-token logits the chapter sets beside transformers'.
pub const PROMPT: &str = "The capital of France is";
/// The question the chapter asks through the chat template.
pub const QUESTION: &str = "What is the capital of France?";
/// New tokens of the greedy answer.
pub const ANSWER_TOKENS: usize = 24;
/// New tokens of each sampler's continuation of [`PROMPT`].
pub const SAMPLED_TOKENS: usize = 10;
/// New tokens compared between cached decoding and recomputing.
pub const CACHED_TOKENS: usize = 8;
/// The sentence whose attention the chapter reads for sinks and draws as heatmaps.
pub const SENTENCE: &str =
    "The cat sat on the mat because the cat was tired, and the mat was warm.";
/// The prompt of speculative decoding: code, which repeats itself.
pub const CODE_PROMPT: &str = "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n\ndef mul(a, b):";
/// Tokens the draft proposes per pass of the full model.
pub const DRAFT_K: usize = 4;
/// New tokens of the speculative generation.
pub const SPECULATED_TOKENS: usize = 24;
/// The induction test: sequences of this many random tokens, repeated once ...
pub const INDUCTION_HALF: usize = 50;
/// ... in a batch of this many, after the start token.
pub const INDUCTION_BATCH: usize = 2;
/// The seed of the random tokens and of the samplers (`--seed` replaces it).
pub const SEED: u64 = 0;
/// How many heads each ranking prints.
pub const TOP_HEADS: usize = 3;
/// The induction score above which a head counts as an induction head.
pub const INDUCTION_THRESHOLD: f64 = 0.4;

// `--interventions`: heads ablated, and a window without its sink.

/// The strongest induction head (layer, head), as the induction step ranks them.
pub const INDUCTION_HEAD: (usize, usize) = (18, 6);
/// The two strongest previous-token heads, either of which may feed it.
pub const PREVIOUS_TOKEN_HEADS: [(usize, usize); 2] = [(16, 0), (11, 1)];
/// Random tokens in each half of the short repeat whose heatmaps `--heatmaps` draws.
pub const HEATMAP_HALF: usize = 8;
/// The text whose perplexity the chapter measures: two paragraphs of this book's page
/// "Why attention?", as plain text.
pub const PARAGRAPH: &str = include_str!("../texts/why-attention.txt");
/// The window of StreamingLLM's experiment, in keys (the query's own included) ...
pub const STREAMING_WINDOW: usize = 16;
/// ... and the sink tokens kept beside it.
pub const STREAMING_SINKS: usize = 4;
