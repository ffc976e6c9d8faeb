//! The chapter's command line beyond the narrative: `--prompt`, `--chat` and `--tokenize`.
//!
//! The answer streams to stdout as each token is chosen; how long it took goes to stderr,
//! so that `> file` keeps only the text.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use ch15_modern_layer::sampling::Sampler;
use course::narrative::Seed;
use indicatif::{ProgressBar, ProgressStyle};
use tokenizers::Tokenizer;

use crate::chat::{Message, conversation, render};
use crate::error::LoadError;
use crate::generate::{Choice, Decoder, Limits, check_prompt, generate};
use crate::loader::{
    Loaded, default_model_path, how_to_get_it, load, load_quantised,
};
use crate::tokenizer::{decode, encode, token_bytes};

/// The chapter's own options (`cargo run -p ch20-real-model -- --help` lists them).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct Options {
    /// Continue TEXT: prints the prompt, then the model's tokens as they come.
    #[arg(long, value_name = "TEXT", conflicts_with = "chat")]
    pub prompt: Option<String>,
    /// Ask the model TEXT through its chat template, and print its answer.
    #[arg(long, value_name = "TEXT")]
    pub chat: Option<String>,
    /// With --chat: the system message (SmolLM2's template adds its own when none is given).
    #[arg(long, value_name = "TEXT", conflicts_with_all = ["prompt", "tokenize"])]
    pub system: Option<String>,
    /// With --chat: print the prompt as the model reads it (the rendered chat template) and
    /// the answer with its end-of-turn token, instead of the turns.
    #[arg(long, conflicts_with_all = ["prompt", "tokenize"])]
    pub show_template: bool,
    /// Print the token ids of TEXT, each with its own string in the vocabulary and the text
    /// (or the bytes) it stands for.
    #[arg(long, value_name = "TEXT", conflicts_with_all = ["prompt", "chat"])]
    pub tokenize: Option<String>,
    /// Print the interventions instead of the narrative: heads ablated (with --heatmaps, the
    /// induction head's weights before and after), and a window that evicts the sink.
    #[arg(long, conflicts_with_all = ["prompt", "chat", "tokenize"])]
    pub interventions: bool,
    /// Stop after N new tokens (or at the end-of-sequence token).
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub max_new_tokens: usize,
    /// Sample with temperature T (0: greedy, the likeliest token every time).
    // A negative number is a value here, not an option: it reaches `choice`'s own check.
    #[arg(
        long,
        value_name = "T",
        default_value_t = 0.0,
        allow_negative_numbers = true
    )]
    pub temperature: f32,
    /// When sampling: keep the K likeliest tokens.
    #[arg(long, value_name = "K")]
    pub top_k: Option<usize>,
    /// When sampling: keep the nucleus of probability P.
    #[arg(long, value_name = "P", allow_negative_numbers = true)]
    pub top_p: Option<f32>,
    /// When sampling: keep the tokens at least P times as likely as the likeliest.
    #[arg(long, value_name = "P", allow_negative_numbers = true)]
    pub min_p: Option<f32>,
    /// The model: a GGUF file or a transformers folder (default: $ATTN_MODEL, else
    /// models/SmolLM2-135M-Instruct.Q4_1.gguf under the workspace).
    #[arg(long, value_name = "PATH")]
    pub model: Option<PathBuf>,
    /// With --prompt or --chat: keep the weights as float32 numbers (the default), or in
    /// the GGUF file's quantised blocks, each weight computed when a product needs it
    /// (the same tokens and logits, the weights in a sixth of the memory).
    #[arg(long, value_enum, default_value_t = WeightsIn::Float32)]
    pub weights: WeightsIn,
}

/// How the weights are kept in memory (`--weights`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WeightsIn {
    /// Dequantised once, when the file is read.
    #[default]
    Float32,
    /// As the file stores them (Q4_1, Q8_0 blocks), dequantised inside each product.
    Quantised,
}

impl Options {
    /// Whether the command line asks for something other than the narrative.
    pub fn is_command(&self) -> bool {
        self.prompt.is_some() || self.chat.is_some() || self.tokenize.is_some()
    }

