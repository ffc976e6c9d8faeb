//! Measures the extra resident memory of one causal attention call at GPT-2 small's head
//! size (12 heads of 64), as the operating system sees it: the resident set before the call
//! (inputs made), the kernel's peak reset to it (`/proc/self/clear_refs`), the call, the
//! peak after. Linux only.
//!
//! ```text
//! cargo run --release -p ch09-flash-attention --example peak_memory -- flash 8 4096
//! cargo run --release -p ch09-flash-attention --example peak_memory -- materialised 1 2048
//! ```
//!
//! Prints one JSON object: the output's size, the extra peak, and their ratio. With `isa`
//! instead of a variant, prints which version of the kernel this CPU runs.

use ch07_multihead_split::scaled_dot_product::scaled_dot_product_attention;
use ch09_flash_attention::kernel::flash_attention;
use shared::{manual_seed, ones, randn};

/// A `VmRSS:`-style line of `/proc/self/status`, in bytes.
fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("Linux /proc");
    let line = status
        .lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"));
    let kib: u64 = line[field.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .expect("a number of kB");
    kib * 1024
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let variant = args.first().map_or("flash", String::as_str).to_string();
    if variant == "isa" {
        // For the benchmark table: which version of the kernel this CPU runs.
        println!("{:?}", ch09_flash_attention::kernel::Isa::detect());
        return;
    }
    let batch: usize = args.get(1).map_or(8, |s| s.parse().expect("batch"));
    let n: usize = args.get(2).map_or(4096, |s| s.parse().expect("length"));
    manual_seed(0);
    let shape = [batch, 12, n, 64];
    let (q, k, v) = (randn(&shape), randn(&shape), randn(&shape));
    let visible = (variant == "materialised").then(|| ones(&[n, n]).tril(0).bool());
    let before = status_bytes("VmRSS:");
    // Linux 4.0+: "5" resets the peak resident set size to the current one.
    std::fs::write("/proc/self/clear_refs", "5").expect("resetting the peak (Linux 4.0+)");
    let out = match &visible {
        Some(visible) => scaled_dot_product_attention(&q, &k, &v, Some(visible)).0,
        None => flash_attention(&q, &k, &v, true),
    };
    let peak = status_bytes("VmHWM:");
    let output = (out.numel() * 4) as u64;
    let extra = peak.saturating_sub(before);
    let mib = |bytes: u64| bytes as f64 / f64::from(1 << 20);
    println!(
        "{{\"variant\": \"{variant}\", \"batch\": {batch}, \"n\": {n}, \"threads\": {}, \"output_mib\": {:.1}, \"extra_peak_mib\": {:.1}, \"ratio\": {:.2}}}",
        rayon::current_num_threads(),
        mib(output),
        mib(extra),
        extra as f64 / output as f64
    );
}
