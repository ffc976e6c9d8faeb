//! The command line as a user expects it, on the tiny GGUF (no model file needed): a chat
//! printed as turns, the raw template only on request; `--tokenize` showing each token's
//! own string and the bytes of a cut character; a prompt too long refused before it is
//! echoed; a negative temperature reaching the chapter's own check; `--prompt` with
//! `--chat` refused by the parser; `--weights quantised` answering as float32.

mod common;

use std::process::{Command, Output};

use ch20_real_model::cli::{Stream, describe_token};
use ch20_real_model::loader::load;
use ch20_real_model::tokenizer::{decode, encode, token_bytes};
use common::fixture;

/// The chapter's binary with `args`, on the tiny GGUF unless `args` names a model.
fn chapter(args: &[&str]) -> Output {
    let tiny = fixture("tiny-llama.gguf");
    let mut command = Command::new(env!("CARGO_BIN_EXE_ch20-real-model"));
    if !args.contains(&"--model") {
        command.arg("--model").arg(&tiny);
    }
    command
        .args(args)
        .output()
        .expect("the chapter's binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_chat_prints_turns_not_the_template() {
    let run = chapter(&["--chat", "Hi", "--max-new-tokens", "4"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let text = stdout(&run);
    assert!(text.starts_with("user: Hi\nassistant: "), "{text:?}");
    assert!(!text.contains("<|im_"), "{text:?}");

    let run = chapter(&[
        "--chat",
        "Hi",
        "--system",
        "Be brief.",
        "--max-new-tokens",
        "4",
    ]);
    let text = stdout(&run);
    assert!(
        text.starts_with("system: Be brief.\nuser: Hi\nassistant: "),
        "{text:?}"
    );

    let run = chapter(&["--chat", "Hi", "--show-template", "--max-new-tokens", "4"]);
    let text = stdout(&run);
    assert!(
        text.starts_with(
            "<|im_start|>system\nYou are a tiny model.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
        ),
        "{text:?}"
    );
}

#[test]
fn a_chats_answer_ends_without_its_end_of_turn_token() {
    let loaded = load(&fixture("tiny-llama.gguf"), |_, _| {}).unwrap();
    let tok = &loaded.tokenizer;
    let eos = loaded
        .eos
        .expect("the tiny GGUF names its end-of-turn token");
    let mut answer = encode(tok, "Beautiful is better").unwrap();
    answer.push(eos);
    let streamed = |hidden: Option<u32>| -> String {
        let mut stream = Stream::new(tok, hidden);
        answer.iter().map(|&id| stream.push(id)).collect()
    };
    assert_eq!(streamed(Some(eos)), "Beautiful is better");
    assert_eq!(streamed(None), "Beautiful is better<|im_end|>");
}

#[test]
fn a_character_cut_over_tokens_streams_once_whole() {
    let loaded = load(&fixture("tiny-llama.gguf"), |_, _| {}).unwrap();
    let tok = &loaded.tokenizer;
    let ids = encode(tok, "a 🦀").unwrap();
    let mut stream = Stream::new(tok, None);
    let pieces: Vec<String> = ids.iter().map(|&id| stream.push(id)).collect();
    assert_eq!(pieces.concat(), "a 🦀", "pieces {pieces:?} of ids {ids:?}");
    assert!(
        pieces.iter().all(|p| !p.contains('\u{FFFD}')),
        "a piece printed a replacement character: {pieces:?}"
    );
}

#[test]
fn every_token_spells_the_bytes_it_decodes_to() {
    let loaded = load(&fixture("tiny-llama.gguf"), |_, _| {}).unwrap();
    let tok = &loaded.tokenizer;
    let mut byte_tokens = 0;
    for id in 0..tok.get_vocab_size(true) as u32 {
        let decoded = decode(tok, &[id]).unwrap();
        match token_bytes(tok, id) {
            Some(bytes) => {
                byte_tokens += usize::from(bytes.len() == 1);
                assert_eq!(
                    String::from_utf8_lossy(&bytes),
                    decoded,
                    "token {id} ({:?}): bytes {bytes:?}",
                    tok.id_to_token(id)
                );
            }
            None => assert!(
                decoded.starts_with("<|") && decoded.ends_with("|>"),
                "token {id} ({decoded:?}) has no bytes but is not a special token"
            ),
        }
    }
    assert_eq!(byte_tokens, 256, "one token for each byte");
}

#[test]
fn tokenize_shows_each_tokens_string_and_bytes() {
    let loaded = load(&fixture("tiny-llama.gguf"), |_, _| {}).unwrap();
    let tok = &loaded.tokenizer;
    let text = "is 🦀";
    let ids = encode(tok, text).unwrap();
    let lines: Vec<String> = ids
        .iter()
        .map(|&id| describe_token(tok, id).unwrap())
        .collect();
    let own = tok.id_to_token(ids[0]).unwrap();
    assert_eq!(
        lines[0],
        format!("{:>6} {:<18} {:?}", ids[0], format!("{own:?}"), own)
    );
    // The crab is four bytes (f0 9f a6 80), cut over tokens of the tiny vocabulary: each
    // line shows its token's bytes, and together they spell the text.
    let spelt: Vec<u8> = ids
        .iter()
        .flat_map(|&id| token_bytes(tok, id).unwrap())
        .collect();
    assert_eq!(spelt, text.as_bytes(), "{lines:?}");
    assert!(
        lines.iter().any(|l| l.ends_with("(part of a character)")),
        "{lines:?}"
    );
    assert!(lines.iter().all(|l| !l.contains('\u{FFFD}')), "{lines:?}");

    let run = chapter(&["--tokenize", text]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(stdout(&run), lines.join("\n") + "\n");
}

#[test]
fn a_prompt_too_long_fails_before_it_is_echoed() {
    let long = "Beautiful is better than ugly. ".repeat(40);
    let run = chapter(&["--prompt", &long, "--max-new-tokens", "8"]);
    assert_eq!(run.status.code(), Some(1));
    assert_eq!(stdout(&run), "", "nothing printed before the error");
    let message = stderr(&run);
    assert!(
        message.contains("error: prompt: ")
            && message.contains(" new tokens = ")
            && message.contains("is longer than the model's context of 128 tokens"),
        "{message}"
    );
}

#[test]
fn a_negative_temperature_reaches_the_chapters_check() {
    let run = chapter(&["--prompt", "Hi", "--temperature", "-1"]);
    assert_eq!(run.status.code(), Some(1));
    assert!(
        stderr(&run)
            .contains("error: prompt: --temperature must be 0 or more, got -1"),
        "{}",
        stderr(&run)
    );
    let run = chapter(&["--prompt", "Hi", "--temperature", "1", "--top-p", "-0.5"]);
    assert!(
        stderr(&run).contains("--top-p must be in (0, 1], got -0.5"),
        "{}",
        stderr(&run)
    );
}

#[test]
fn the_parser_refuses_prompt_and_chat_together() {
    let run = chapter(&["--prompt", "Hi", "--chat", "Hi"]);
    assert_eq!(run.status.code(), Some(2), "clap's usage error");
    let message = stderr(&run);
    assert!(
        message.contains("--prompt <TEXT>")
            && message.contains("cannot be used with"),
        "{message}"
    );
    assert_eq!(stdout(&run), "");
    for chat_only in [["--system", "Be brief."].as_slice(), &["--show-template"]] {
        let run = chapter(&[chat_only, &["--prompt", "Hi"]].concat());
        assert_eq!(
            run.status.code(),
            Some(2),
            "{chat_only:?} belongs to --chat"
        );
    }
}

#[test]
fn the_parser_refuses_interventions_with_a_command() {
    for command in [["--prompt", "Hi"], ["--chat", "Hi"], ["--tokenize", "Hi"]] {
        let run = chapter(&[&["--interventions"], command.as_slice()].concat());
        assert_eq!(
            run.status.code(),
            Some(2),
            "--interventions with {command:?}"
        );
        assert!(
            stderr(&run).contains("cannot be used with"),
            "{}",
            stderr(&run)
        );
    }
}

#[test]
fn quantised_weights_print_the_float32_answer() {
    let args = ["--prompt", "Once upon", "--max-new-tokens", "6"];
    let float = chapter(&args);
    let quantised = chapter(&[&args[..], &["--weights", "quantised"]].concat());
    assert!(quantised.status.success(), "{}", stderr(&quantised));
    assert_eq!(stdout(&quantised), stdout(&float), "the same tokens");
    // The narrative runs on float32 weights: the flag is refused there, not ignored.
    let narrative = chapter(&["--weights", "quantised"]);
    assert!(!narrative.status.success());
    assert!(
        stderr(&narrative).contains("--weights"),
        "{}",
        stderr(&narrative)
    );
}