    /// How each new token is chosen: greedy at temperature 0, else sampled with the
    /// filters given, in transformers' order (temperature, top-k, top-p, min-p).
    pub fn choice(&self) -> Result<Choice, LoadError> {
        let bad = |what: String| Err(LoadError::Prompt(what));
        if self.temperature < 0.0 || !self.temperature.is_finite() {
            return bad(format!(
                "--temperature must be 0 or more, got {}",
                self.temperature
            ));
        }
        if let Some(p) = self.top_p.filter(|p| !(*p > 0.0 && *p <= 1.0)) {
            return bad(format!("--top-p must be in (0, 1], got {p}"));
        }
        if let Some(p) = self.min_p.filter(|p| !(0.0..=1.0).contains(p)) {
            return bad(format!("--min-p must be in [0, 1], got {p}"));
        }
        if self.top_k == Some(0) {
            return bad("--top-k must be at least 1".into());
        }
        if self.temperature == 0.0 {
            return Ok(Choice::Greedy);
        }
        Ok(Choice::Sample(Sampler {
            temperature: self.temperature,
            top_k: self.top_k,
            top_p: self.top_p,
            min_p: self.min_p,
            repetition_penalty: None,
        }))
    }
}

/// Loads the model of `--model` (or the default one), with a progress bar on stderr.
pub fn load_with_progress(model: Option<&PathBuf>) -> Result<Loaded, LoadError> {
    let path = model.cloned().unwrap_or_else(default_model_path);
    if !path.exists() {
        return Err(LoadError::Io {
            path: path.clone(),
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                how_to_get_it(&path),
            ),
        });
    }
    let bar = ProgressBar::new(0).with_style(
        ProgressStyle::with_template("loading {msg} {bar:30} {pos}/{len} tensors")
            .expect("a valid template"),
    );
    bar.set_message(
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    );
    let loaded = load(&path, |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    });
    bar.finish_and_clear();
    loaded
}

/// Runs `--tokenize`, `--prompt` or `--chat`.
pub fn run(seed: Seed, options: &Options) -> Result<(), LoadError> {
    options.choice()?;
    match options.weights {
        WeightsIn::Float32 => {
            answer(seed, options, load_with_progress(options.model.as_ref())?)
        }
        WeightsIn::Quantised => {
            let path = options.model.clone().unwrap_or_else(default_model_path);
            if !path.exists() {
                return Err(LoadError::Io {
                    source: std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        how_to_get_it(&path),
                    ),
                    path,
                });
            }
            answer(seed, options, load_quantised(&path)?)
        }
    }
}

/// [`run`] on a loaded model (chapter 23 calls it on a model with its adapter merged in).
pub fn answer(
    seed: Seed,
    options: &Options,
    loaded: Loaded<impl Decoder>,
) -> Result<(), LoadError> {
    let choice = options.choice()?;
    let tok = &loaded.tokenizer;
    let mut out = std::io::stdout().lock();
    let io = |e: std::io::Error| LoadError::Io {
        path: "stdout".into(),
        source: e,
    };
    if let Some(text) = &options.tokenize {
        for id in encode(tok, text)? {
            writeln!(out, "{}", describe_token(tok, id)?).map_err(io)?;
        }
        return Ok(());
    }
    // What is printed before the answer, and the text the model reads.
    let (shown, text) = match (&options.prompt, &options.chat) {
        (Some(prompt), _) => (prompt.clone(), prompt.clone()),
        (None, Some(question)) => {
            let template = loaded.chat_template.as_deref().ok_or_else(|| {
                LoadError::Tokenizer("the model has no chat template".into())
            })?;
            let token = |id: Option<u32>| {
                id.and_then(|i| tok.id_to_token(i)).unwrap_or_default()
            };
            let messages = conversation(question, options.system.as_deref());
            let rendered =
                render(template, &messages, &token(loaded.bos), &token(loaded.eos))?;
            if options.show_template {
                (rendered.clone(), rendered)
            } else {
                (turns(&messages), rendered)
            }
        }
        (None, None) => return Ok(()),
    };
    let prompt = encode(tok, &text)?;
    let limits = Limits {
        max_new_tokens: options.max_new_tokens,
        eos: loaded.eos,
        context_length: loaded.config.context_length,
    };
    // A prompt the model cannot take fails here, before anything of it is printed.
    check_prompt(&prompt, &limits, loaded.model.vocab_size())?;
    write!(out, "{shown}").map_err(io)?;
    out.flush().map_err(io)?;
    if let Choice::Sample(_) = choice {
        shared::manual_seed(seed.or(0));
    }
    // A chat's turns end at the end-of-turn token: printed only with the raw template.
    let hidden = match options.chat {
        Some(_) if !options.show_template => loaded.eos,
        _ => None,
    };
    let mut stream = Stream::new(tok, hidden);
    let start = Instant::now();
    let mut first = None;
    let mut new_tokens = 0usize;
    let mut write_error = None;
    generate(
        &loaded.model,
        &loaded.recipe,
        &prompt,
        choice,
        &limits,
        |id| {
            first.get_or_insert_with(|| start.elapsed());
            new_tokens += 1;
            let piece = stream.push(id);
            if let Err(e) = write!(out, "{piece}").and_then(|_| out.flush()) {
                write_error.get_or_insert(e);
            }
        },
    )?;
    writeln!(out).map_err(io)?;
    if let Some(e) = write_error {
        return Err(io(e));
    }
    let total = start.elapsed();
    let first = first.unwrap_or(total);
    let rest = new_tokens.saturating_sub(1);
    let speed = if rest > 0 {
        rest as f64 / (total - first).as_secs_f64()
    } else {
        0.0
    };
    eprintln!(
        "{} prompt tokens, {new_tokens} new; time to first token {:.2} s, then {speed:.1} tokens/s",
        prompt.len(),
        first.as_secs_f64()
    );
    Ok(())
}

