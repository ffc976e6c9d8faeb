//! The book (`book/src`) cannot drift from the code: it includes the chapters' code by
//! anchor and their output from the snapshot files the chapters' tests check. mdBook
//! itself only logs a missing file or anchor and builds the page anyway, so this test
//! checks every include:
//!
//! - every include in `book/src` resolves: the file exists, the anchor exists once, is
//!   closed and is not empty, a line range lies within the file;
//! - code (`.rs`) and hints (`.md`) are included only by anchor, GPU kernels (`.wgsl`) only
//!   whole, program output only from snapshot files (`.snap`), and only their body, never
//!   insta's header;
//! - every anchor in the chapters and in `perf/` is closed, and every page of `SUMMARY.md`
//!   exists;
//! - no included line of code or output is wider than the book's code column;
//! - every figure is up to date: each SVG in `book/src/figures` records the digest of the
//!   tensors it was drawn from, and the chapters (through `book-figures`) still compute
//!   the same tensors; every figure is used by a page and every figure used exists.
//!
//! The built HTML is checked for leftover include markers by `scripts/build-book.sh`.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// insta writes this many header lines (`---`, `source:`, `expression:`, `---`) before the
/// snapshot's body, so outputs are included with `FILE.snap:5:`.
const SNAPSHOT_HEADER_LINES: usize = 4;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// All files under `dir` whose name ends with `suffix`, sorted.
fn files_under(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().ends_with(suffix) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The book's pages.
fn pages() -> Vec<PathBuf> {
    let pages = files_under(&root().join("book/src"), ".md");
    assert!(!pages.is_empty(), "no pages in book/src");
    pages
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// One `{{#include ...}}` (or `rustdoc_include`) found in a page.
#[derive(Debug)]
struct Include {
    page: PathBuf,
    line: usize,
    directive: String,
    /// Everything after the directive, as written.
    argument: String,
    /// The path as written, relative to the page.
    target: String,
    /// What follows the path: `None`, an anchor name, or a line range.
    selector: Selector,
}

#[derive(Debug, PartialEq)]
enum Selector {
    Whole,
    Anchor(String),
    Lines(Option<usize>, Option<usize>),
    /// A single line number, mdBook's `FILE:N`.
    Line(usize),
}

/// Parses the argument of an include, as mdBook reads it: `path`, `path:anchor`,
/// `path:N`, `path:N:`, `path::M`, `path:N:M`.
fn parse_selector(argument: &str) -> Result<(String, Selector), String> {
    let parts: Vec<&str> = argument.trim().split(':').collect();
    let path = parts[0].trim().to_string();
    if path.is_empty() {
        return Err("no path".into());
    }
    let number = |s: &str| -> Result<Option<usize>, String> {
        if s.is_empty() {
            Ok(None)
        } else {
            s.parse::<usize>()
                .map(Some)
                .map_err(|_| format!("{s:?} is not a line number"))
        }
    };
    let selector = match parts.len() {
        1 => Selector::Whole,
        2 => match parts[1].parse::<usize>() {
            Ok(n) => Selector::Line(n),
            Err(_) if !parts[1].is_empty() => Selector::Anchor(parts[1].to_string()),
            Err(_) => return Err("empty selector after ':'".into()),
        },
        3 => Selector::Lines(number(parts[1])?, number(parts[2])?),
        _ => return Err("too many ':'".into()),
    };
    Ok((path, selector))
}

/// Every `{{#...}}` in every page; markers that are not includes are returned as errors.
fn includes(problems: &mut Vec<String>) -> Vec<Include> {
    let mut found = Vec::new();
    for page in pages() {
        let text = fs::read_to_string(&page).expect("page is readable");
        for (n, line) in text.lines().enumerate() {
            let mut offset = 0;
            while let Some(hit) = line[offset..].find("{{#") {
                let start = offset + hit;
                let at = format!("{}:{}", relative(&page), n + 1);
                let after = &line[start + 3..];
                let Some(end) = after.find("}}") else {
                    problems.push(format!("{at}: `{{{{#` without `}}}}`"));
                    break;
                };
                let body = &after[..end];
                offset = start + 3 + end + 2;
                if start > 0 && line.as_bytes()[start - 1] == b'\\' {
                    problems.push(format!(
                        "{at}: an escaped marker would print `{{{{#` in the book"
                    ));
                    continue;
                }
                let (directive, argument) =
                    body.split_once(char::is_whitespace).unwrap_or((body, ""));
                if directive != "include" && directive != "rustdoc_include" {
                    problems.push(format!("{at}: unexpected `{{{{#{directive}`"));
                    continue;
                }
                match parse_selector(argument) {
                    Ok((target, selector)) => found.push(Include {
                        page: page.clone(),
                        line: n + 1,
                        directive: directive.to_string(),
                        argument: argument.trim().to_string(),
                        target,
                        selector,
                    }),
                    Err(e) => problems.push(format!("{at}: `{body}`: {e}")),
                }
            }
        }
    }
    found
}

/// A line that opens or closes anchor `name` (mdBook's `ANCHOR: name` and
/// `ANCHOR_END: name`, whatever comment they are in).
fn anchor_tag<'a>(line: &'a str, tag: &str) -> Option<&'a str> {
    let at = line.find(tag)? + tag.len();
    let name = line[at..].trim_start();
    let end = name
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(name.len());
    Some(&name[..end])
}

