//! The layout the chapters keep, checked on the source files so that it cannot drift back:
//!
//! - a narrative only prints: no package imports anything from another package's
//!   `narrative` module but its entry point `narrative::narrative`;
//! - an exercise stub holds only what the learner writes: no `struct`, no `enum`, no
//!   `#[allow`;
//! - shapes without casts: at most 5 `as i64` in the chapters' sources and stubs together;
//! - benchmarks share code through a crate, never through `#[path]`;
//! - the speed work lives in `perf/`: no chapter has a `benches/` folder, and no module of a
//!   chapter's `src/` is named after how it computes (`*_fast`, `*_fused`);
//! - no import cycle among the modules of one crate.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return files;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `text` without its `//` comments (doc comments included), line for line.
fn code(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The chapter folders, e.g. `chapters/ch05-causal`.
fn chapters() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("chapters"))
        .expect("chapters/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// The paths each identifier-path `prefix::a::b` continues with in `text`, one per use:
/// `prefix::{a, b::c}` gives `a` and `b::c`.
fn paths_after(text: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        out.extend(path_at(rest));
    }
    out
}

/// The paths at the start of `text`, the rest of a path after its prefix: `a::b` gives
/// `a::b`, `{a, b::{c, d}}` gives `a`, `b::c` and `b::d`.
fn path_at(text: &str) -> Vec<String> {
    if let Some(group) = text.strip_prefix('{') {
        let end = matching_brace(group);
        return split_group(&group[..end]);
    }
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(text.len());
    vec![text[..end].trim_end_matches(':').to_string()]
}

/// The index of the `}` that closes a group whose `{` came just before `text`.
fn matching_brace(text: &str) -> usize {
    let mut depth = 0;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return i,
            '}' => depth -= 1,
            _ => {}
        }
    }
    text.len()
}

/// `a, b::{c, d}, e as f` as the paths `a`, `b::c`, `b::d`, `e`.
fn split_group(group: &str) -> Vec<String> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&group[start..]);
    let mut paths = Vec::new();
    for item in items.into_iter().map(str::trim).filter(|s| !s.is_empty()) {
        let item = item.split(" as ").next().unwrap_or(item).trim();
        match item.split_once("::{") {
            Some((head, tail)) => {
                let tail = tail.strip_suffix('}').unwrap_or(tail);
                paths.extend(
                    split_group(tail)
                        .into_iter()
                        .map(|p| format!("{head}::{p}")),
                );
            }
            None => paths.push(item.to_string()),
        }
    }
    paths
}

