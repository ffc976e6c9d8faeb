//! `learn watch`: one exercise at a time. Runs its tests, shows the verdict, and waits for
//! either a save of the exercise's file (then runs them again) or a command typed as a line:
//! `h` the next hint, `n` the next exercise, `q` quit. When the tests pass it moves on by
//! itself.
//!
//! Commands are read as whole lines, so this works the same in a terminal and with stdin and
//! stdout piped (a script, CI); the end of stdin quits.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher};

use crate::course_map::Exercise;
use crate::runner;

/// An editor's save can come as several events (write, truncate, rename): wait until the
/// file has been quiet this long before running the tests.
const DEBOUNCE: Duration = Duration::from_millis(200);

/// What the loop waits for.
enum Event {
    /// A line typed on stdin (trimmed).
    Line(String),
    /// stdin was closed.
    EndOfInput,
    /// A file in a watched folder was written.
    Saved(PathBuf),
}

/// The events, and one held back while a save settled.
struct Events {
    receiver: Receiver<Event>,
    kept: Option<Event>,
}

impl Events {
    /// The next event; `None` once every sender is gone.
    fn next(&mut self) -> Option<Event> {
        self.kept.take().or_else(|| self.receiver.recv().ok())
    }
}

/// What to do after waiting.
enum Next {
    RunAgain,
    MoveOn,
    Quit,
}

/// Runs the loop from exercise `start`, or from the first exercise not done.
pub fn watch(
    root: &Path,
    exercises: &[Exercise],
    start: Option<usize>,
) -> Result<(), String> {
    let (sender, receiver) = channel();
    let mut events = Events {
        receiver,
        kept: None,
    };
    read_lines(sender.clone());
    let mut watcher =
        notify::recommended_watcher(move |result: notify::Result<notify::Event>| {
            let Ok(event) = result else { return };
            // Reading a file, or only touching its metadata, is not a save.
            if matches!(event.kind, EventKind::Modify(_) | EventKind::Create(_)) {
                for path in event.paths {
                    // The loop may be gone (quitting): nothing left to tell.
                    let _ = sender.send(Event::Saved(path));
                }
            }
        })
        .map_err(|e| format!("cannot watch files: {e}"))?;

    let mut current = match start {
        Some(index) => index,
        None => match first_undone(root, exercises)? {
            Some(index) => index,
            None => {
                println!("All done: every exercise passes its tests.");
                return Ok(());
            }
        },
    };
    let mut watched: Option<PathBuf> = None;
    let mut tier = 0;
    while current < exercises.len() {
        let exercise = &exercises[current];
        // Watch the folder, not the file: many editors save by writing a new file and
        // renaming it over the old one, which a watch on the old file would miss.
        let folder = crate::stub_path(root, exercise)
            .parent()
            .expect("a stub lives in exercises/")
            .to_path_buf();
        if watched.as_ref() != Some(&folder) {
            if let Some(old) = watched.take() {
                let _ = watcher.unwatch(&old);
            }
            watcher
                .watch(&folder, RecursiveMode::NonRecursive)
                .map_err(|e| format!("cannot watch {}: {e}", folder.display()))?;
            watched = Some(folder);
        }

        println!(
            "\n== {exercise} (exercise {} of {}) ==",
            current + 1,
            exercises.len()
        );
        println!("Running its tests…");
        let verdict = runner::check(root, exercise)?;
        println!("{}", verdict.to_string().trim_end());
        if verdict.passed() {
            println!("Well done! On to the next exercise.");
            current += 1;
            tier = 0;
            continue;
        }
        println!(
            "\nEdit {} and save it to run the tests again.",
            exercise.stub.display()
        );
        println!("Type a command and Enter: h hint, n next exercise, q quit.");
        match wait(&mut events, exercise, root, &mut tier) {
            Next::RunAgain => {}
            Next::MoveOn => {
                current += 1;
                tier = 0;
            }
            Next::Quit => return Ok(()),
        }
    }
    println!("\nThat was the last exercise of the course.");
    Ok(())
}

/// Runs chapter after chapter until one has an exercise not done; its index.
fn first_undone(
    root: &Path,
    exercises: &[Exercise],
) -> Result<Option<usize>, String> {
    println!("Looking for the first exercise not done yet…");
    let verdicts = runner::check_all(root, exercises, true, |chapter, verdicts| {
        let done = verdicts.iter().filter(|(_, v)| v.passed()).count();
        println!("  {chapter}: {done}/{} done", verdicts.len());
    })?;
    Ok(verdicts
        .iter()
        .find(|(_, v)| !v.passed())
        .map(|(index, _)| *index))
}

/// Waits for a save of the exercise's file or a command, showing hints as they are asked.
fn wait(
    events: &mut Events,
    exercise: &Exercise,
    root: &Path,
    tier: &mut usize,
) -> Next {
    let stub = crate::stub_path(root, exercise);
    loop {
        let Some(event) = events.next() else {
            return Next::Quit;
        };
        match event {
            Event::Saved(path) if same_file(&path, &stub) => {
                settle(events);
                return Next::RunAgain;
            }
            Event::Saved(_) => {}
            Event::EndOfInput => return Next::Quit,
            Event::Line(line) => match line.as_str() {
                "q" | "quit" => return Next::Quit,
                "n" | "next" => return Next::MoveOn,
                "" | "r" | "run" => return Next::RunAgain,
                "h" | "hint" => {
                    match exercise.hints.get(*tier) {
                        Some(_) => {
                            *tier += 1;
                            match crate::hint(exercise, *tier) {
                                Ok(text) => println!("\n{text}\n"),
                                Err(error) => println!("{error}"),
                            }
                        }
                        None => {
                            println!("That was the last hint ({} of them).", *tier)
                        }
                    }
                    println!(
                        "Type a command and Enter: h hint, n next exercise, q quit."
                    );
                }
                other => println!(
                    "Unknown command {other:?}: h hint, n next exercise, q quit."
                ),
            },
        }
    }
}

/// Waits until no save has come for [`DEBOUNCE`]. A command typed meanwhile is kept for
/// after the tests.
fn settle(events: &mut Events) {
    loop {
        match events.receiver.recv_timeout(DEBOUNCE) {
            Ok(Event::Saved(_)) => continue,
            Ok(other) => {
                events.kept = Some(other);
                return;
            }
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// Whether a path from the watcher is the exercise's file (the folder is the one watched,
/// so the name tells).
fn same_file(path: &Path, stub: &Path) -> bool {
    path.file_name() == stub.file_name()
}

/// Sends every line of stdin, then the end of input, from a thread of its own.
fn read_lines(sender: Sender<Event>) {
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if sender.send(Event::Line(line.trim().to_string())).is_err() {
                return;
            }
        }
        let _ = sender.send(Event::EndOfInput);
    });
}