fn is_anchor_line(line: &str) -> bool {
    line.contains("ANCHOR:") || line.contains("ANCHOR_END:")
}

/// The lines between `ANCHOR: name` and `ANCHOR_END: name`, without anchor lines, as
/// mdBook includes them; or why there are none.
fn anchor_body(text: &str, name: &str) -> Result<Vec<String>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let starts: Vec<usize> = (0..lines.len())
        .filter(|&i| anchor_tag(lines[i], "ANCHOR:") == Some(name))
        .collect();
    let ends: Vec<usize> = (0..lines.len())
        .filter(|&i| anchor_tag(lines[i], "ANCHOR_END:") == Some(name))
        .collect();
    match (starts.as_slice(), ends.as_slice()) {
        ([], _) => Err(format!("anchor {name:?} not found")),
        ([_], []) => Err(format!("anchor {name:?} is never closed (no ANCHOR_END)")),
        ([s], [e]) if e > s => {
            let body: Vec<String> = lines[s + 1..*e]
                .iter()
                .filter(|l| !is_anchor_line(l))
                .map(|l| l.to_string())
                .collect();
            if body.iter().all(|l| l.trim().is_empty()) {
                Err(format!("anchor {name:?} is empty"))
            } else {
                Ok(body)
            }
        }
        ([_], [_]) => Err(format!("anchor {name:?} ends before it starts")),
        _ => Err(format!(
            "anchor {name:?} is opened or closed more than once"
        )),
    }
}

/// Checks one include and returns the text it brings into the page.
fn resolve(include: &Include) -> Result<Vec<String>, String> {
    let dir = include.page.parent().expect("page has a folder");
    let path = dir.join(&include.target);
    let text = fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {} ({e})", include.target))?;
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let body = match (&include.selector, ext) {
        (Selector::Anchor(name), "rs" | "md") => anchor_body(&text, name)?,
        (_, "rs" | "md") => {
            return Err("code and hints are included by anchor only".into());
        }
        // A GPU kernel is shown whole, as the device compiles it (chapter 21).
        (Selector::Whole, "wgsl") => lines.clone(),
        (Selector::Lines(Some(start), None), "snap")
            if *start == SNAPSHOT_HEADER_LINES + 1 =>
        {
            let header = &lines[..SNAPSHOT_HEADER_LINES.min(lines.len())];
            let header_ok = header.len() == SNAPSHOT_HEADER_LINES
                && header[0] == "---"
                && header[1].starts_with("source: ")
                && header[2].starts_with("expression: ")
                && header[3] == "---";
            if !header_ok {
                return Err(format!(
                    "{} does not start with insta's {SNAPSHOT_HEADER_LINES}-line header",
                    include.target
                ));
            }
            lines[SNAPSHOT_HEADER_LINES..].to_vec()
        }
        (_, "snap") => {
            return Err(format!(
                "include a snapshot's body only: `{}:{}:`",
                include.target,
                SNAPSHOT_HEADER_LINES + 1
            ));
        }
        _ => return Err(format!("unexpected kind of file: {}", include.target)),
    };
    if ext == "snap" {
        let leaked = body.first().map(String::as_str) == Some("---")
            || body
                .iter()
                .any(|l| l.starts_with("source: ") || l.starts_with("expression: "));
        if leaked {
            return Err("the included output contains insta's header".into());
        }
    }
    if body.iter().all(|l| l.trim().is_empty()) {
        return Err("includes nothing".into());
    }
    Ok(body)
}