#[test]
fn only_a_narratives_entry_point_is_used_by_other_packages() {
    let crates: Vec<String> = chapters()
        .iter()
        .map(|d| d.file_name().unwrap().to_string_lossy().replace('-', "_"))
        .collect();
    let mut found = Vec::new();
    for dir in [
        "chapters", "book", "tests", "course", "learn", "perf", "shared",
    ] {
        for file in rust_files(&root().join(dir)) {
            let text = code(&read(&file));
            let relative = file.strip_prefix(root()).unwrap_or(&file).to_path_buf();
            let own = relative
                .components()
                .nth(1)
                .map(|c| c.as_os_str().to_string_lossy().replace('-', "_"));
            for krate in &crates {
                if relative.starts_with("chapters")
                    && own.as_deref() == Some(krate.as_str())
                {
                    continue;
                }
                for path in paths_after(&text, &format!("{krate}::narrative::")) {
                    if path != "narrative" {
                        found.push(format!(
                            "{}: {krate}::narrative::{path}",
                            relative.display()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "only narrative::narrative may be imported from another package's narrative; \
         move these to a concept module (e.g. src/setup.rs):\n{}",
        found.join("\n")
    );
}

#[test]
fn stubs_hold_only_what_the_learner_writes() {
    let mut found = Vec::new();
    for chapter in chapters() {
        for stub in rust_files(&chapter.join("exercises")) {
            let text = code(&read(&stub));
            for (n, line) in text.lines().enumerate() {
                let line = line.trim_start();
                let words: Vec<&str> = line.split_whitespace().collect();
                let declares = |kind: &str| {
                    words.first() == Some(&kind)
                        || (words.first().is_some_and(|w| w.starts_with("pub"))
                            && words.get(1) == Some(&kind))
                };
                if declares("struct")
                    || declares("enum")
                    || line.starts_with("#[allow")
                {
                    let relative = stub.strip_prefix(root()).unwrap_or(&stub);
                    found.push(format!("{}:{}: {line}", relative.display(), n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "a stub holds only the learner's functions; types go to the concept module (ch13's \
         src/<type>/mod.rs layout), and a stub needs no #[allow]:\n{}",
        found.join("\n")
    );
}

#[test]
fn shapes_and_indices_need_no_casts() {
    let mut found = Vec::new();
    for chapter in chapters() {
        for dir in ["src", "exercises"] {
            for file in rust_files(&chapter.join(dir)) {
                for (n, line) in code(&read(&file)).lines().enumerate() {
                    for _ in line.matches("as i64") {
                        let relative = file.strip_prefix(root()).unwrap_or(&file);
                        found.push(format!(
                            "{}:{}: {}",
                            relative.display(),
                            n + 1,
                            line.trim()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        found.len() <= 5,
        "{} `as i64` in the chapters' sources and stubs, at most 5 (select, get, narrow and \
         randint take a usize, arange counts with one, flatten merges dims):\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn benchmarks_share_code_through_a_crate() {
    let mut found = Vec::new();
    for file in rust_files(&root().join("perf/benches")) {
        for (n, line) in code(&read(&file)).lines().enumerate() {
            if line.trim_start().starts_with("#[path") {
                let relative = file.strip_prefix(root()).unwrap_or(&file);
                found.push(format!(
                    "{}:{}: {}",
                    relative.display(),
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a bench takes shared code from the perf crate's library, not a file by \
         #[path]:\n{}",
        found.join("\n")
    );
}

/// Whether a module's file or folder `name` says how it computes rather than what it
/// computes: `*_fast` or `*_fused`.
fn named_after_speed(name: &str) -> bool {
    let stem = name.strip_suffix(".rs").unwrap_or(name);
    stem.ends_with("_fast") || stem.ends_with("_fused")
}

/// Every file and folder under `dir`, recursively.
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(entries(&path));
        }
        found.push(path);
    }
    found
}

#[test]
fn the_speed_work_lives_in_perf() {
    let mut found = Vec::new();
    for chapter in chapters() {
        let relative =
            |p: &Path| p.strip_prefix(root()).unwrap_or(p).display().to_string();
        if chapter.join("benches").exists() {
            found.push(format!("{}: a benches/ folder", relative(&chapter)));
        }
        for path in entries(&chapter.join("src")) {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if named_after_speed(&name) {
                found.push(format!(
                    "{}: a module named after a speed-up",
                    relative(&path)
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a chapter holds its listing; a faster version of it, its benchmarks and speed \
         examples go to perf/ (numbered after the listing, tested against it):\n{}",
        found.join("\n")
    );
}

/// A crate's modules, by path (`ops::views`), and the modules each one names with
/// `crate::...`, `super::...` or `self::...` (see [`relative_paths`]), a module's own
/// children and parents left out.
fn module_graph(src: &Path) -> BTreeMap<String, Vec<String>> {
    let mut modules: BTreeMap<String, PathBuf> = BTreeMap::new();
    for file in rust_files(src) {
        let relative = file.strip_prefix(src).expect("under src");
        if relative.starts_with("bin") {
            continue;
        }
        let mut parts: Vec<String> = relative
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if matches!(
            parts.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            parts.pop();
        }
        modules.insert(parts.join("::"), file);
    }
    let resolve = |path: &str| -> Option<String> {
        let parts: Vec<&str> = path.split("::").collect();
        (1..=parts.len())
            .rev()
            .map(|k| parts[..k].join("::"))
            .find(|candidate| modules.contains_key(candidate))
    };
    let related = |a: &str, b: &str| {
        a.is_empty()
            || b.is_empty()
            || a == b
            || a.starts_with(&format!("{b}::"))
            || b.starts_with(&format!("{a}::"))
    };
    let mut graph = BTreeMap::new();
    for (module, file) in &modules {
        let text = code(&read(file));
        let mut edges: Vec<String> = paths_after(&text, "crate::")
            .into_iter()
            .chain(relative_paths(module, &text))
            .filter_map(|p| resolve(&p))
            .filter(|target| !related(module, target))
            .collect();
        edges.sort();
        edges.dedup();
        graph.insert(module.clone(), edges);
    }
    graph
}

/// The paths that `text`, the file of module `module` (`kernels::matmul`), names with
/// `super::` or `self::`, written from the crate root: `super::` is the module around the
/// one it is written in. An inline `mod name { ... }` is a module inside the file's, so a
/// test module's `use super::*` names the file's own module, and its
/// `super::super::row_dots` a sibling of the file's. Test modules count: their code is
/// the module's code, and a cycle through a test still makes each file need the other.
fn relative_paths(module: &str, text: &str) -> Vec<String> {
    let file = module.split("::").filter(|p| !p.is_empty());
    let mut paths = Vec::new();
    for (at, inline) in inline_modules(text) {
        let mut base: Vec<&str> = file.clone().chain(inline).collect();
        let mut tail = &text[at..];
        if let Some(after) = tail.strip_prefix("self::") {
            tail = after;
        }
        while let Some(after) = tail.strip_prefix("super::") {
            if base.pop().is_none() {
                break; // past the crate root: not a path this check can follow
            }
            tail = after;
        }
        for path in path_at(tail) {
            let mut full = base.clone();
            full.extend(path.split("::").filter(|p| !p.is_empty() && *p != "*"));
            paths.push(full.join("::"));
        }
    }
    paths
}

/// Where each `super::` or `self::` path starts in `text` (not a `super::` that continues
/// another), with the inline modules (`mod tests {`) it sits in, outermost first. Braces
/// are counted to find where an inline module ends; a `'{'` or `'}'` character is not a
/// brace.
fn inline_modules(text: &str) -> Vec<(usize, Vec<&str>)> {
    let mut found = Vec::new();
    let mut open: Vec<(&str, usize)> = Vec::new(); // inline module, depth inside it
    let mut depth = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let before = text[..i].chars().next_back();
        let joined =
            before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':');
        if rest.starts_with("'{'") || rest.starts_with("'}'") {
            i += 3;
            continue;
        }
        match bytes[i] {
            b'{' => depth += 1,
            b'}' => {
                if open.last().is_some_and(|&(_, d)| d == depth) {
                    open.pop();
                }
                depth -= 1;
            }
            _ if joined => {}
            _ if rest.starts_with("super::") || rest.starts_with("self::") => {
                found.push((i, open.iter().map(|&(name, _)| name).collect()));
                // skip `self::` or the chain `super::super::`, so that only its start counts
                i += rest.find("::").map_or(0, |e| e + 2);
                while text[i..].starts_with("super::") {
                    i += "super::".len();
                }
                continue;
            }
            _ if rest.starts_with("mod ") => {
                let name_end = rest[4..]
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .map_or(rest.len(), |e| e + 4);
                if rest[name_end..].trim_start().starts_with('{') {
                    open.push((&rest[4..name_end], depth + 1));
                }
            }
            _ => {}
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    found
}

/// The groups of modules that reach each other (Tarjan's strongly connected components of
/// more than one module).
fn cycles(graph: &BTreeMap<String, Vec<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a BTreeMap<String, Vec<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        for w in &s.graph[v] {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.stack.contains(&w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.found
}

#[test]
fn no_crate_has_an_import_cycle() {
    let mut sources: Vec<PathBuf> = [
        "shared",
        "course",
        "learn",
        "tests",
        "perf",
        "book/widgets",
        "book/figures",
    ]
    .iter()
    .map(|d| root().join(d).join("src"))
    .collect();
    sources.extend(chapters().iter().map(|c| c.join("src")));
    let mut found = Vec::new();
    for src in sources.iter().filter(|s| s.is_dir()) {
        for cycle in cycles(&module_graph(src)) {
            let relative = src.strip_prefix(root()).unwrap_or(src);
            found.push(format!("{}: {}", relative.display(), cycle.join(" <-> ")));
        }
    }
    assert!(
        found.is_empty(),
        "modules that import each other, directly or around a loop:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checks_find_what_they_look_for() {
    assert_eq!(
        paths_after(
            "use ch14::narrative::{CONFIG, narrative};\nx = ch14::narrative::N_NEW;",
            "ch14::narrative::"
        ),
        ["CONFIG", "narrative", "N_NEW"]
    );
    assert_eq!(
        paths_after("use crate::{a::{b, c}, d as e};", "crate::"),
        ["a::b", "a::c", "d"]
    );
    let graph: BTreeMap<String, Vec<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(cycles(&graph), [["a", "b", "c"]]);
    assert!(named_after_speed("kernel_fast.rs") && named_after_speed("kernel_fused"));
    assert!(!named_after_speed("kernel.rs") && !named_after_speed("fast_path.rs"));
}

#[test]
fn super_paths_are_followed_from_the_module_they_are_written_in() {
    let text = "use super::{gemm::Isa, row_dots};\nconst OPEN: char = '{';\n\
                mod tests {\n    use super::*;\n    use super::super::row_dots::tests::bits;\n}\n\
                use self::inner::f;";
    assert_eq!(
        relative_paths("kernels::matmul", text),
        [
            "kernels::gemm::Isa",
            "kernels::row_dots",
            "kernels::matmul",
            "kernels::row_dots::tests::bits",
            "kernels::matmul::inner::f",
        ]
    );
}

/// A crate written to a temporary folder, with a cycle that only `super::` paths make, one
/// of them in a test module: the check finds it, and finds nothing once the test's import
/// is gone.
#[test]
fn a_cycle_through_super_paths_fails_the_check() {
    let src = Path::new(env!("CARGO_TARGET_TMPDIR")).join("layout-cycle/src");
    let write = |files: &[(&str, &str)]| {
        let _ = std::fs::remove_dir_all(&src);
        std::fs::create_dir_all(src.join("kernels")).expect("a temporary folder");
        for (file, text) in files {
            std::fs::write(src.join(file), text).expect("a fixture file");
        }
    };
    let crate_files = |test_import: &str| {
        [
            ("lib.rs", "mod kernels;\n".to_string()),
            (
                "kernels/mod.rs",
                "mod gemm;\nmod matmul;\nmod row_dots;\n".into(),
            ),
            (
                "kernels/matmul.rs",
                "use super::gemm::gemm;\npub fn fused() {}\n".into(),
            ),
            ("kernels/row_dots.rs", "use super::matmul::fused;\n".into()),
            (
                "kernels/gemm.rs",
                format!(
                    "pub fn gemm() {{}}\nconst OPEN: char = '{{';\n\
                     #[cfg(test)]\nmod tests {{\n    use super::*;\n    {test_import}\n}}\n"
                ),
            ),
        ]
    };
    let files = crate_files("use super::super::matmul::fused;");
    write(&files.each_ref().map(|(f, t)| (*f, t.as_str())));
    assert_eq!(
        cycles(&module_graph(&src)),
        [["kernels::gemm", "kernels::matmul"]]
    );
    let files = crate_files("");
    write(&files.each_ref().map(|(f, t)| (*f, t.as_str())));
    assert!(cycles(&module_graph(&src)).is_empty());
}
