//! `mpirun -np 4 ch24-mpi`: the chapter's ring (contiguous and zigzag shards), its
//! all-gather, Ulysses and tensor-parallel heads, one rank per process. Rank 0 gathers
//! every result, checks it against the one-process simulation bit for bit, and prints what
//! each rank computed, sent and waited.
//!
//! Build it with `cargo build -p ch24-distributed --features mpi`; run it with
//! `mpirun --oversubscribe -np 4 target/debug/ch24-mpi` (more ranks than cores need
//! `--oversubscribe`).

use std::process::ExitCode;

use ch22_pretraining::batches::Batch;
use ch22_pretraining::config::Arch;
use ch22_pretraining::model::Model;
use ch24_distributed::commas::commas;
use ch24_distributed::cost::CostModel;
use ch24_distributed::counts::products_of_rank;
use ch24_distributed::distributed::{
    Ranks, agree_on_sizes, all_gather_attention, gather_to_root, reduce_both_ways,
    ring_attention, ring_backward, shards_of, ulysses,
};
use ch24_distributed::ring::{
    Shard, finished, in_sequence_order, ring_attention_simulated,
};
use ch24_distributed::ring_backward::ring_backward_simulated;
use ch24_distributed::ring_bytes::ring_bytes;
use ch24_distributed::setup::{D_MODEL, Sizes};
use ch24_distributed::setup::{STEP_LAYOUT, step_config, step_settings};
use ch24_distributed::shards::Layout;
use ch24_distributed::tensor_parallel::{
    Projections, rank_partial, sum_in_rank_order,
};
use ch24_distributed::training_step::{OneProcess, train_step_across_ranks};
use ch24_distributed::ulysses::{causal_attention, ulysses_simulated};
use clap::Parser;
use mpi::point_to_point::send_receive_replace_into;
use mpi::traits::*;
use shared::{Result, Tensor, manual_seed, randint, randn};

/// The chapter's attention across MPI processes, checked against one process.
#[derive(Parser, Debug)]
#[command(name = "ch24-mpi")]
struct Options {
    /// Seed of the queries, keys, values and projections.
    #[arg(long, default_value_t = 24)]
    seed: u64,
    /// Tokens of the whole sequence.
    #[arg(long, default_value_t = 1024)]
    tokens: usize,
    /// Heads.
    #[arg(long, default_value_t = 8)]
    heads: usize,
    /// Numbers per query, key and value.
    #[arg(long, default_value_t = 64)]
    head_dim: usize,
    /// `R=N`: rank R claims N tokens, to see the ranks' check of their sizes.
    #[arg(long, value_parser = rank_tokens)]
    rank_tokens: Option<(usize, usize)>,
}

fn rank_tokens(text: &str) -> std::result::Result<(usize, usize), String> {
    let (rank, tokens) = text
        .split_once('=')
        .ok_or_else(|| format!("expected R=N, got {text:?}"))?;
    let number = |s: &str| s.parse::<usize>().map_err(|e| format!("{s:?}: {e}"));
    Ok((number(rank)?, number(tokens)?))
}

/// What rank 0 prints and whether every check held.
struct Report {
    lines: Vec<String>,
    all_equal: bool,
}

impl Report {
    fn check(&mut self, what: &str, equal: bool) {
        self.all_equal &= equal;
        self.lines.push(format!("{what}: {equal}"));
    }
}

fn bits(a: &Tensor, b: &Tensor) -> bool {
    a.sizes() == b.sizes() && a.to_vec() == b.to_vec()
}

/// Every rank's output blocks gathered to rank 0 and put in sequence order there.
fn gathered(ranks: &Ranks, blocks: &[Tensor], layout: Layout) -> Option<Tensor> {
    let mine: Vec<f32> = blocks.iter().flat_map(|b| b.to_vec()).collect();
    let all = gather_to_root(ranks, &mine);
    (ranks.rank == 0).then(|| {
        let shape = blocks[0].sizes().to_vec();
        let size = mine.len() / blocks.len();
        let outputs = (0..ranks.size)
            .map(|r| {
                let theirs = &all[r * mine.len()..][..mine.len()];
                let blocks = theirs
                    .chunks(size)
                    .map(|b| Tensor::from_vec(b.to_vec(), &shape))
                    .collect();
                (layout.chunks_of(r, ranks.size), blocks)
            })
            .collect();
        in_sequence_order(outputs).expect("blocks of one shape")
    })
}

