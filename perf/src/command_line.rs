//! The command lines of the timing examples: `--name value` pairs and bare flags, read
//! from the process's arguments (the examples take a few numbers; no parser needed).

/// The text after `--name` on the command line, if any.
pub fn value(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == name)?;
    args.get(at + 1).cloned()
}

/// The number after `name` on the command line, or `default` (also when it does not parse).
pub fn number<T: std::str::FromStr>(name: &str, default: T) -> T {
    value(name).and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Whether `name` is on the command line.
pub fn flag(name: &str) -> bool {
    std::env::args().any(|a| a == name)
}
