//! The formula is the listing: the code a chapter page shows is the textbook formula, and
//! the chapter's prose speaks of attention, not of processors.
//!
//! For every chapter page (`book/src/chNN-*.md`, the exercise pages included) of every
//! chapter the book has:
//! - no listing the page includes from a `.rs` file calls PyTorch's rounding-order helpers
//!   ([`ORDER_HELPERS`]): those live beside the formula (`pytorch_order` modules), and
//!   `appendix-matching-pytorch.md` tells why;
//! - the page's own text and the text it includes from other files (hints, tables) speak of
//!   processors, libraries, units in the last place, timing set-ups or commits
//!   ([`MACHINE_WORDS`], and hexadecimal commit hashes) in at most one sentence per
//!   chapter: the one that points to the appendix.
//!
//! The appendices (`appendix-*.md`) and the pages between the chapters are not checked.

use std::fs;
use std::path::{Path, PathBuf};

/// Names that only code following PyTorch's order of roundings needs.
const ORDER_HELPERS: [&str; 6] = [
    "row_dot",
    "expf_u10",
    "mul_add",
    "lanes::",
    "softmax_lanes",
    "Capability",
];

/// Words of processors, libraries, rounding units and timing set-ups.
const MACHINE_WORDS: [&str; 8] = [
    "MKL",
    "AVX",
    "AMD",
    "Intel",
    "ulp",
    "GLIBC",
    "load average",
    "commit ",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .to_path_buf()
}

/// Every chapter of the book (`ch01`, `ch02`, ...), from the names of its pages.
fn chapters() -> Vec<String> {
    let mut chapters: Vec<String> = fs::read_dir(root().join("book/src"))
        .expect("book/src")
        .map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
        .filter(|name| {
            let bytes = name.as_bytes();
            name.ends_with(".md")
                && name.starts_with("ch")
                && bytes.len() > 4
                && bytes[2].is_ascii_digit()
                && bytes[3].is_ascii_digit()
                && bytes[4] == b'-'
        })
        .map(|name| name[..4].to_string())
        .collect();
    chapters.sort();
    chapters.dedup();
    chapters
}

/// The pages of chapter `chapter` (`ch10`): the chapter and its exercises.
fn chapter_pages(chapter: &str) -> Vec<PathBuf> {
    let dir = root().join("book/src");
    let mut pages: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("book/src")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            let name = p.file_name().expect("name").to_string_lossy();
            name.starts_with(&format!("{chapter}-")) && name.ends_with(".md")
        })
        .collect();
    pages.sort();
    pages
}

/// The lines of `text` between `ANCHOR: name` and `ANCHOR_END: name`, or all of it for
/// `None`, or a line range `a:b` (1-based, either end open).
fn select(text: &str, selector: Option<&str>) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let Some(selector) = selector else {
        return text.to_string();
    };
    let numbers: Vec<&str> = selector.split(':').collect();
    if numbers
        .iter()
        .all(|n| n.is_empty() || n.parse::<usize>().is_ok())
    {
        let start = numbers[0].parse::<usize>().unwrap_or(1).max(1) - 1;
        let end = numbers
            .get(1)
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(if numbers.len() == 1 {
                start + 1
            } else {
                lines.len()
            })
            .min(lines.len());
        return lines[start.min(end)..end].join("\n");
    }
    let (open, close) = (
        format!("ANCHOR: {selector}"),
        format!("ANCHOR_END: {selector}"),
    );
    let mut inside = false;
    let mut body = Vec::new();
    for line in lines {
        if line.contains(&close) {
            break;
        }
        if inside && !line.contains("ANCHOR") {
            body.push(line);
        }
        if line.trim_end().ends_with(&open) || line.contains(&format!("{open} ")) {
            inside = true;
        }
    }
    body.join("\n")
}

/// The page's own text (without its include lines) and every include it makes: `(path as
/// written, selected text)`.
fn split_page(page: &Path) -> (String, Vec<(String, String)>) {
    let text = fs::read_to_string(page).expect("page is readable");
    let mut own = String::new();
    let mut included = Vec::new();
    for line in text.lines() {
        let mut rest = line;
        let mut kept = String::new();
        while let Some(start) = rest.find("{{#include ") {
            kept.push_str(&rest[..start]);
            let after = &rest[start + "{{#include ".len()..];
            let end = after.find("}}").expect("an include ends with }}");
            let argument = after[..end].trim();
            let (path, selector) = match argument.split_once(':') {
                Some((path, selector)) => (path, Some(selector)),
                None => (argument, None),
            };
            let file = page.parent().expect("book/src").join(path);
            let content = fs::read_to_string(&file).unwrap_or_else(|_| {
                panic!("{}: {path} is not readable", page.display())
            });
            included.push((path.to_string(), select(&content, selector)));
            rest = &after[end + 2..];
        }
        kept.push_str(rest);
        own.push_str(&kept);
        own.push('\n');
    }
    (own, included)
}

