//! The chapter binary's command line: the story, `--heatmaps`, `--device` and `doctor`
//! (the exercises and their hints are `learn`'s).

use std::process::Command;

fn run(args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_ch05-causal"))
        .args(args)
        .env_remove("SHARED_DEVICE")
        .output()
        .expect("the chapter binary runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn prints_the_chapter_on_our_cpu_by_default() {
    let (ok, out, _) = run(&[]);
    assert!(ok);
    assert_eq!(
        out,
        include_str!("../../../reference/expected/ch05-causal.txt")
    );
    let (ok, same, _) = run(&["--device", "cpu"]);
    assert!(ok);
    assert_eq!(same, out);
}

#[test]
fn heatmaps_follow_the_steps_that_compute_weights() {
    let (ok, out, _) = run(&["--heatmaps"]);
    assert!(ok);
    let plain = include_str!("../../../reference/expected/ch05-causal.txt");
    assert_ne!(out, plain);
    // Without a terminal (the test captures stdout) the heatmaps have no colour.
    assert!(!out.contains('\x1b'));
    let causal = "\ncausal weights\n\
                  \x20        Your   journey starts   with     one    step\n\
                  Your    ██1.00       0       0       0       0       0\n";
    assert!(out.contains(causal), "{out}");
    assert_eq!(out.matches("(blank = 0, ██ = ").count(), 5, "{out}");
    // The chapter's text, with each step's heatmaps after its lines.
    let story = ch05_causal::narrative::narrative(course::Seed::ARTICLES).unwrap();
    assert_eq!(story.to_string(), plain);
    assert_eq!(out, story.text_with_heatmaps(false));
}

#[test]
fn unknown_or_unavailable_devices_are_clear_errors() {
    let (ok, _, err) = run(&["--device", "gpu"]);
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "error: device: unknown device \"gpu\": expected cpu, torch-cpu, cuda or cuda:N"
    );
    // Whether the binary has the libtorch back-end is what `doctor` reports (the feature
    // can be switched on through `shared/tch` without this crate's own `tch` feature).
    let (ok, report, _) = run(&["doctor"]);
    assert!(ok);
    let (ok, out, err) = run(&["--device", "cuda"]);
    if report.contains("not compiled in") {
        assert!(!ok);
        assert!(err.contains("built without the `tch` feature"), "{err}");
    } else {
        assert!(report.contains("libtorch version: 2.13.0"), "{report}");
        if ok {
            assert!(out.starts_with("# Chapter 5"));
        } else {
            assert!(
                err.contains("needs a CUDA GPU, but libtorch sees none"),
                "{err}"
            );
        }
    }
}

#[test]
fn seed_replaces_every_seed_of_the_articles() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for (seed, pytorch) in course::narrative::seed_references(&root, "ch05-causal") {
        let (ok, out, err) = run(&["--seed", &seed.to_string()]);
        assert!(ok, "{err}");
        assert_eq!(out, pytorch, "--seed {seed}");
    }
    // A seed is what torch.manual_seed accepts: 0 to 2^64 - 1.
    let (ok, out, _) = run(&["--seed", "18446744073709551615"]);
    assert!(ok);
    assert!(out.contains("Dropout(0.5) after manual_seed(18446744073709551615)"));
    for bad in ["-1", "18446744073709551616", "seven"] {
        let (ok, _, err) = run(&[&format!("--seed={bad}")]);
        assert!(!ok);
        assert!(
            err.contains("invalid value") && err.contains("--seed"),
            "{err}"
        );
    }
}