fn run(ranks: &Ranks, sizes: Sizes, seed: u64, report: &mut Report) -> Result<()> {
    let Sizes {
        tokens,
        heads,
        head_dim,
    } = sizes;
    let world = ranks.size;
    manual_seed(seed);
    let q = randn(&[1, heads, tokens, head_dim]);
    let k = randn(&[1, heads, tokens, head_dim]);
    let v = randn(&[1, heads, tokens, head_dim]);
    let x = randn(&[tokens, D_MODEL]);
    let w = Projections::random(D_MODEL, heads, head_dim);
    let grad_out = randn(&[1, heads, tokens, head_dim]);
    let qkv = [&q, &k, &v];
    report.lines.push(format!(
        "{world} ranks, {tokens} tokens, {heads} heads of {head_dim}, seed {seed}"
    ));

    let mut zigzag_times = Vec::new();
    for layout in [Layout::Contiguous, Layout::Zigzag] {
        let [qs, ks, vs] = shards_of(ranks, qkv, layout)?;
        let (running, times) = ring_attention(ranks, &qs, &ks, &vs, layout)?;
        let blocks = finished(running.clone())?;
        let times = gather_to_root(ranks, &[times.attending, times.waiting]);
        if layout == Layout::Zigzag {
            zigzag_times = times.clone();
        }
        if let Some(out) = gathered(ranks, &blocks, layout) {
            let simulated =
                ring_attention_simulated(&q, &k, &v, world, layout, |_, _, _| {})?;
            report.check(
                &format!(
                    "ring, {} shards, equal to the one-process simulation bit for bit",
                    layout.name()
                ),
                bits(&out, &simulated),
            );
            for r in 0..world {
                report.lines.push(format!(
                    "  rank {r}: {} query-key products, {} bytes sent, {:.1} ms attending, {:.1} ms waiting",
                    commas(products_of_rank(sizes, world, layout, r)),
                    commas(ring_bytes(tokens, heads, head_dim, world)),
                    times[2 * r] * 1e3,
                    times[2 * r + 1] * 1e3
                ));
            }
        }
        if layout == Layout::Zigzag {
            let gs = Shard::of_rank(&grad_out, layout, ranks.rank, world)?;
            let grads = ring_backward(ranks, [&qs, &ks, &vs], running, &gs, layout)?;
            let home: Vec<Option<Tensor>> =
                grads.iter().map(|g| gathered(ranks, g, layout)).collect();
            if let [Some(dq), Some(dk), Some(dv)] = &home[..] {
                let simulated =
                    ring_backward_simulated([&q, &k, &v], &grad_out, world, layout)?;
                let equal = bits(dq, &simulated[0])
                    && bits(dk, &simulated[1])
                    && bits(dv, &simulated[2]);
                report.check(
                    "ring backward, zigzag shards, gradients of q, k, v equal to the simulation bit for bit",
                    equal,
                );
            }
            let blocks = all_gather_attention(ranks, &qs, &ks, &vs, layout)?;
            if let Some(out) = gathered(ranks, &blocks, layout) {
                let simulated = ring_attention_simulated(
                    &q,
                    &k,
                    &v,
                    world,
                    layout,
                    |_, _, _| {},
                )?;
                report.check(
                    "all-gather, zigzag shards, equal to the ring's simulation bit for bit",
                    bits(&out, &simulated),
                );
            }
        }
    }

    let [qs, ks, vs] = shards_of(ranks, qkv, Layout::Contiguous)?;
    let out = ulysses(ranks, &qs.blocks[0], &ks.blocks[0], &vs.blocks[0])?;
    if let Some(out) = gathered(ranks, &[out], Layout::Contiguous) {
        let simulated = ulysses_simulated(&q, &k, &v, world)?;
        report.check(
            "Ulysses equal to its simulation bit for bit",
            bits(&out, &simulated),
        );
        let one = causal_attention(&q, &k, &v)?;
        report.check("Ulysses equal to one process bit for bit", bits(&out, &one));
    }

    let partial = rank_partial(&x, &w, heads, ranks.rank, world)?;
    let (reduced, fixed) = reduce_both_ways(ranks, &partial);
    let all_reduced = gather_to_root(ranks, &reduced.to_vec());
    let all_fixed = gather_to_root(ranks, &fixed.to_vec());
    if ranks.rank == 0 {
        let partials = (0..world)
            .map(|r| rank_partial(&x, &w, heads, r, world))
            .collect::<Result<Vec<Tensor>>>()?;
        let simulated = sum_in_rank_order(&partials);
        let n = fixed.numel();
        let same_everywhere = |all: &[f32]| all.chunks(n).all(|c| c == &all[..n]);
        report.check(
            "tensor-parallel heads, sum in rank order equal to one process's bit for bit",
            bits(&fixed, &simulated),
        );
        report.check(
            "tensor-parallel heads, sum in rank order equal on every rank",
            same_everywhere(&all_fixed),
        );
        let gap: f32 = (&reduced - &fixed).abs().max().item();
        report.lines.push(format!(
            "tensor-parallel heads, MPI's all-reduce: equal on every rank: {}; largest gap to the sum in rank order: {gap:.1e}",
            same_everywhere(&all_reduced)
        ));
    }
    training_step(ranks, seed, report)?;
    let model = fit_cost_model(ranks, sizes, &zigzag_times);
    if let Some(model) = model {
        report
            .lines
            .extend(cost_lines(&model, sizes, world, &zigzag_times));
    }
    Ok(())
}

