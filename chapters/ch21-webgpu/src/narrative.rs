//! The chapter's printed steps, in the order of `reference/ch21_webgpu.py`.
//!
//! A GPU rounds in its own order and its `exp` is not PyTorch's: its numbers equal
//! PyTorch's to within one unit of the last printed digit, and each kernel's agreement with
//! chapter 9's result on the CPU is printed as a check against the tolerance derived from
//! the inputs ([`crate::tolerance`]). The adapter's name, the tile sizes and the timings go
//! to stderr.

use course::narrative::python_bool;
use course::{Narrative, Seed};
use shared::{Result, Tensor};

use crate::device::{AdapterChoice, Gpu, describe, list_adapters};
use crate::first_program::{WORKGROUP, add_arrays};
use crate::kernels::Kernel;
use crate::key_reads::key_reads;
use crate::launch::{Launch, Outputs, attention};
use crate::setup::{
    ADD_LEN, CACHE, EXAMPLE, EXP_AT, HostInputs, SPLITS, cpu_attention, draw_arrays,
    draw_qkv,
};
use crate::tolerance::{compare, rescales, tolerance};

/// The chapter's own options.
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct GpuOptions {
    /// Lists every adapter wgpu finds (name, back-end, type) instead of running the chapter.
    #[arg(long)]
    pub list_adapters: bool,
    /// Asks for a software adapter that runs on the CPU (lavapipe, WARP), even where there
    /// is a hardware GPU.
    #[arg(long)]
    pub cpu_adapter: bool,
    /// Runs the first GPU program instead of the chapter: adds two arrays on the GPU.
    #[arg(long)]
    pub add_arrays: bool,
}

/// Runs the chapter on the adapter wgpu prefers; `seed` replaces the chapter's seed.
pub fn narrative(seed: Seed) -> Result<Narrative> {
    run(seed, GpuOptions::default())
}

/// The binary's entry: [`narrative`] with the chapter's options; the adapter and the
/// times go to stderr.
pub fn run(seed: Seed, options: GpuOptions) -> Result<Narrative> {
    if options.list_adapters {
        return Ok(adapters());
    }
    let choice = if options.cpu_adapter {
        AdapterChoice::Cpu
    } else {
        AdapterChoice::Preferred
    };
    let gpu = Gpu::new(choice)?;
    eprintln!("adapter: {}", gpu.description());
    if options.add_arrays {
        return first_program(&gpu, seed);
    }
    story(&gpu, seed)
}

/// `--list-adapters`: every adapter, one line each.
fn adapters() -> Narrative {
    let mut story = Narrative::new("GPU adapters");
    let step =
        story.step("Found by wgpu (WGPU_BACKEND=vulkan, metal or dx12 narrows it)");
    let found = list_adapters();
    if found.is_empty() {
        step.print("none");
    }
    for info in &found {
        step.print(describe(info));
    }
    story
}

/// `--add-arrays`: the first GPU program, on two arrays drawn from `randn`.
fn first_program(gpu: &Gpu, seed: Seed) -> Result<Narrative> {
    let mut story = Narrative::new("A first GPU program: add two arrays");
    let seed = seed.or(123);
    let [a, b] = draw_arrays(seed, ADD_LEN);
    let sum = add_arrays(gpu, &a.to_vec(), &b.to_vec())?;
    let on_the_cpu = a.f_add(&b)?;
    let step = story.step(format!(
        "{ADD_LEN} floats, {} workgroups of {WORKGROUP} invocations (manual_seed({seed}), \
         randn)",
        ADD_LEN.div_ceil(WORKGROUP)
    ));
    step.print(format!("a[-4:]: {}", a.narrow(0, ADD_LEN - 4, 4)));
    step.print(format!("b[-4:]: {}", b.narrow(0, ADD_LEN - 4, 4)));
    let sum = Tensor::from_vec(sum, &[ADD_LEN]);
    step.print(format!("sum[-4:]: {}", sum.narrow(0, ADD_LEN - 4, 4)));
    step.print(format!(
        "equal to a + b on the CPU: {}",
        python_bool(sum.to_vec() == on_the_cpu.to_vec())
    ));
    Ok(story)
}

