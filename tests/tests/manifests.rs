//! Every chapter's manifest, `chapters/chNN-slug/chapter.toml`, against the chapter itself:
//! the scripts, the output tests and the book's checks trust it, so a key that says one
//! thing while the chapter does another fails here, with the key and the evidence.

use std::path::{Path, PathBuf};

use course::manifest::{Manifest, PageRun, Widget};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every chapter folder with its name, in order.
fn chapters() -> Vec<(String, PathBuf)> {
    let mut dirs: Vec<(String, PathBuf)> = std::fs::read_dir(root().join("chapters"))
        .expect("chapters/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|p| (p.file_name().unwrap().to_string_lossy().to_string(), p))
        .collect();
    dirs.sort();
    dirs
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Whether any `.rs` file under `dir` contains `needle`.
fn any_source_contains(dir: &Path, needle: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let path = e.path();
        if path.is_dir() {
            any_source_contains(&path, needle)
        } else {
            path.extension().is_some_and(|x| x == "rs")
                && read(&path).contains(needle)
        }
    })
}

#[test]
fn every_chapter_has_a_manifest_that_matches_it() {
    let widget_packages = read(&root().join("book/widgets/src/chapters.rs"));
    let seeds_folder = root().join(course::narrative::SEEDS_FOLDER);
    let mut problems = Vec::new();
    for (name, dir) in chapters() {
        let manifest = match Manifest::read(&dir) {
            Ok(manifest) => manifest,
            Err(e) => {
                problems.push(e);
                continue;
            }
        };
        let mut check = |holds: bool, key: &str, evidence: String| {
            if !holds {
                problems.push(format!("{name}/chapter.toml: {key}: {evidence}"));
            }
        };

        let wgpu = read(&dir.join("Cargo.toml")).contains("\nwgpu");
        check(
            manifest.needs_gpu == wgpu,
            "needs_gpu",
            format!(
                "{}, but its Cargo.toml depends on wgpu: {wgpu}",
                manifest.needs_gpu
            ),
        );
        // A test that reads the model asks for it through `model_for_tests`, which fails
        // without it under ATTN_REQUIRE_MODEL.
        let model = any_source_contains(&dir.join("tests"), "ATTN_REQUIRE_MODEL")
            || any_source_contains(&dir.join("tests"), "model_for_tests");
        check(
            manifest.needs_model == model,
            "needs_model",
            format!(
                "{}, but its tests read the model (ATTN_REQUIRE_MODEL): {model}",
                manifest.needs_model
            ),
        );

        let data = any_source_contains(&dir.join("tests"), "ATTN_REQUIRE_DATA");
        check(
            manifest.needs_data == data,
            "needs_data",
            format!(
                "{}, but its tests read the downloaded text (ATTN_REQUIRE_DATA): {data}",
                manifest.needs_data
            ),
        );

        let page = read(&root().join("book/src").join(format!("{name}.md")));
        let run_panel = page.contains("class=\"run-chapter\"");
        let in_module = widget_packages.contains(&format!("\"{name}\")"));
        let saved = page
            .split("data-saved-seed=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .and_then(|seed| seed.parse::<u64>().ok());
        let page_run = match (run_panel, saved) {
            (false, _) => PageRun::None,
            (true, None) => PageRun::AnySeed,
            (true, Some(seed)) => PageRun::Saved(seed),
        };
        check(
            manifest.page_run == page_run,
            "page_run",
            format!("{:?}, but its page shows {page_run:?}", manifest.page_run),
        );
        check(
            in_module == (manifest.page_run != PageRun::None),
            "page_run",
            format!(
                "{:?}, but book/widgets/src/chapters.rs lists it: {in_module}",
                manifest.page_run
            ),
        );

        let widget = [
            ("attention-widget", Widget::Heatmap),
            ("block-widget", Widget::Block),
            ("gpu-widget", Widget::Gpu),
        ]
        .into_iter()
        .find(|(class, _)| page.contains(&format!("class=\"{class}\"")))
        .map_or(Widget::None, |(_, widget)| widget);
        check(
            manifest.widget == widget,
            "widget",
            format!("{:?}, but its page has {widget:?}", manifest.widget),
        );

        let mut files: Vec<u64> = std::fs::read_dir(&seeds_folder)
            .expect("reference/expected/seeds")
            .flatten()
            .filter_map(|e| {
                let file = e.file_name().to_string_lossy().to_string();
                let seed = file.strip_prefix(&format!("{name}.seed-"))?;
                seed.strip_suffix(".txt")?.parse::<u64>().ok()
            })
            .collect();
        files.sort_unstable();
        let mut listed = manifest.seeds.clone();
        listed.sort_unstable();
        check(
            listed == files,
            "seeds",
            format!(
                "{:?}, but reference/expected/seeds holds {files:?} \
                 (reference/regenerate.sh writes them)",
                manifest.seeds
            ),
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The shell and Node readers of the manifests (scripts/chapters.sh, scripts/chapters.mjs)
/// read a key only on a line of its own, `key = value`: hold every manifest to that form.
#[test]
fn every_manifest_keeps_one_key_a_line() {
    let keys = [
        "needs_model",
        "needs_data",
        "needs_gpu",
        "libtorch",
        "page_run",
        "widget",
        "seeds",
    ];
    for (name, dir) in chapters() {
        let text = read(&dir.join(course::manifest::FILE));
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .collect();
        for key in keys {
            let found = lines.iter().filter(|l| l.starts_with(&format!("{key} = ")));
            assert_eq!(
                found.count(),
                1,
                "{name}/chapter.toml: `{key} = ` on one line"
            );
        }
        assert_eq!(
            lines.len(),
            keys.len(),
            "{name}/chapter.toml: one key a line"
        );
    }
}
