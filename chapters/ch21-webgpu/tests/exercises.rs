//! One test per exercise, named after it, so `cargo test -p ch21-webgpu --features exercise
//! NAME` checks just that one. The first two run on the CPU; `causal_tiles` runs the
//! learner's WGSL on the GPU and never skips: without an adapter it fails and says what to
//! install.

mod common;

use ch21_webgpu::kernels::{CAUSAL_TILES, Kernel};
use ch21_webgpu::key_reads::key_reads;
use ch21_webgpu::launch::{Launch, compile};
use ch21_webgpu::setup::{HostInputs, cpu_attention, draw_qkv};
use ch21_webgpu::tiles::TileSizes;
use ch21_webgpu::tolerance::{compare, tolerance};
use ch21_webgpu::workgroup_memory::{largest_tile_k, tile_bytes};
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

/// The keys each kernel reads, counted by following its loops as the WGSL files run them:
/// kernels 1, 2 and 4 read `k` once per visible key of each row; kernel 3 copies the
/// keys of every tile `key_tiles` lets a workgroup visit.
fn traced_reads(
    kernel: Kernel,
    queries: usize,
    keys: usize,
    causal: bool,
    t: TileSizes,
) -> usize {
    let visible = |i: usize| if causal { (i + 1).min(keys) } else { keys };
    let mut reads = 0;
    match kernel {
        Kernel::Flash => {
            let mut q_start = 0;
            while q_start < queries {
                let last_query = (q_start + t.tile_q).min(queries) - 1;
                let tiles = visible(last_query).div_ceil(t.tile_k);
                for tile in 0..tiles {
                    for j in 0..t.tile_k {
                        reads += usize::from(tile * t.tile_k + j < keys);
                    }
                }
                q_start += t.tile_q;
            }
        }
        _ => {
            for i in 0..queries {
                for _ in 0..visible(i) {
                    reads += 1;
                }
            }
        }
    }
    reads
}

#[test]
fn exercise_key_reads() {
    // The chapter's example: 200 tokens, tiles of 64 × 64, causal.
    let t = tiles(64, 64);
    for kernel in [Kernel::Naive, Kernel::RowPerWorkgroup] {
        assert_eq!(
            key_reads(kernel, 200, 200, true, t),
            20100,
            "{}",
            kernel.name()
        );
        assert_eq!(
            key_reads(kernel, 200, 200, false, t),
            40000,
            "{}",
            kernel.name()
        );
    }
    assert_eq!(key_reads(Kernel::Flash, 200, 200, true, t), 584);
    assert_eq!(key_reads(Kernel::Flash, 200, 200, false, t), 800);
    assert_eq!(
        key_reads(Kernel::SplitKv { splits: 8 }, 1, 2000, false, t),
        2000
    );
}

proptest! {
    #![proptest_config(quiet(256))]

    /// Any sizes and tiles: the count of the kernels' own loops.
    #[test]
    fn exercise_key_reads_any_sizes(
        queries in 1usize..300, keys in 1usize..300, causal: bool,
        tile_q in prop::sample::select(vec![1usize, 8, 32, 64]),
        tile_k in prop::sample::select(vec![1usize, 4, 16, 64]),
    ) {
        let t = tiles(tile_q, tile_k);
        for kernel in [Kernel::Naive, Kernel::RowPerWorkgroup, Kernel::Flash] {
            prop_assert_eq!(
                key_reads(kernel, queries, keys, causal, t),
                traced_reads(kernel, queries, keys, causal, t),
                "{} with {} queries, {} keys, causal {}, tiles {} x {}",
                kernel.name(), queries, keys, causal, tile_q, tile_k
            );
        }
    }
}

#[test]
fn exercise_largest_tile_k() {
    assert_eq!(tile_bytes(32, 64, 64), 16384);
    assert_eq!(tile_bytes(1, 16, 8), 96);
    // WebGPU's guaranteed 16 KiB: 32 keys of 64 features, the most of 64 for 16.
    assert_eq!(largest_tile_k(16384, 64, 64, 64), 32);
    assert_eq!(largest_tile_k(16384, 16, 16, 64), 64);
    assert_eq!(largest_tile_k(32768, 64, 64, 64), 64);
    assert_eq!(largest_tile_k(16384, 128, 128, 64), 16);
    assert_eq!(largest_tile_k(100, 64, 64, 64), 0, "not one key fits");
}