fn story(gpu: &Gpu, seed: Seed) -> Result<Narrative> {
    let mut story = Narrative::new(
        "Chapter 21: Attention on the GPU, from one invocation per row to FlashAttention",
    );
    let seed = seed.or(123);
    let [q, k, v] = draw_qkv(seed, &EXAMPLE, &EXAMPLE);
    let host = HostInputs::new(&q, &k, &v);
    let cpu = cpu_attention(&q, &k, &v, true);
    inputs(&mut story, seed, &q);
    reference(&mut story, &cpu);
    for kernel in Kernel::FORWARD {
        forward(&mut story, gpu, kernel, &host, &cpu)?;
    }
    tiles(&mut story, gpu, &host)?;
    no_mask(&mut story, gpu, &q, &k, &v)?;
    split_kv(&mut story, gpu, seed)?;
    exp(&mut story);
    Ok(story)
}

/// `t[0, h, -1, :4]` of outputs laid out `[heads, queries, d_v]`.
fn last_row(out: &[f32], h: usize) -> Tensor {
    let [_, heads, n, d_v] = EXAMPLE;
    Tensor::from_vec(out.to_vec(), &[1, heads, n, d_v])
        .get(0)
        .get(h)
        .get(-1i64)
        .narrow(0, 0, 4)
}

/// `t[0, h, 0, :4]` of outputs laid out `[heads, queries, d_v]`.
fn first_row(out: &[f32], h: usize) -> Tensor {
    let [_, heads, n, d_v] = EXAMPLE;
    Tensor::from_vec(out.to_vec(), &[1, heads, n, d_v])
        .get(0)
        .get(h)
        .get(0)
        .narrow(0, 0, 4)
}

/// The last four log-sum-exps of head `h`.
fn last_lse(lse: &[f32], h: usize) -> Tensor {
    let [_, heads, n, _] = EXAMPLE;
    Tensor::from_vec(lse.to_vec(), &[heads, n])
        .get(h)
        .narrow(0, n - 4, 4)
}

fn inputs(story: &mut Narrative, seed: u64, q: &Tensor) {
    let [_, heads, n, d] = EXAMPLE;
    let step = story.step(format!(
        "Queries, keys and values: {heads} heads, {n} tokens, {d} features \
         (manual_seed({seed}), randn)"
    ));
    step.print_shape("q.shape", q);
    step.print(format!(
        "q[0, 0, 0, :4]: {}",
        q.get(0).get(0).get(0).narrow(0, 0, 4)
    ));
}

fn reference(story: &mut Narrative, cpu: &Outputs) {
    let step = story
        .step("Causal attention on the CPU (chapter 9's kernel; PyTorch's SDPA)");
    step.print(format!("out[0, 1, -1, :4]: {}", last_row(&cpu.out, 1)));
    step.print(format!("logsumexp[0, 1, -4:]: {}", last_lse(&cpu.lse, 1)));
}

fn forward(
    story: &mut Narrative,
    gpu: &Gpu,
    kernel: Kernel,
    host: &HostInputs,
    cpu: &Outputs,
) -> Result<()> {
    let inputs = host.inputs();
    let gpu_out = attention(gpu, kernel, &inputs, true)?;
    let agreement = compare(
        &gpu_out,
        cpu,
        &tolerance(&inputs, true, rescales(kernel, host.shape.keys)),
    );
    eprintln!(
        "{}: largest difference from the CPU {:.2e}, {:.3} of its tolerance",
        kernel.name(),
        agreement.largest_difference,
        agreement.worst_ratio
    );
    let title = match kernel {
        Kernel::Naive => {
            "Kernel 1: one invocation per query row, the scores in global memory"
        }
        Kernel::RowPerWorkgroup => {
            "Kernel 2: one workgroup per query row, tree reductions"
        }
        _ => "Kernel 3: FlashAttention, tiles of keys and values in workgroup memory",
    };
    let step = story.step(title);
    step.print(format!("out[0, 1, -1, :4]: {}", last_row(&gpu_out.out, 1)));
    step.print(format!(
        "logsumexp[0, 1, -4:]: {}",
        last_lse(&gpu_out.lse, 1)
    ));
    step.print(format!(
        "within the tolerance of the CPU's result: {}",
        python_bool(agreement.within())
    ));
    Ok(())
}