/// Chapter 22's Llama and a batch of random token ids after `manual_seed(seed)`: every
/// rank draws the same, as every rank of a data loader's group would receive them.
fn model_and_batch(seed: u64) -> Result<(Model, Batch)> {
    let config = step_config();
    manual_seed(seed);
    let model = Model::new(Arch::Llama, &config)?;
    let ids = randint(0, config.vocab_size, &[config.batch, config.context + 1]);
    Ok((
        model,
        Batch {
            x: ids.narrow(1, 0, config.context).contiguous(),
            y: ids.narrow(1, 1, config.context).contiguous(),
        },
    ))
}

/// One training step with the sequence cut across the processes; rank 0 checks every
/// rank's loss and updated weights against the one-process simulation's, bit for bit.
fn training_step(ranks: &Ranks, seed: u64, report: &mut Report) -> Result<()> {
    let settings = step_settings();
    let (mut model, batch) = model_and_batch(seed)?;
    let loss = train_step_across_ranks(
        &mut model,
        &mut settings.optimizer(),
        &settings,
        &batch,
        ranks,
        STEP_LAYOUT,
    )?;
    let mine: Vec<f32> = std::iter::once(loss)
        .chain(
            model
                .named_parameters()
                .iter()
                .flat_map(|(_, p)| p.to_vec()),
        )
        .collect();
    let all = gather_to_root(ranks, &mine);
    if ranks.rank == 0 {
        let (mut simulated, _) = model_and_batch(seed)?;
        let one = OneProcess { world: ranks.size };
        let loss = train_step_across_ranks(
            &mut simulated,
            &mut settings.optimizer(),
            &settings,
            &batch,
            &one,
            STEP_LAYOUT,
        )?;
        let expected: Vec<f32> = std::iter::once(loss)
            .chain(
                simulated
                    .named_parameters()
                    .iter()
                    .flat_map(|(_, p)| p.to_vec()),
            )
            .collect();
        let equal = all.chunks(expected.len()).all(|theirs| {
            theirs
                .iter()
                .map(|v| v.to_bits())
                .eq(expected.iter().map(|v| v.to_bits()))
        });
        report.check(
            &format!(
                "training step of chapter 22's Llama, {} shards: every rank's loss and updated weights equal to the simulation bit for bit",
                STEP_LAYOUT.name()
            ),
            equal,
        );
    }
    Ok(())
}

/// Seconds one `send_receive_replace` of `numbers` float32 numbers takes around the
/// ring, the average of `repeats`.
fn ring_message_seconds(ranks: &Ranks, numbers: usize, repeats: usize) -> f64 {
    let next = ranks
        .world
        .process_at_rank(((ranks.rank + 1) % ranks.size) as i32);
    let previous = ranks
        .world
        .process_at_rank(((ranks.rank + ranks.size - 1) % ranks.size) as i32);
    let mut buffer = vec![0.0f32; numbers];
    ranks.world.barrier();
    let start = std::time::Instant::now();
    for _ in 0..repeats {
        send_receive_replace_into(&mut buffer[..], &next, &previous);
    }
    start.elapsed().as_secs_f64() / repeats as f64
}