proptest! {
    #![proptest_config(quiet(256))]

    /// The tile fits, is a power of two within the cap, and twice it would not do.
    #[test]
    fn exercise_largest_tile_k_any_limit(
        limit in 0usize..70_000, d in 1usize..200, d_v in 1usize..200,
        max_tile_k in prop::sample::select(vec![1usize, 16, 64, 128]),
    ) {
        prop_assert_eq!(tile_bytes(3, d, d_v), 12 * (d + d_v));
        let tile_k = largest_tile_k(limit, d, d_v, max_tile_k);
        if tile_k == 0 {
            prop_assert!(tile_bytes(1, d, d_v) > limit);
        } else {
            prop_assert!(tile_k.is_power_of_two() && tile_k <= max_tile_k);
            prop_assert!(tile_bytes(tile_k, d, d_v) <= limit);
            prop_assert!(2 * tile_k > max_tile_k || tile_bytes(2 * tile_k, d, d_v) > limit);
        }
    }
}

/// Runs the learner's `key_tiles` on the GPU for every case `[last_query, keys, tile_k,
/// causal]`.
fn key_tiles_on_the_gpu(cases: &[[u32; 4]]) -> Vec<u32> {
    use wgpu::util::DeviceExt;
    let gpu = common::require_gpu();
    let probe = format!(
        "@group(0) @binding(0) var<storage, read> cases: array<vec4u>;\n\
         @group(0) @binding(1) var<storage, read_write> tiles: array<u32>;\n\
         @compute @workgroup_size(64)\n\
         fn probe(@builtin(global_invocation_id) id: vec3u) {{\n\
             if id.x >= arrayLength(&cases) {{ return; }}\n\
             let c = cases[id.x];\n\
             tiles[id.x] = key_tiles(c.x, c.y, c.z, c.w != 0u);\n\
         }}\n{CAUSAL_TILES}"
    );
    let module = compile(gpu, "key_tiles", &probe).unwrap_or_else(|e| panic!("{e}"));
    let device = &gpu.device;
    let input = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("cases"),
        contents: bytemuck::cast_slice(cases),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let size = 4 * cases.len() as u64;
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
        label: Some("key_tiles"),
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
        bytemuck::cast_slice(&readable.get_mapped_range(..).unwrap()).to_vec();
    readable.unmap();
    tiles
}

#[test]
fn exercise_causal_tiles() {
    let mut cases = Vec::new();
    let mut expected = Vec::new();
    for keys in [1u32, 7, 64, 65, 200] {
        for tile_k in [1u32, 16, 32, 64] {
            for last_query in [0u32, 5, 63, 64, 150, 300] {
                for causal in [false, true] {
                    cases.push([last_query, keys, tile_k, u32::from(causal)]);
                    let seen = if causal {
                        (last_query + 1).min(keys)
                    } else {
                        keys
                    };
                    expected.push(seen.div_ceil(tile_k));
                }
            }
        }
    }
    let got = key_tiles_on_the_gpu(&cases);
    for ((case, &want), &got) in cases.iter().zip(&expected).zip(&got) {
        let [last_query, keys, tile_k, causal] = *case;
        assert_eq!(
            got,
            want,
            "key_tiles(last_query = {last_query}, keys = {keys}, tile_k = {tile_k}, \
             causal = {}) returned {got}, expected {want}",
            causal != 0
        );
    }
    // Kernel 3 with it, against chapter 9 on the CPU; the tiles given, so that this test
    // does not wait for `largest_tile_k`.
    let gpu = common::require_gpu();
    for causal in [true, false] {
        let [q, k, v] = draw_qkv(21, &[2, 150, 16], &[2, 150, 16]);
        let host = HostInputs::new(&q, &k, &v);
        let launch = Launch::with_tiles(
            gpu,
            Kernel::Flash,
            &host.inputs(),
            causal,
            tiles(32, 16),
        )
        .unwrap();
        launch.run(gpu).unwrap();
        let got = launch.read(gpu).unwrap();
        let want = cpu_attention(&q, &k, &v, causal);
        let agreement = compare(&got, &want, &tolerance(&host.inputs(), causal, 150));
        assert!(
            agreement.within(),
            "kernel 3 (causal {causal}) with your key_tiles is {:.3e} from the CPU's result \
             at row {:?}: {} times the tolerance",
            agreement.largest_difference,
            agreement.worst_at,
            agreement.worst_ratio
        );
    }
}
