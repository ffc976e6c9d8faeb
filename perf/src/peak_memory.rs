//! How much memory a computation takes, as the operating system sees it: the resident set
//! of this process (the pages it has touched and still holds) and its peak, from the lines
//! `VmRSS` and `VmHWM` of Linux's `/proc/self/status`.
//!
//! A chapter's claim "no `T × T` matrix" or "a state of fixed size" is about what a form of
//! attention holds while it runs. [`measure`] runs one call and reports the peak it reached
//! above what the process held before it, whatever allocated it (our tensors, libtorch,
//! the allocator's own bookkeeping). One call per process: the examples `peak_memory_*`
//! each measure one form at one length and exit.
//!
//! Linux only. Elsewhere, or where `/proc` is not mounted, every function returns an error
//! that says so.
//!
//! ```no_run
//! use attention_perf::peak_memory::measure;
//! // 64 MiB, every byte written, so that every page is resident.
//! let (block, measured) = measure(|| vec![1u8; 64 << 20])?;
//! assert!(measured.extra_bytes() >= 64 << 20);
//! println!("{} bytes, {:.3} s", block.len(), measured.seconds);
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io;
use std::time::Instant;

/// Where Linux reports a process's memory.
const STATUS: &str = "/proc/self/status";
/// Writing `5` here resets the process's peak resident set to its current size (Linux 4.0+).
const CLEAR_REFS: &str = "/proc/self/clear_refs";

/// One line of `/proc/self/status`, such as `VmHWM:   123456 kB`, in bytes.
fn status_bytes(field: &str) -> io::Result<u64> {
    let status = std::fs::read_to_string(STATUS).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("peak_memory: cannot read {STATUS} ({e}); the measurement needs Linux's /proc"),
        )
    })?;
    let missing =
        || io::Error::other(format!("peak_memory: {STATUS} has no line {field}"));
    let value = status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .ok_or_else(missing)?;
    let kib: u64 = value
        .trim()
        .strip_suffix("kB")
        .and_then(|kib| kib.trim().parse().ok())
        .ok_or_else(|| {
            io::Error::other(format!(
                "peak_memory: {STATUS}'s {field} is {value:?}, not a number of kB"
            ))
        })?;
    Ok(kib * 1024)
}

/// The memory this process holds now: its resident set (`VmRSS`), in bytes.
pub fn resident_bytes() -> io::Result<u64> {
    status_bytes("VmRSS")
}

/// The most memory this process has held at once since it started, or since the last
/// [`reset_peak`]: its peak resident set (`VmHWM`, the "high water mark"), in bytes.
pub fn peak_bytes() -> io::Result<u64> {
    status_bytes("VmHWM")
}

/// Lowers the peak to the memory held now, so that [`peak_bytes`] then reports the peak of
/// what runs next only, not of what ran before (building the inputs, say).
pub fn reset_peak() -> io::Result<()> {
    std::fs::write(CLEAR_REFS, "5").map_err(|e| {
        io::Error::new(
            e.kind(),
            format!(
                "peak_memory: cannot reset the peak through {CLEAR_REFS} ({e}); Linux 4.0 or later"
            ),
        )
    })
}

/// What [`measure`] saw of one call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measurement {
    /// Wall-clock time of the call.
    pub seconds: f64,
    /// The resident set just before the call: the program, its libraries, the inputs.
    pub before_bytes: u64,
    /// The peak resident set during the call (the process's peak, reset just before it).
    pub peak_bytes: u64,
}

impl Measurement {
    /// How far the call raised the memory above what the process held before it: what the
    /// computation itself needed at its fullest, its output included.
    pub fn extra_bytes(&self) -> u64 {
        self.peak_bytes.saturating_sub(self.before_bytes)
    }
}

/// Runs `f` once and measures its time and the peak memory it reached; returns what `f`
/// returned, still held, so that freeing the output is not part of the call.
pub fn measure<T>(f: impl FnOnce() -> T) -> io::Result<(T, Measurement)> {
    let before_bytes = resident_bytes()?;
    reset_peak()?;
    let start = Instant::now();
    let out = f();
    let seconds = start.elapsed().as_secs_f64();
    let peak_bytes = peak_bytes()?;
    Ok((
        out,
        Measurement {
            seconds,
            before_bytes,
            peak_bytes,
        },
    ))
}

/// The one JSON line the `peak_memory` examples print for a form at length `n`:
/// `{"form": .., "n": .., "seconds": .., "peak_bytes": .., "before_bytes": ..,
/// "inputs_bytes": .., "output_bytes": ..}`, where `inputs_bytes` and `output_bytes` are the
/// sizes of the tensors given and returned, counted from their shapes.
pub fn json_line(
    form: &str,
    n: usize,
    m: &Measurement,
    inputs_bytes: u64,
    output_bytes: u64,
) -> String {
    serde_json::json!({
        "form": form,
        "n": n,
        "seconds": m.seconds,
        "peak_bytes": m.peak_bytes,
        "before_bytes": m.before_bytes,
        "inputs_bytes": inputs_bytes,
        "output_bytes": output_bytes,
    })
    .to_string()
}
