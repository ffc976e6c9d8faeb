//! One test per exercise, named after it, so `cargo test -p ch21-webgpu --features exercise
//! NAME` checks just that one. The first two run on the CPU; `causal_tiles` runs the
//! learner's WGSL on the GPU and never skips: without an adapter it fails and says what to
//! install. Every failure names the sizes it was called with.

mod common;

use ch21_webgpu::kernels::{Kernel, WINDOW_TILES};
use ch21_webgpu::key_reads::{key_reads, key_reads_after_cache};
use ch21_webgpu::launch::compile;
use ch21_webgpu::tiles::TileSizes;
use ch21_webgpu::workgroup_memory::{
    largest_tile_k, largest_tile_k_with_scores, tile_bytes,
};
use course::quiet_proptest::quiet;
use proptest::prelude::*;

fn tiles(tile_q: usize, tile_k: usize) -> TileSizes {
    TileSizes {
        tile_q,
        tile_k,
        row_capacity: 4032,
        workgroup_bytes: 16384,
    }
}

/// The keys each kernel reads when `queries` tokens follow `cached` ones, counted by
/// following its loops key by key: kernels 1, 2 and 4 read `k` once per visible key
/// of each row; kernel 3 copies the keys of every tile up to its last query's last
/// key.
fn traced_reads(
    kernel: Kernel,
    queries: usize,
    cached: usize,
    t: TileSizes,
) -> usize {
    let keys = cached + queries;
    let sees = |i: usize, j: usize| j <= cached + i;
    let mut reads = 0;
    match kernel {
        Kernel::Flash => {
            let mut q_start = 0;
            while q_start < queries {
                let last_query = (q_start + t.tile_q).min(queries) - 1;
                let mut tile = 0;
                // A tile is visited if some query of the workgroup sees its first
                // key.
                while tile * t.tile_k < keys
                    && (q_start..=last_query).any(|i| sees(i, tile * t.tile_k))
                {
                    reads += (tile * t.tile_k..(tile + 1) * t.tile_k)
                        .filter(|&j| j < keys)
                        .count();
                    tile += 1;
                }
                q_start += t.tile_q;
            }
        }
        _ => {
            for i in 0..queries {
                reads += (0..keys).filter(|&j| sees(i, j)).count();
            }
        }
    }
    reads
}

fn check_key_reads(
    kernel: Kernel,
    queries: usize,
    cached: usize,
    t: TileSizes,
    want: usize,
) {
    let got = key_reads_after_cache(kernel, queries, cached, t);
    assert_eq!(
        got,
        want,
        "key_reads_after_cache({}, queries {queries}, cached {cached}, tiles {} x {}) \
         returned {got}, expected {want}",
        kernel.name(),
        t.tile_q,
        t.tile_k
    );
}

#[test]
fn exercise_key_reads_after_cache() {
    let t = tiles(64, 64);
    // 200 new tokens after 1000 cached: row i reads 1001 + i keys.
    for kernel in [Kernel::Naive, Kernel::RowPerWorkgroup] {
        check_key_reads(kernel, 200, 1000, t, 220_100);
    }
    // Kernel 3's four workgroups end at queries 63, 127, 191 and 199, which see 1064,
    // 1128, 1192 and 1200 keys: 17, 18, 19 and 19 tiles, the last cut at key 1200.
    check_key_reads(Kernel::Flash, 200, 1000, t, 1088 + 1152 + 1200 + 1200);
    // No cache: the chapter's causal count.
    check_key_reads(Kernel::Flash, 200, 0, t, 584);
    // Decoding: one query sees the whole cache and itself.
    check_key_reads(Kernel::SplitKv { splits: 8 }, 1, 1999, t, 2000);
    check_key_reads(Kernel::Flash, 1, 1999, tiles(64, 16), 2000);
    // Tiles of other sizes, 32 queries and 16 keys: the last two workgroups reach
    // past key 150, and stop there.
    check_key_reads(Kernel::Flash, 100, 50, tiles(32, 16), 96 + 128 + 150 + 150);
}