#[test]
fn every_include_resolves_to_code_hints_or_outputs() {
    let mut problems = Vec::new();
    let found = includes(&mut problems);
    assert!(
        found.len() > 50,
        "only {} includes found in book/src",
        found.len()
    );
    let mut snapshots = 0;
    for include in &found {
        match resolve(include) {
            Ok(_) => snapshots += usize::from(include.target.ends_with(".snap")),
            Err(e) => problems.push(format!(
                "{}:{}: {{{{#{} {}}}}}: {e}",
                relative(&include.page),
                include.line,
                include.directive,
                include.argument
            )),
        }
    }
    assert!(snapshots > 0, "the book includes no output");
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// The characters of monospace text that fit in one line of the book's code column
/// (mdBook's 750-pixel content column at the default font size, as measured by
/// `scripts/check-book-browser.mjs`). A longer line would be clipped or scroll sideways.
const CODE_COLUMN_CHARS: usize = 86;

/// `lines` without the leading spaces they all share (what `book/preprocessors/dedent-code.py`
/// does to every code block).
fn dedented(lines: &[String]) -> Vec<String> {
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches(' ').len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or("").to_string())
        .collect()
}

#[test]
fn every_included_code_and_output_line_fits_the_column() {
    let mut problems = Vec::new();
    for include in includes(&mut problems) {
        let is_code_or_output = [".rs", ".snap", ".wgsl"]
            .iter()
            .any(|e| include.target.ends_with(e));
        let Ok(body) = resolve(&include) else {
            continue; // reported by every_include_resolves_to_code_hints_or_outputs
        };
        if !is_code_or_output {
            continue;
        }
        for line in dedented(&body) {
            let width = line.chars().count();
            if width > CODE_COLUMN_CHARS {
                problems.push(format!(
                    "{}:{}: {} ({width} > {CODE_COLUMN_CHARS} characters): {}",
                    relative(&include.page),
                    include.line,
                    include.argument,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "lines wider than the book's code column (shorten them: name an intermediate \
         value, move a comment to its own line, or print a label on its own line):\n{}",
        problems.join("\n")
    );
}

#[test]
fn dedenting_removes_the_common_indentation_only() {
    let lines: Vec<String> = ["    fn f() {", "", "        x", "    }"]
        .map(String::from)
        .to_vec();
    assert_eq!(dedented(&lines), ["fn f() {", "", "    x", "}"]);
}
#[test]
fn line_ranges_are_checked() {
    // The selectors the book may use, and mdBook's meaning of each.
    assert_eq!(
        parse_selector("a.snap:5:").unwrap().1,
        Selector::Lines(Some(5), None)
    );
    assert_eq!(
        parse_selector("a.rs:forward").unwrap().1,
        Selector::Anchor("forward".into())
    );
    assert_eq!(parse_selector("a.rs:3").unwrap().1, Selector::Line(3));
    assert_eq!(parse_selector("a.rs").unwrap().1, Selector::Whole);
    assert!(parse_selector("a.rs:x:y").is_err());
}

#[test]
fn anchors_are_found_closed_and_non_empty() {
    let text = "a\n// ANCHOR: one\nbody\n// ANCHOR: inner\nmore\n// ANCHOR_END: inner\n// ANCHOR_END: one\n// ANCHOR: open\nx\n<!-- ANCHOR: empty -->\n<!-- ANCHOR_END: empty -->\n";
    assert_eq!(anchor_body(text, "one").unwrap(), ["body", "more"]);
    assert!(
        anchor_body(text, "open")
            .unwrap_err()
            .contains("never closed")
    );
    assert!(anchor_body(text, "empty").unwrap_err().contains("empty"));
    assert!(
        anchor_body(text, "missing")
            .unwrap_err()
            .contains("not found")
    );
    // `one` must not match `one_more`.
    assert!(
        anchor_body("// ANCHOR: one_more\nx\n// ANCHOR_END: one_more\n", "one")
            .is_err()
    );
}

#[test]
fn every_anchor_in_the_chapters_is_closed() {
    let mut problems = Vec::new();
    let chapters = root().join("chapters");
    let mut files = files_under(&chapters, ".rs");
    files.extend(files_under(&chapters, ".md"));
    // The appendix "Making it fast" includes the faster versions from perf/src.
    files.extend(files_under(&root().join("perf"), ".rs"));
    // The files a page may include from: a crate's sources and its exercises' hints (not
    // chapters/README.md, which explains the anchor syntax).
    let includable = |f: &PathBuf| {
        let f = relative(f);
        f.contains("/src/") || f.ends_with("/exercises/hints.md")
    };
    for file in files.into_iter().filter(includable) {
        let text = fs::read_to_string(&file).expect("readable");
        let names: BTreeSet<&str> = text
            .lines()
            .filter_map(|l| anchor_tag(l, "ANCHOR:"))
            .chain(text.lines().filter_map(|l| anchor_tag(l, "ANCHOR_END:")))
            .collect();
        for name in names {
            if let Err(e) = anchor_body(&text, name) {
                problems.push(format!("{}: {e}", relative(&file)));
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn every_page_of_the_summary_exists() {
    let src = root().join("book/src");
    let summary =
        fs::read_to_string(src.join("SUMMARY.md")).expect("book/src/SUMMARY.md");
    let mut missing = Vec::new();
    let mut linked = 0;
    for line in summary.lines() {
        if line.trim_start().starts_with("<!--") {
            continue; // a page still to come
        }
        let mut rest = line;
        while let Some(start) = rest.find("](") {
            let after = &rest[start + 2..];
            let end = after.find(')').unwrap_or(after.len());
            let target = &after[..end];
            if !target.is_empty() {
                linked += 1;
                if !src.join(target).is_file() {
                    missing.push(target.to_string());
                }
            }
            rest = &after[end..];
        }
    }
    assert!(linked >= 10, "SUMMARY.md links only {linked} pages");
    assert!(missing.is_empty(), "pages missing: {missing:?}");
}

#[test]
fn every_figure_is_up_to_date_and_used() {
    // The figures are drawn from our own CPU back-end's tensors; on libtorch
    // (`scripts/test-tch.sh`) the last bits may differ, so compute on ours here.
    shared::set_device(shared::Device::Cpu);
    let dir = root().join(book_figures::FIGURES_DIR);
    // Heatmaps, line charts and bar charts alike: a file name and the digest of what it shows.
    let heatmaps = book_figures::figures()
        .into_iter()
        .map(|f| (f.file_name(), f.digest()));
    let charts = book_figures::line_charts()
        .into_iter()
        .map(|c| (c.file_name(), c.digest()));
    let bars = book_figures::bar_charts()
        .into_iter()
        .map(|c| (c.file_name(), c.digest()));
    let figures: Vec<(String, String)> = heatmaps.chain(charts).chain(bars).collect();
    let mut problems = Vec::new();
    let mut names = BTreeSet::new();
    for (file, digest) in &figures {
        let file = file.clone();
        names.insert(file.clone());
        let path = dir.join(&file);
        let Ok(svg) = fs::read_to_string(&path) else {
            problems.push(format!(
                "{file}: missing (run: bash scripts/make-figures.sh)"
            ));
            continue;
        };
        match book_figures::recorded_digest(&svg) {
            Some(d) if d == digest => {}
            Some(d) => problems.push(format!(
                "{file}: stale, drawn from {d} but the chapters now give {digest} \
                 (run: bash scripts/make-figures.sh)"
            )),
            None => problems.push(format!("{file}: records no digest")),
        }
    }
    for svg in files_under(&dir, ".svg") {
        let name = svg.file_name().unwrap().to_string_lossy().to_string();
        if !names.contains(&name) {
            problems.push(format!("{name}: not drawn by book-figures (remove it)"));
        }
    }
    // Every figure is shown by some page, and every figure a page shows exists.
    let mut used = BTreeSet::new();
    for page in pages() {
        let text = fs::read_to_string(&page).expect("readable");
        for (i, _) in text.match_indices("figures/") {
            let rest = &text[i + "figures/".len()..];
            let end = rest
                .find(|c: char| {
                    !(c.is_alphanumeric() || c == '-' || c == '_' || c == '.')
                })
                .unwrap_or(rest.len());
            let name = &rest[..end];
            if name.ends_with(".svg") {
                if !names.contains(name) {
                    problems.push(format!(
                        "{}: shows missing figure {name}",
                        relative(&page)
                    ));
                }
                used.insert(name.to_string());
            }
        }
    }
    for name in names.difference(&used) {
        problems.push(format!("{name}: no page shows it"));
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}