/// A word of seven or more hexadecimal digits with both a digit and a letter: a commit.
fn has_commit_hash(sentence: &str) -> bool {
    sentence
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|word| {
            word.len() >= 7
                && word.len() <= 40
                && word
                    .chars()
                    .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
                && word.chars().any(|c| c.is_ascii_digit())
                && word.chars().any(|c| c.is_ascii_alphabetic())
        })
}

/// The sentences of `prose` that speak of the machine.
fn machine_sentences(prose: &str) -> Vec<String> {
    let flat = prose.split_whitespace().collect::<Vec<_>>().join(" ");
    flat.split_inclusive(['.', '?', '!'])
        .filter(|sentence| {
            MACHINE_WORDS.iter().any(|word| {
                sentence.match_indices(word).any(|(i, _)| {
                    // Whole words only ("ulp" is not "sculpt"); "AVX" also as "AVX2".
                    let before = sentence[..i].chars().next_back();
                    let after = sentence[i + word.len()..].chars().next();
                    !before.is_some_and(|c| c.is_ascii_alphabetic())
                        && (word.ends_with(' ')
                            || *word == "AVX"
                            || !after
                                .is_some_and(|c| c.is_ascii_alphabetic() && c != 's'))
                })
            }) || has_commit_hash(sentence)
        })
        .map(|s| s.trim().chars().take(120).collect())
        .collect()
}

/// What is wrong with the pages of `chapter`, one line each.
fn problems_of(chapter: &str) -> Vec<String> {
    let pages = chapter_pages(chapter);
    let mut problems = Vec::new();
    if pages.is_empty() {
        problems.push(format!("{chapter}: no page in book/src"));
    }
    let mut sentences = Vec::new();
    for page in &pages {
        let name = page
            .file_name()
            .expect("name")
            .to_string_lossy()
            .to_string();
        let (own, included) = split_page(page);
        sentences.extend(machine_sentences(&own));
        for (path, text) in &included {
            if path.ends_with(".rs") {
                for helper in ORDER_HELPERS {
                    if text.contains(helper) {
                        problems.push(format!(
                            "{name}: the listing {path} calls `{helper}`; show the formula \
                             and keep PyTorch's order beside it (a pytorch_order module)"
                        ));
                    }
                }
            } else if path.ends_with(".md") {
                sentences.extend(machine_sentences(text));
            }
        }
    }
    if sentences.len() > 1 {
        problems.push(format!(
            "{chapter}: {} sentences speak of the machine (at most one, pointing to the \
             appendix): {sentences:#?}",
            sentences.len()
        ));
    }
    problems
}

#[test]
fn chapter_listings_are_formulas_and_the_prose_speaks_of_attention() {
    let chapters = chapters();
    assert!(chapters.len() >= 14, "found only the chapters {chapters:?}");
    let problems: Vec<String> =
        chapters.iter().flat_map(|c| problems_of(c)).collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_check_sees_what_it_looks_for() {
    assert_eq!(
        machine_sentences("MKL adds them. Attention adds them.").len(),
        1
    );
    assert_eq!(machine_sentences("Within 2 ulps. A sculpture.").len(), 1);
    assert_eq!(machine_sentences("With AVX2 lanes. On AMD.").len(), 2);
    assert_eq!(machine_sentences("Measured at commit 9c5e1f0.").len(), 1);
    assert_eq!(
        machine_sentences("The embedding of 1234567 tokens.").len(),
        0
    );
    let anchored = "a\n// ANCHOR: f\nx.mul_add(y, z)\n// ANCHOR_END: f\nb";
    assert_eq!(select(anchored, Some("f")), "x.mul_add(y, z)");
    assert_eq!(select("1\n2\n3\n4", Some("2:3")), "2\n3");
    assert_eq!(select("1\n2\n3\n4", Some("3:")), "3\n4");
}
