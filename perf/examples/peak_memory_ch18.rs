//! The peak memory of one of chapter 18's forms of attention at one length, in a process
//! of its own, on the inputs `benches/linear/` times them on (one head of 64 features,
//! float32; DSA's indexer of 4 heads of 32; 8 query heads for the kernel), one thread.
//!
//! ```text
//! cargo run --release -p attention-perf --example peak_memory_ch18 -- --form chunked --n 16384
//! ```
//!
//! What chapter 18 says each holds: the parallel form the `T × T` weights; the recurrent
//! and chunked forms a `d × d` state (and a `C × C` block), so little beyond their output;
//! DSA as the chapter writes it several `T × T` matrices (the indexer's scores, the kept
//! keys, the main scores); the block selection the indexer's `T × T` scores and mask; the
//! DSA kernel and chapter 9's flash kernel no `T × T` matrix. Prints one JSON line (see
//! `attention_perf::peak_memory::json_line`); `perf/scripts/bench-part4.sh` runs every form
//! at the longest length its benchmark times. Linux only: elsewhere it says so and exits
//! with an error.

use std::process::ExitCode;

use ch09_flash_attention::kernel::flash_attention;
use ch18_linear_attention::chunked::linear_chunked;
use ch18_linear_attention::parallel::linear_parallel;
use ch18_linear_attention::recurrent::linear_recurrent;
use ch18_linear_attention::sparse::{
    index_scores, sparse_attention, top_k_kept, top_k_tiles_kept,
};
use ch18_linear_attention::sparse_kernel::{Indexer, dsa_kernel};
use clap::{Parser, ValueEnum};
use shared::{Tensor, manual_seed, randn};

use attention_perf::dsa::v2_in_place::dsa_kernel_fast;
use attention_perf::dsa::v2_tiled_same_bits::sparse_attention_tiled_fast;
use attention_perf::peak_memory::{json_line, measure, peak_bytes};
use attention_perf::pinned::pool;

/// Sizes as in the benchmarks.
const HEAD_DIM: usize = 64;
const CHUNK: usize = 64;
const TOP_K: usize = 2048;
const TILE: usize = 128;
const INDEX_HEADS: usize = 4;
const D_INDEX: usize = 32;
const LONG_HEADS: usize = 8;
const QUERY_TILE: usize = 64;

/// The forms the benchmarks time.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Form {
    /// `linear_parallel`, the `T × T` weights (`linear`).
    Parallel,
    /// `linear_recurrent`, a token at a time (`linear`).
    Recurrent,
    /// `linear_chunked`, chunks of 64 (`linear`).
    Chunked,
    /// Chapter 9's flash kernel, causal, one head (`linear`).
    FlashCausal,
    /// DSA as the chapter writes it: index_scores, top_k_kept, sparse_attention (`dsa`).
    Dsa,
    /// The block selection: index_scores, top_k_tiles_kept, sparse_attention_tiled_fast
    /// (`dsa`).
    DsaTiles,
    /// `dsa_kernel`, 8 query heads, queries in tiles of 64 (`dsa_long`).
    DsaKernel,
    /// `dsa_kernel_fast`, the same keys kept (`dsa_long`'s first row).
    DsaKernelFast,
    /// Chapter 9's flash kernel, causal, the same 8 heads (`dsa_long`).
    #[value(name = "flash-8-heads")]
    Flash8Heads,
}

/// One form, once, at one length.
#[derive(Parser)]
struct Args {
    #[arg(long, value_enum)]
    form: Form,
    /// The sequence length `T`.
    #[arg(long)]
    n: usize,
}

/// Any error of the measurement (no /proc) or of the form (its shapes), sent back from
/// the thread that ran it.
type Error = Box<dyn std::error::Error + Send + Sync>;

/// Bytes of a float32 tensor.
fn bytes(t: &Tensor) -> u64 {
    (t.numel() * 4) as u64
}

type Measured = (Tensor, attention_perf::peak_memory::Measurement);

/// Causal linear attention, or dense causal attention of one head, on `q`, `k`, `v` of
/// `[T, 64]`.
fn one_head(form: Form, t: usize) -> Result<(Measured, u64), Error> {
    let shape = [t, HEAD_DIM];
    let (q, k, v) = (randn(&shape), randn(&shape), randn(&shape));
    let inputs = 3 * bytes(&q);
    let measured = match form {
        Form::Parallel => measure(|| linear_parallel(&q, &k, &v))?,
        Form::Recurrent => measure(|| linear_recurrent(&q, &k, &v))?,
        Form::Chunked => measure(|| linear_chunked(&q, &k, &v, CHUNK))?,
        _ => {
            // `[T, d]` as one head of one batch, for chapter 9's kernel.
            let [q, k, v] = [&q, &k, &v].map(|x| x.unsqueeze(0).unsqueeze(0));
            measure(|| flash_attention(&q, &k, &v, true))?
        }
    };
    Ok((measured, inputs))
}

