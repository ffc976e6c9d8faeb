//! Answers the book's widget requests natively: one JSON request per line on stdin, one
//! JSON line out per request, `{"ok": answer}` or `{"error": message}`. The browser check
//! compares what the pages draw with these numbers.

use std::io::{BufRead, Write};

fn main() -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let reply = match book_widgets::request::answer(&line) {
            Ok(answer) => serde_json::json!({ "ok": answer }),
            Err(message) => serde_json::json!({ "error": message }),
        };
        writeln!(out, "{reply}")?;
    }
    Ok(())
}
