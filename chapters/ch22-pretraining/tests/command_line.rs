//! The command line's files refused before any training: a `--save` folder holding the
//! reader's files, a checkpoint cut short or missing on `--resume`. A clear error naming
//! the file, never a panic, nothing written. No data needed: the checks come first.

use std::path::PathBuf;
use std::process::{Command, Output};

fn chapter(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ch22-pretraining"))
        .args(args)
        .output()
        .expect("the chapter runs")
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("ch22-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a folder");
    dir
}

/// Fails with exit code 1 and a message, naming `names`, without a panic.
fn assert_refused(out: &Output, names: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for name in names {
        assert!(stderr.contains(name), "{name} not named: {stderr}");
    }
}

#[test]
fn save_refuses_a_folder_with_the_readers_files() {
    let dir = fresh_dir("save");
    std::fs::write(dir.join("notes.txt"), "mine").expect("written");
    let out = chapter(&["--save", dir.to_str().expect("a path")]);
    assert_refused(&out, &["notes.txt", "nothing was written"]);
    let left: Vec<_> = std::fs::read_dir(&dir).expect("the folder").collect();
    assert_eq!(left.len(), 1, "nothing written beside the notes");
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).expect("kept"),
        "mine"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn resume_refuses_a_checkpoint_cut_short_or_missing() {
    let dir = fresh_dir("resume");
    let arg = dir.to_str().expect("a path").to_string();
    assert_refused(&chapter(&["--resume", &arg]), &["checkpoint.safetensors"]);
    std::fs::write(
        dir.join("checkpoint.safetensors"),
        [1, 2, 3, 4, 5, 6, 7, 8, 9],
    )
    .expect("written");
    assert_refused(
        &chapter(&["--resume", &arg]),
        &["checkpoint.safetensors", "cut short"],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn resume_and_checkpoint_are_one_or_the_other() {
    let out = chapter(&["--resume", "a", "--checkpoint", "b"]);
    assert_eq!(out.status.code(), Some(2), "clap's usage error");
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
}