/// A conversation as a reader reads it, one `role: content` line a message, and the
/// assistant's turn opened: `user: What is ...?\nassistant: `.
pub fn turns(messages: &[Message]) -> String {
    let mut text: String = messages
        .iter()
        .map(|m| format!("{}: {}\n", m.role, m.content))
        .collect();
    text.push_str("assistant: ");
    text
}

/// One line of `--tokenize`: the id, the token's own string in the vocabulary (GPT-2's
/// byte-level alphabet writes a space as `Ġ`), and the text it stands for, or its bytes
/// when they are only part of a character (SmolLM2 cuts the four bytes of 🦀 over three
/// tokens).
pub fn describe_token(tok: &Tokenizer, id: u32) -> Result<String, LoadError> {
    let own = tok.id_to_token(id).unwrap_or_default();
    let text = match token_bytes(tok, id) {
        Some(bytes) => match String::from_utf8(bytes) {
            Ok(text) => format!("{text:?}"),
            Err(e) => {
                let hex: Vec<String> =
                    e.as_bytes().iter().map(|b| format!("{b:02x}")).collect();
                format!("bytes {} (part of a character)", hex.join(" "))
            }
        },
        // A special token (`<|im_end|>`) is not made of bytes: it is its own text.
        None => format!("{:?}", decode(tok, &[id])?),
    };
    Ok(format!("{id:>6} {:<18} {text}", format!("{own:?}")))
}

/// An answer's text as its tokens come, printed only once it is whole UTF-8 (an emoji
/// split over two tokens waits for the second), without the token `hidden` (a chat's
/// end-of-turn token).
pub struct Stream<'a> {
    tokenizer: &'a Tokenizer,
    hidden: Option<u32>,
    ids: Vec<u32>,
    printed: String,
}

impl<'a> Stream<'a> {
    /// Nothing printed yet.
    pub fn new(tokenizer: &'a Tokenizer, hidden: Option<u32>) -> Stream<'a> {
        Stream {
            tokenizer,
            hidden,
            ids: Vec::new(),
            printed: String::new(),
        }
    }

    /// The text that token `id` completes: empty while a character is still cut.
    pub fn push(&mut self, id: u32) -> String {
        if Some(id) == self.hidden {
            return String::new();
        }
        self.ids.push(id);
        // Decode everything so far and print what is new, once it is whole UTF-8 text.
        let text = decode(self.tokenizer, &self.ids).unwrap_or_default();
        if text.ends_with('\u{FFFD}')
            || text.len() <= self.printed.len()
            || !text.starts_with(&self.printed)
        {
            return String::new();
        }
        let piece = text[self.printed.len()..].to_string();
        self.printed = text;
        piece
    }
}
