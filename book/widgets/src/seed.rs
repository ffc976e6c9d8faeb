//! The seed a reader types, read as a chapter's `--seed` reads it.

/// A seed as `--seed` takes it: a whole number from 0 to 18446744073709551615.
pub fn parse_seed(text: &str) -> Result<u64, String> {
    text.trim().parse::<u64>().map_err(|_| {
        format!(
            "a seed is a whole number from 0 to {}, not {text:?}",
            u64::MAX
        )
    })
}
