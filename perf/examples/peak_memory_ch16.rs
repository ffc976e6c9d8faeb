//! The peak memory of one of chapter 16's forms of attention at one length, in a process
//! of its own, on the inputs `benches/flex/` times them on: `q`, `k`, `v` of
//! `[1, 2, n, 64]`, float32, one thread. The kernel is version 2 (`flex_kernel_fast`, the
//! listing's bits).
//!
//! ```text
//! cargo run --release -p attention-perf --example peak_memory_ch16 -- --form window --n 32768
//! cargo run --release -p attention-perf --features tch --example peak_memory_ch16 -- \
//!     --form torch-sdpa-mask --n 4096
//! ```
//!
//! The kernel and chapter 9's never hold an `n × n` matrix: what they add to the inputs
//! should stay near the size of their output. The formula holds the `n × n` scores of every
//! head, and so does PyTorch's SDPA given the window as an `n × n` boolean mask (the mask
//! itself is one of its inputs). Prints one JSON line (see
//! `attention_perf::peak_memory::json_line`); `perf/scripts/bench-part4.sh` runs every form
//! at the longest length its benchmark times.
//! Linux only: elsewhere it says so and exits with an error.

use std::process::ExitCode;

use ch09_flash_attention::kernel::flash_attention;
use ch16_flex_attention::block_mask::BlockMask;
use ch16_flex_attention::formula::flex_attention;
use ch16_flex_attention::kv_rows::InTensors;
use ch16_flex_attention::recipes::{
    MaskMod, causal, causal_window, document_mask, unchanged,
};
use clap::{Parser, ValueEnum};
use shared::{Tensor, manual_seed, randn};

use attention_perf::flex::v2_same_bits::flex_kernel_fast;
use attention_perf::peak_memory::{json_line, measure, peak_bytes};
use attention_perf::pinned::pool;

/// Heads, features per head, the window and the tile, as in the benchmarks.
const HEADS: usize = 2;
const HEAD_DIM: usize = 64;
const WINDOW: usize = 256;
const TILE: usize = 128;

/// The forms the benchmarks time.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Form {
    /// The kernel with the causal sliding window of 256 keys (`flex_window`).
    Window,
    /// The kernel with the document mask, `--documents` equal documents (`flex_documents`).
    Documents,
    /// The kernel with the causal mask (`flex_causal`).
    Causal,
    /// Chapter 9's flash kernel, causal (`flex_causal`).
    FlashCausal,
    /// The chapter's formula with the window: every score computed (`flex_vs_torch`).
    Formula,
    /// PyTorch's SDPA with the window as an `[n, n]` boolean mask (`flex_vs_torch`).
    #[cfg(feature = "tch")]
    TorchSdpaMask,
    /// PyTorch's operations: matmul, masked_fill, softmax, matmul (`flex_vs_torch`).
    #[cfg(feature = "tch")]
    TorchFormula,
}

/// One form, once, at one length.
#[derive(Parser)]
struct Args {
    #[arg(long, value_enum)]
    form: Form,
    /// The sequence length.
    #[arg(long)]
    n: usize,
    /// How many equal documents the form `documents` cuts the sequence into.
    #[arg(long, default_value_t = 16)]
    documents: usize,
}

/// Any error of the measurement (no /proc) or of the form (its shapes), sent back from
/// the thread that ran it.
type Error = Box<dyn std::error::Error + Send + Sync>;

/// Bytes of a float32 tensor.
fn bytes(t: &Tensor) -> u64 {
    (t.numel() * 4) as u64
}

/// The kernel with `mask_mod`; the block mask is made before the measurement, as the
/// benchmark makes it before the timing (it holds one entry per tile, `(n / 128)²`).
fn kernel(
    (q, k, v): (&Tensor, &Tensor, &Tensor),
    mask_mod: impl MaskMod + Clone,
) -> Result<(Tensor, attention_perf::peak_memory::Measurement), Error> {
    let n = q.size(2);
    let block_mask = BlockMask::new(mask_mod.clone(), 1, 1, n, n, TILE)?;
    let (out, measured) = measure(|| {
        let kv = InTensors::new(k, v)?;
        flex_kernel_fast(q, &kv, &block_mask, unchanged, mask_mod)
    })?;
    Ok((out?.out, measured))
}