/// DSA as the chapter writes it, or its block selection, on one head and the indexer.
fn dsa(form: Form, t: usize) -> Result<(Measured, u64), Error> {
    let shape = [t, HEAD_DIM];
    let (q, k, v) = (randn(&shape), randn(&shape), randn(&shape));
    let q_index = randn(&[t, INDEX_HEADS, D_INDEX]);
    let k_index = randn(&[t, D_INDEX]);
    let w_index = randn(&[t, INDEX_HEADS]);
    let inputs = 3 * bytes(&q) + bytes(&q_index) + bytes(&k_index) + bytes(&w_index);
    let measured = if let Form::Dsa = form {
        measure(|| {
            let kept = top_k_kept(&index_scores(&q_index, &k_index, &w_index), TOP_K);
            sparse_attention(&q, &k, &v, &kept)
        })?
    } else {
        let (out, measured) = measure(|| {
            let scores = index_scores(&q_index, &k_index, &w_index);
            let kept = top_k_tiles_kept(&scores, TILE, TOP_K / TILE);
            sparse_attention_tiled_fast(&q, &k, &v, &kept, TILE)
        })?;
        (out?.0, measured)
    };
    Ok((measured, inputs))
}

/// The DSA kernel, or dense causal attention of the same 8 query heads, each reading one
/// key and value per token.
fn long(form: Form, t: usize) -> Result<(Measured, u64), Error> {
    let q = randn(&[t, LONG_HEADS, HEAD_DIM]);
    let (k, v) = (randn(&[t, HEAD_DIM]), randn(&[t, HEAD_DIM]));
    let q_index = randn(&[t, INDEX_HEADS, D_INDEX]);
    let k_index = randn(&[t, D_INDEX]);
    let w_index = randn(&[t, INDEX_HEADS]);
    if let Form::DsaKernel | Form::DsaKernelFast = form {
        let indexer = Indexer {
            q: &q_index,
            k: &k_index,
            w: &w_index,
        };
        let inputs = [&q, &k, &v, &q_index, &k_index, &w_index].map(bytes);
        let kernel = match form {
            Form::DsaKernel => dsa_kernel,
            _ => dsa_kernel_fast,
        };
        let (out, measured) =
            measure(|| kernel(&q, &k, &v, &indexer, TOP_K, QUERY_TILE))?;
        return Ok(((out?, measured), inputs.iter().sum()));
    }
    // Dense attention's inputs, as the benchmark makes them before the timing: every head's
    // keys and values copied out, `[1, 8, T, 64]` each.
    let heads = |x: &Tensor| {
        x.unsqueeze(0)
            .expand([LONG_HEADS, t, HEAD_DIM])
            .contiguous()
            .unsqueeze(0)
    };
    let q4 = q.transpose(0, 1).contiguous().unsqueeze(0);
    let (k4, v4) = (heads(&k), heads(&v));
    let inputs = bytes(&q4) + bytes(&k4) + bytes(&v4);
    drop((q, k, v, q_index, k_index, w_index));
    Ok((measure(|| flash_attention(&q4, &k4, &v4, true))?, inputs))
}

fn run(args: &Args) -> Result<String, Error> {
    // Before any work: on a system without /proc, say so at once.
    peak_bytes()?;
    manual_seed(0);
    // One thread, as the benchmarks: more threads would each hold buffers of their own.
    let ((out, measured), inputs) = pool(1).install(|| match args.form {
        Form::Parallel | Form::Recurrent | Form::Chunked | Form::FlashCausal => {
            one_head(args.form, args.n)
        }
        Form::Dsa | Form::DsaTiles => dsa(args.form, args.n),
        Form::DsaKernel | Form::DsaKernelFast | Form::Flash8Heads => {
            long(args.form, args.n)
        }
    })?;
    let name = args.form.to_possible_value().expect("a named form");
    let form = format!("ch18/{}", name.get_name());
    Ok(json_line(&form, args.n, &measured, inputs, bytes(&out)))
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