proptest! {
    #![proptest_config(quiet(256))]

    /// Any sizes and tiles: the count of the kernels' own loops; with no cache, the
    /// chapter's causal count.
    #[test]
    fn exercise_key_reads_after_cache_any_sizes(
        queries in 1usize..120, cached in 0usize..200,
        tile_q in prop::sample::select(vec![1usize, 8, 32, 64]),
        tile_k in prop::sample::select(vec![1usize, 4, 16, 64]),
    ) {
        let t = tiles(tile_q, tile_k);
        for kernel in [Kernel::Naive, Kernel::RowPerWorkgroup, Kernel::Flash] {
            let case = format!(
                "key_reads_after_cache({}, queries {queries}, cached {cached}, tiles \
                 {tile_q} x {tile_k})",
                kernel.name()
            );
            prop_assert_eq!(
                key_reads_after_cache(kernel, queries, cached, t),
                traced_reads(kernel, queries, cached, t),
                "{}", case
            );
            prop_assert_eq!(
                key_reads_after_cache(kernel, queries, 0, t),
                key_reads(kernel, queries, queries, true, t),
                "{} with no cache", case
            );
        }
    }
}

fn check_tile(
    limit: usize,
    d: usize,
    d_v: usize,
    tile_q: usize,
    max_k: usize,
    want: usize,
) {
    let got = largest_tile_k_with_scores(limit, d, d_v, tile_q, max_k);
    assert_eq!(
        got, want,
        "largest_tile_k_with_scores(limit {limit} bytes, d {d}, d_v {d_v}, tile_q {tile_q}, \
         max_k {max_k}) returned {got}, expected {want}"
    );
}

#[test]
fn exercise_largest_tile_k_with_scores() {
    // 16 KiB, 64 queries of 16 features: 4 · tile_k · (16 + 16 + 64) bytes, 32 keys
    // (64 would take 24 KiB), where the registers' kernel takes 64.
    check_tile(16384, 16, 16, 64, 64, 32);
    assert_eq!(largest_tile_k(16384, 16, 16, 64), 64);
    // Heads of 64: 768 bytes a key, 16 keys; of 128: 1280 bytes a key, 8 keys.
    check_tile(16384, 64, 64, 64, 64, 16);
    check_tile(32768, 64, 64, 64, 64, 32);
    check_tile(16384, 128, 128, 64, 64, 8);
    check_tile(16384, 16, 16, 64, 8, 8);
    check_tile(384, 16, 16, 64, 64, 1);
    check_tile(383, 16, 16, 64, 64, 0);
    // No queries' scores: the chapter's tile.
    check_tile(16384, 64, 64, 0, 64, 32);
}

proptest! {
    #![proptest_config(quiet(256))]

    /// The tile and its scores fit, it is a power of two within the cap, and twice it
    /// would not do; without scores it is the chapter's tile.
    #[test]
    fn exercise_largest_tile_k_with_scores_any_limit(
        limit in 0usize..70_000, d in 1usize..200, d_v in 1usize..200,
        tile_q in prop::sample::select(vec![1usize, 16, 64, 256]),
        max_k in prop::sample::select(vec![1usize, 16, 64, 128]),
    ) {
        let case = format!(
            "largest_tile_k_with_scores(limit {limit} bytes, d {d}, d_v {d_v}, tile_q \
             {tile_q}, max_k {max_k})"
        );
        let bytes = |tile_k: usize| tile_bytes(tile_k, d, d_v) + 4 * tile_q * tile_k;
        let tile_k = largest_tile_k_with_scores(limit, d, d_v, tile_q, max_k);
        if tile_k == 0 {
            prop_assert!(bytes(1) > limit, "{} returned 0, but 1 key fits", case);
        } else {
            prop_assert!(
                tile_k.is_power_of_two() && tile_k <= max_k,
                "{} returned {}: not a power of two up to {}", case, tile_k, max_k
            );
            prop_assert!(bytes(tile_k) <= limit, "{} returned {}: too large", case, tile_k);
            prop_assert!(
                2 * tile_k > max_k || bytes(2 * tile_k) > limit,
                "{} returned {}, but {} fits", case, tile_k, 2 * tile_k
            );
        }
        prop_assert_eq!(
            largest_tile_k_with_scores(limit, d, d_v, 0, max_k),
            largest_tile_k(limit, d, d_v, max_k),
            "{} with no queries' scores", case
        );
    }
}

