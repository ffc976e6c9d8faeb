//! The byte-pair encoding written by hand against Hugging Face's `tokenizers`:
//! trained on the same text with the same cut into words, both learn the same merges,
//! encode alike, and the `tokenizer.json` written from ours reads back and encodes as
//! ours does.

mod common;

use ch22_pretraining::bpe::{Bpe, words};
use ch22_pretraining::data::Shakespeare;
use ch22_pretraining::setup::BPE_VOCAB;
use ch22_pretraining::tokenizer_json::{save, to_tokenizer, words_pre_tokenizer};
use course::quiet_proptest::{holds, quiet};
use proptest::prelude::*;
use tokenizers::models::TrainerWrapper;
use tokenizers::models::bpe::{BPE, BpeTrainer};
use tokenizers::{PreTokenizedString, PreTokenizer, Tokenizer};

/// `tokenizers`' trainer on `text`, cut into words by the same regular expression.
fn trained_by_tokenizers(text: &str, vocab_size: usize) -> Tokenizer {
    let mut tokenizer = Tokenizer::new(BPE::default());
    tokenizer
        .with_pre_tokenizer(Some(words_pre_tokenizer().expect("the pre-tokenizer")));
    let mut trainer = TrainerWrapper::from(
        BpeTrainer::builder()
            .vocab_size(vocab_size)
            .show_progress(false)
            .build(),
    );
    tokenizer
        .train(&mut trainer, std::iter::once(text))
        .expect("tokenizers trains");
    tokenizer
}

/// A tokenizer's merges as pairs of token texts, read from its JSON.
fn merges_of(tokenizer: &Tokenizer) -> Vec<(String, String)> {
    let json: serde_json::Value =
        serde_json::from_str(&tokenizer.to_string(false).expect("serialises"))
            .expect("JSON");
    json["model"]["merges"]
        .as_array()
        .expect("a list of merges")
        .iter()
        .map(|m| {
            let pair = m.as_array().expect("a merge is a pair");
            let text = |i: usize| pair[i].as_str().expect("a token").to_string();
            (text(0), text(1))
        })
        .collect()
}

/// Our merges as pairs of token texts.
fn merges_of_ours(bpe: &Bpe) -> Vec<(String, String)> {
    bpe.merges
        .iter()
        .map(|&(a, b)| (bpe.vocab[a as usize].clone(), bpe.vocab[b as usize].clone()))
        .collect()
}

/// What differs between our training and `tokenizers`' on `text`, or `None`.
fn differences(text: &str, vocab_size: usize) -> Option<String> {
    let ours = Bpe::train(text, vocab_size).expect("our training");
    let theirs = trained_by_tokenizers(text, vocab_size);
    let (our_merges, their_merges) = (merges_of_ours(&ours), merges_of(&theirs));
    if let Some(r) = (0..our_merges.len().max(their_merges.len()))
        .find(|&r| our_merges.get(r) != their_merges.get(r))
    {
        return Some(format!(
            "text {text:?}, vocabulary {vocab_size}: merge {} is {:?} here and {:?} \
             in tokenizers",
            r + 1,
            our_merges.get(r),
            their_merges.get(r)
        ));
    }
    let ids = ours.encode(text).expect("our encoding");
    let their_ids = theirs
        .encode(text, false)
        .expect("tokenizers encodes")
        .get_ids()
        .to_vec();
    (ids != their_ids).then(|| {
        format!("text {text:?}: encoded {ids:?} here and {their_ids:?} by tokenizers")
    })
}

proptest! {
    #![proptest_config(quiet(64))]

    /// Short texts of few letters have many pairs of equal counts: the two trainers
    /// break every tie alike.
    #[test]
    fn the_same_merges_as_tokenizers_on_small_texts(
        text in "[ab c\n]{0,60}",
        merges in 0usize..12,
    ) {
        let letters = ch22_pretraining::chars::Chars::new(&text).vocab_size();
        holds(differences(&text, letters + merges))?;
    }
}

#[test]
fn the_cut_into_words_is_the_regular_expression() {
    let text = "To be, or  not\n  to be:\n\nthat is ";
    let mut pretokenized = PreTokenizedString::from(text);
    words_pre_tokenizer()
        .unwrap()
        .pre_tokenize(&mut pretokenized)
        .unwrap();
    let theirs: Vec<String> = pretokenized
        .get_splits(
            tokenizers::OffsetReferential::Original,
            tokenizers::OffsetType::Char,
        )
        .into_iter()
        .map(|(word, _, _)| word.to_string())
        .collect();
    assert_eq!(words(text), theirs);
}

#[test]
fn the_same_merges_as_tokenizers_on_shakespeare() {
    if !common::data_is_here() {
        return;
    }
    let data = Shakespeare::load().expect("the text");
    let (train, validation) = data.split();
    let ours = Bpe::train(train, BPE_VOCAB).expect("our training");
    let theirs = trained_by_tokenizers(train, BPE_VOCAB);
    assert_eq!(ours.vocab_size(), BPE_VOCAB);
    assert_eq!(theirs.get_vocab_size(false), BPE_VOCAB);
    assert_eq!(merges_of_ours(&ours), merges_of(&theirs));
    let ids = ours.encode(validation).expect("our encoding");
    let their_ids = theirs
        .encode(validation, false)
        .expect("tokenizers encodes");
    assert_eq!(ids, their_ids.get_ids(), "the validation text's tokens");
    assert_eq!(ours.decode(&ids).expect("decodes"), validation);
}

#[test]
fn the_saved_tokenizer_json_reads_back_and_encodes_as_ours() {
    let text = "If music be the food of love, play on,\n\
                Give me excess of it; that, surfeiting,\n\
                The appetite may sicken, and so die.\n";
    let ours = Bpe::train(text, 80).expect("our training");
    let path = std::env::temp_dir()
        .join(format!("ch22-tokenizer-{}.json", std::process::id()));
    save(&ours, &path).expect("saved");
    let read = Tokenizer::from_file(&path).expect("tokenizers reads it");
    std::fs::remove_file(&path).ok();
    let encoded = read.encode(text, false).expect("encodes");
    assert_eq!(encoded.get_ids(), ours.encode(text).unwrap());
    assert_eq!(
        read.decode(encoded.get_ids(), false).expect("decodes"),
        text
    );
    assert_eq!(
        to_tokenizer(&ours).unwrap().get_vocab_size(false),
        ours.vocab_size()
    );
}