fn run(args: &Args) -> Result<String, Error> {
    // Before any work: on a system without /proc, say so at once.
    peak_bytes()?;
    let n = args.n;
    manual_seed(0);
    let shape = [1, HEADS, n, HEAD_DIM];
    let (q, k, v) = (randn(&shape), randn(&shape), randn(&shape));
    let qkv = (&q, &k, &v);
    let inputs = bytes(&q) + bytes(&k) + bytes(&v);
    // One thread, as the benchmarks: more threads would each hold buffers of their own.
    // Returns the output's bytes, the measurement and the inputs made besides q, k, v.
    let (out_bytes, measured, mask_bytes) =
        pool(1).install(|| -> Result<_, Error> {
            let (out, measured) = match args.form {
                Form::Window => kernel(qkv, causal_window(WINDOW))?,
                Form::Documents => {
                    let documents = args.documents.max(1);
                    kernel(qkv, document_mask(&vec![n / documents; documents]))?
                }
                Form::Causal => kernel(qkv, causal)?,
                Form::FlashCausal => measure(|| flash_attention(&q, &k, &v, true))?,
                Form::Formula => {
                    let (out, measured) = measure(|| {
                        flex_attention(&q, &k, &v, unchanged, causal_window(WINDOW))
                    })?;
                    (out?, measured)
                }
                #[cfg(feature = "tch")]
                Form::TorchSdpaMask | Form::TorchFormula => {
                    return Ok(torch::run(
                        qkv,
                        matches!(args.form, Form::TorchSdpaMask),
                    )?);
                }
            };
            Ok((bytes(&out), measured, 0))
        })?;
    let form = match args.form {
        Form::Documents => format!("ch16/documents-{}", args.documents),
        form => format!(
            "ch16/{}",
            form.to_possible_value().expect("a named form").get_name()
        ),
    };
    Ok(json_line(
        &form,
        n,
        &measured,
        inputs + mask_bytes,
        out_bytes,
    ))
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("peak_memory: {e}");
            ExitCode::FAILURE
        }
    }
}

/// PyTorch's side (feature `tch`): libtorch 2.13.0 on one thread, the window as PyTorch
/// code without FlexAttention's compiler writes it, an `[n, n]` boolean mask, as in
/// `benches/flex/torch.rs`.
#[cfg(feature = "tch")]
mod torch {
    use attention_perf::peak_memory::{Measurement, measure};
    use shared::Tensor;
    use shared::backend::torch::to_tch;
    use shared::tch::{self, Device, Kind};

    use super::WINDOW;

    /// Runs SDPA with the mask (`sdpa`) or the formula in PyTorch's operations; returns the
    /// output's bytes, the measurement and the mask's bytes (an input made before it).
    ///
    /// # Shapes
    /// `q`, `k`, `v`: `[1, heads, n, 64]`.
    pub fn run(
        (q, k, v): (&Tensor, &Tensor, &Tensor),
        sdpa: bool,
    ) -> std::io::Result<(u64, Measurement, u64)> {
        tch::set_num_threads(1);
        let n = q.size(2) as i64;
        let [q, k, v] = [q, k, v].map(|t| to_tch(t, Device::Cpu));
        let i = tch::Tensor::arange(n, (Kind::Int64, Device::Cpu));
        let distance = i.unsqueeze(1) - i.unsqueeze(0);
        let visible = distance.ge(0).logical_and(&distance.lt(WINDOW as i64));
        let mask = if sdpa { visible } else { visible.logical_not() };
        let (out, measured) = measure(|| {
            if sdpa {
                tch::Tensor::scaled_dot_product_attention(
                    &q,
                    &k,
                    &v,
                    Some(&mask),
                    0.0,
                    false,
                    None,
                    false,
                )
            } else {
                let scale = 1.0 / (q.size()[3] as f64).sqrt();
                (q.matmul(&k.transpose(-2, -1)) * scale)
                    .masked_fill(&mask, f64::NEG_INFINITY)
                    .softmax(-1, None::<Kind>)
                    .matmul(&v)
            }
        })?;
        let out_bytes = (out.numel() * 4) as u64;
        Ok((out_bytes, measured, (n * n) as u64))
    }
}