/// Runs the learner's `window_tiles` on the GPU for every case `[first_query,
/// last_query, keys, tile_k, window]`, returning each `[first, end]`.
fn window_tiles_on_the_gpu(cases: &[[u32; 5]]) -> Vec<[u32; 2]> {
    use wgpu::util::DeviceExt;
    let gpu = common::require_gpu();
    let probe = format!(
        "@group(0) @binding(0) var<storage, read> cases: array<u32>;\n\
         @group(0) @binding(1) var<storage, read_write> tiles: array<vec2u>;\n\
         @compute @workgroup_size(64)\n\
         fn probe(@builtin(global_invocation_id) id: vec3u) {{\n\
             if id.x >= arrayLength(&tiles) {{ return; }}\n\
             let c = 5u * id.x;\n\
             tiles[id.x] = window_tiles(cases[c], cases[c + 1u], cases[c + 2u], \
                                        cases[c + 3u], cases[c + 4u]);\n\
         }}\n{WINDOW_TILES}"
    );
    let module =
        compile(gpu, "window_tiles", &probe).unwrap_or_else(|e| panic!("{e}"));
    let device = &gpu.device;
    let input = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("cases"),
        contents: bytemuck::cast_slice(cases),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let size = 8 * cases.len() as u64;
    let output = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("tiles"),
        size,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let readable = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("tiles, readable"),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("window_tiles"),
        layout: None,
        module: &module,
        entry_point: Some("probe"),
        compilation_options: Default::default(),
        cache: None,
    });
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: input.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: output.as_entire_binding(),
            },
        ],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups((cases.len() as u32).div_ceil(64), 1, 1);
    }
    encoder.copy_buffer_to_buffer(&output, 0, &readable, 0, size);
    gpu.queue.submit([encoder.finish()]);
    readable.map_async(wgpu::MapMode::Read, .., |_| {});
    device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    let tiles =
        bytemuck::cast_slice::<u8, [u32; 2]>(&readable.get_mapped_range(..).unwrap())
            .to_vec();
    readable.unmap();
    tiles
}

/// The tiles a workgroup visits under a sliding window, found key by key: the first
/// and one past the last tile holding a key some query `first..=last` sees.
fn visited_tiles([first, last, keys, tile_k, window]: [u32; 5]) -> [u32; 2] {
    let seen = (first..=last)
        .flat_map(|i| (0..keys).filter(move |&j| j <= i && i < j + window))
        .map(|j| j / tile_k);
    let (mut lo, mut hi) = (u32::MAX, 0);
    for tile in seen {
        lo = lo.min(tile);
        hi = hi.max(tile + 1);
    }
    [lo, hi]
}

#[test]
fn exercise_causal_tiles() {
    let mut cases = Vec::new();
    for keys in [1u32, 7, 64, 65, 200] {
        for tile_q in [1u32, 16, 64] {
            for first in (0..keys).step_by(tile_q as usize) {
                let last = (first + tile_q).min(keys) - 1;
                for tile_k in [1u32, 16, 64] {
                    for window in [1u32, 3, 20, 64, 100, 1000] {
                        cases.push([first, last, keys, tile_k, window]);
                    }
                }
            }
        }
    }
    let got = window_tiles_on_the_gpu(&cases);
    for (&case, &got) in cases.iter().zip(&got) {
        let want = visited_tiles(case);
        let [first_query, last_query, keys, tile_k, window] = case;
        assert_eq!(
            got, want,
            "window_tiles(first_query = {first_query}, last_query = {last_query}, keys = \
             {keys}, tile_k = {tile_k}, window = {window}) returned {got:?} (first tile, \
             end), expected {want:?}"
        );
    }
}