/// The cost model fitted to this machine: latency from small messages, bandwidth from
/// large ones, products per second from rank 0's attention in the zigzag ring (on rank
/// 0; `None` elsewhere).
fn fit_cost_model(
    ranks: &Ranks,
    sizes: Sizes,
    zigzag_times: &[f64],
) -> Option<CostModel> {
    let small = ring_message_seconds(ranks, 1, 200);
    let large_numbers = 1 << 18; // 1 MiB
    let large = ring_message_seconds(ranks, large_numbers, 20);
    (ranks.rank == 0).then(|| {
        let products = products_of_rank(sizes, ranks.size, Layout::Zigzag, 0);
        CostModel {
            latency: small,
            bandwidth: (4 * large_numbers) as f64 / (large - small).max(1e-9),
            products_per_second: products as f64 / zigzag_times[0].max(1e-9),
        }
    })
}

/// What rank 0 prints of the cost model: the fitted numbers, its estimate of this run
/// against the measured time, and its prediction for published hardware.
fn cost_lines(
    model: &CostModel,
    sizes: Sizes,
    world: usize,
    times: &[f64],
) -> Vec<String> {
    let here = model.ring(sizes, sizes.heads, 4, world, Layout::Zigzag);
    let measured = (0..world)
        .map(|r| times[2 * r] + times[2 * r + 1])
        .fold(0.0, f64::max);
    let mut lines = vec![
        format!(
            "cost model fitted here: latency {:.1} µs, bandwidth {:.2} GB/s, {:.2} M products/s a rank",
            model.latency * 1e6,
            model.bandwidth / 1e9,
            model.products_per_second / 1e6
        ),
        format!(
            "  its estimate of the zigzag ring above: {:.1} ms; measured (slowest rank): {:.1} ms",
            here.total * 1e3,
            measured * 1e3
        ),
    ];
    // Published figures (NVIDIA's H100 SXM datasheet: 989 TFLOPS dense bfloat16, NVLink 4
    // at 900 GB/s per GPU, both directions together; a DGX H100 gives each GPU one
    // ConnectX-7 port of InfiniBand NDR, 400 Gb/s). Assumed: half of the peak is reached,
    // a product costs 4 · 128 flops (its score and its share of the weighted values), and
    // a message starts in 5 µs.
    let long = Sizes {
        tokens: 1 << 20,
        heads: 32,
        head_dim: 128,
    };
    let products_per_second = 0.5 * 989e12 / (4.0 * 128.0);
    lines.push(format!(
        "on paper: {} tokens, {} heads of {}, 8 key/value heads, bfloat16, zigzag shards",
        commas(long.tokens as u64),
        long.heads,
        long.head_dim
    ));
    lines.push(
        "  assumed: H100 SXM at half of 989 TFLOPS, 4 · 128 flops a product, 5 µs a message"
            .into(),
    );
    for (gpus, link, bandwidth) in [
        (8, "NVLink 4, 450 GB/s a direction", 450e9),
        (64, "InfiniBand NDR, 50 GB/s", 50e9),
    ] {
        let paper = CostModel {
            latency: 5e-6,
            bandwidth,
            products_per_second,
        };
        let e = paper.ring(long, 8, 2, gpus, Layout::Zigzag);
        lines.push(format!(
            "  {gpus} GPUs over {link}: a step computes {:.1} ms, sends {:.2} ms; one layer's pass {:.0} ms",
            e.compute_per_step * 1e3,
            e.message_per_step * 1e3,
            e.total * 1e3
        ));
    }
    lines
}

fn main() -> ExitCode {
    let options = Options::parse();
    let Some(universe) = mpi::initialize() else {
        eprintln!("ch24-mpi: MPI was already initialised");
        return ExitCode::FAILURE;
    };
    let world = universe.world();
    let ranks = Ranks::of(&world);
    let mut mine = Sizes {
        tokens: options.tokens,
        heads: options.heads,
        head_dim: options.head_dim,
    };
    if let Some((rank, tokens)) = options.rank_tokens
        && rank == ranks.rank
    {
        mine.tokens = tokens;
    }
    let sizes = match agree_on_sizes(&ranks, mine) {
        Ok(sizes) => sizes,
        Err(e) => {
            // Every rank reached the same verdict; one of them says it.
            if ranks.rank == 0 {
                eprintln!(
                    "ch24-mpi: {} ranks cannot share this attention: {e}",
                    ranks.size
                );
            }
            return ExitCode::from(2);
        }
    };
    let mut report = Report {
        lines: Vec::new(),
        all_equal: true,
    };
    if let Err(e) = run(&ranks, sizes, options.seed, &mut report) {
        eprintln!("ch24-mpi: rank {}: {e}", ranks.rank);
        return ExitCode::FAILURE;
    }
    if ranks.rank == 0 {
        for line in &report.lines {
            println!("{line}");
        }
    }
    if report.all_equal {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