fn tiles(story: &mut Narrative, gpu: &Gpu, host: &HostInputs) -> Result<()> {
    let launch = Launch::new(gpu, Kernel::Flash, &host.inputs(), true)?;
    let tiles = launch.tiles();
    let n = host.shape.queries;
    let (query_tiles, key_tiles) =
        (n.div_ceil(tiles.tile_q), n.div_ceil(tiles.tile_k));
    let visited: usize = (0..query_tiles)
        .map(|t| ((t + 1) * tiles.tile_q).min(n).div_ceil(tiles.tile_k))
        .sum();
    let step = story.step("What the tiles save, per head, causal");
    step.print(format!(
        "tiles: {} queries x {} keys, {} of {} tiles computed",
        tiles.tile_q,
        tiles.tile_k,
        visited,
        query_tiles * key_tiles
    ));
    for kernel in Kernel::FORWARD {
        step.print(format!(
            "keys read from global memory by {}: {}",
            kernel.name(),
            key_reads(kernel, n, n, true, tiles)
        ));
    }
    Ok(())
}

fn no_mask(
    story: &mut Narrative,
    gpu: &Gpu,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
) -> Result<()> {
    let host = HostInputs::new(q, k, v);
    let cpu = cpu_attention(q, k, v, false);
    let gpu_out = attention(gpu, Kernel::Flash, &host.inputs(), false)?;
    let bound = tolerance(
        &host.inputs(),
        false,
        rescales(Kernel::Flash, host.shape.keys),
    );
    let step = story.step("Kernel 3 without the causal mask");
    step.print(format!("out[0, 1, 0, :4]: {}", first_row(&gpu_out.out, 1)));
    step.print(format!(
        "within the tolerance of the CPU's result: {}",
        python_bool(compare(&gpu_out, &cpu, &bound).within())
    ));
    Ok(())
}

fn split_kv(story: &mut Narrative, gpu: &Gpu, seed: u64) -> Result<()> {
    let [_, heads, _, d] = EXAMPLE;
    let [q, k, v] = draw_qkv(seed, &[1, heads, 1, d], &[1, heads, CACHE, d]);
    let host = HostInputs::new(&q, &k, &v);
    let kernel = Kernel::SplitKv { splits: SPLITS };
    let launch = Launch::new(gpu, kernel, &host.inputs(), false)?;
    launch.run(gpu)?;
    let gpu_out = launch.read(gpu)?;
    let (part_max, part_sum) = launch.read_parts(gpu)?;
    let part_lse: Vec<f32> = part_max
        .iter()
        .zip(&part_sum)
        .map(|(&m, &s)| m + s.ln())
        .collect();
    let cpu = cpu_attention(&q, &k, &v, false);
    let bound = tolerance(&host.inputs(), false, rescales(kernel, host.shape.keys));
    let step = story.step(format!(
        "Kernel 4: split-KV decoding, one query over {CACHE} keys in {SPLITS} parts \
         (manual_seed({seed}))"
    ));
    let parts = Tensor::from_vec(part_lse, &[heads, SPLITS as usize]);
    step.print("logsumexp of each part, head 0:");
    step.print(parts.get(0));
    let out = Tensor::from_vec(gpu_out.out.clone(), &[heads, d]);
    step.print(format!(
        "merged out[0, 0, 0, :4]: {}",
        out.get(0).narrow(0, 0, 4)
    ));
    step.print(format!(
        "merged logsumexp[0, :, 0]: {}",
        Tensor::from_vec(gpu_out.lse.clone(), &[heads])
    ));
    step.print(format!(
        "within the tolerance of the CPU's result: {}",
        python_bool(compare(&gpu_out, &cpu, &bound).within())
    ));
    Ok(())
}

fn exp(story: &mut Narrative) {
    let x = Tensor::from_vec(EXP_AT.to_vec(), &[EXP_AT.len()]);
    let step = story.step("exp in PyTorch, the value a GPU's exp is compared with");
    step.print(format!("x: {x}"));
    for (x, e) in EXP_AT.iter().zip(x.exp().to_vec()) {
        step.print(format!("torch.exp({x:.1}): {}", python_e(e)));
    }
}

/// A float as Python's `f"{x:.8e}"` prints it: 9 significant digits, a two-digit exponent.
fn python_e(x: f32) -> String {
    let text = format!("{:.8e}", f64::from(x));
    let (mantissa, exponent) = text.split_once('e').expect("an exponent");
    let exponent: i32 = exponent.parse().expect("a number");
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.abs())
}
