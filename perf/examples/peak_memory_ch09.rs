//! Measures the extra resident memory of one causal attention call at GPT-2 small's head
//! size (12 heads of 64), as the operating system sees it: the resident set before the call
//! (inputs made), the peak reset to it, the call, the peak after
//! (`attention_perf::peak_memory`). Linux only.
//!
//! ```text
//! cargo run --release -p attention-perf --example peak_memory_ch09 -- flash 8 4096
//! cargo run --release -p attention-perf --example peak_memory_ch09 -- materialised 1 2048
//! ```
//!
//! Prints one JSON object: the output's size, the extra peak, and their ratio. With `isa`
//! instead of a variant, prints which version of the kernel this CPU runs.

use attention_perf::peak_memory::measure;
use ch07_multihead_split::scaled_dot_product::scaled_dot_product_attention;
use ch09_flash_attention::kernel::flash_attention;
use shared::{manual_seed, ones, randn};

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
    let (out, measured) = measure(|| match &visible {
        Some(visible) => scaled_dot_product_attention(&q, &k, &v, Some(visible)).0,
        None => flash_attention(&q, &k, &v, true),
    })
    .expect("the peak memory, from Linux's /proc");
    let output = (out.numel() * 4) as u64;
    let extra = measured.extra_bytes();
    let mib = |bytes: u64| bytes as f64 / f64::from(1 << 20);
    println!(
        "{{\"variant\": \"{variant}\", \"batch\": {batch}, \"n\": {n}, \"threads\": {}, \"output_mib\": {:.1}, \"extra_peak_mib\": {:.1}, \"ratio\": {:.2}}}",
        rayon::current_num_threads(),
        mib(output),
        mib(extra),
        extra as f64 / output as f64
    );
}
