//! Mistakes come back as errors naming the kernel, the sizes and the limit, never as a
//! panic inside wgpu.

mod common;

use ch09_flash_attention::kernel::AttentionShape;
use ch21_webgpu::error::GpuError;
use ch21_webgpu::kernels::Kernel;
use ch21_webgpu::launch::{Inputs, attention, compile};

fn inputs(shape: AttentionShape, buffers: &mut Vec<Vec<f32>>) -> Inputs<'_> {
    let AttentionShape {
        heads,
        queries,
        keys,
        d,
        d_v,
    } = shape;
    *buffers = vec![
        vec![0.5; heads * queries * d],
        vec![0.25; heads * keys * d],
        vec![1.0; heads * keys * d_v],
    ];
    Inputs {
        q: &buffers[0],
        k: &buffers[1],
        v: &buffers[2],
        shape,
    }
}

fn shape(
    heads: usize,
    queries: usize,
    keys: usize,
    d: usize,
    d_v: usize,
) -> AttentionShape {
    AttentionShape {
        heads,
        queries,
        keys,
        d,
        d_v,
    }
}

#[test]
fn a_buffer_over_the_binding_limit_names_the_kernel_the_sizes_and_the_limit() {
    let Some(gpu) = common::gpu() else {
        return;
    };
    let limit = gpu
        .limits
        .max_storage_buffer_binding_size
        .min(gpu.limits.max_buffer_size);
    // Kernel 1 writes all the scores: n × n floats, over the limit.
    let n = ((limit / 4) as f64).sqrt() as usize + 1;
    let mut buffers = Vec::new();
    let error = attention(
        gpu,
        Kernel::Naive,
        &inputs(shape(1, n, n, 1, 1), &mut buffers),
        false,
    )
    .unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, GpuError::OverLimit { .. }), "{message}");
    for part in [
        "kernel 1 (naive)",
        &format!("queries {n}, keys {n}"),
        "the scores",
        "max_storage_buffer_binding_size",
        &limit.to_string(),
    ] {
        assert!(message.contains(part), "{part:?} not in {message:?}");
    }
}

#[test]
fn a_row_over_the_workgroup_memory_names_the_limit() {
    let Some(gpu) = common::gpu() else {
        return;
    };
    let keys = gpu.limits.max_compute_workgroup_storage_size as usize / 4;
    let mut buffers = Vec::new();
    let sizes = shape(1, 1, keys, 2, 2);
    let error = attention(
        gpu,
        Kernel::RowPerWorkgroup,
        &inputs(sizes, &mut buffers),
        false,
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("kernel 2"), "{error}");
    assert!(
        error.contains("max_compute_workgroup_storage_size"),
        "{error}"
    );
    // Kernel 3 reads the keys in tiles: the same row is no problem.
    let out =
        attention(gpu, Kernel::Flash, &inputs(sizes, &mut buffers), false).unwrap();
    assert!((out.out[0] - 1.0).abs() < 1e-6, "{}", out.out[0]);
}

#[test]
fn wgsl_that_does_not_compile_is_an_error_naming_the_kernel() {
    let Some(gpu) = common::gpu() else {
        return;
    };
    let broken = "@compute @workgroup_size(64)\nfn main() { let x: f32 = 1u; }";
    let error = compile(gpu, "a broken kernel", broken)
        .unwrap_err()
        .to_string();
    assert!(error.starts_with("a broken kernel"), "{error}");
    assert!(error.contains("the GPU rejected it"), "{error}");
    // The device is still usable afterwards.
    let mut buffers = Vec::new();
    attention(
        gpu,
        Kernel::Flash,
        &inputs(shape(1, 2, 2, 2, 2), &mut buffers),
        true,
    )
    .unwrap();
}

#[test]
fn shapes_that_do_not_fit_are_errors() {
    let Some(gpu) = common::gpu() else {
        return;
    };
    let mut buffers = Vec::new();
    let mut bad = inputs(shape(1, 4, 4, 2, 2), &mut buffers);
    bad.shape.queries = 5;
    let error = attention(gpu, Kernel::Naive, &bad, false)
        .unwrap_err()
        .to_string();
    assert!(error.contains("do not fit q [1, 5, 2]"), "{error}");
    let mut buffers = Vec::new();
    let wide = inputs(shape(1, 4, 4, 100, 2), &mut buffers);
    let error = attention(gpu, Kernel::Flash, &wide, false)
        .unwrap_err()
        .to_string();
    assert!(error.contains("d = 100"), "{error}");
    let mut buffers = Vec::new();
    let split = Kernel::SplitKv { splits: 2 };
    let error = attention(
        gpu,
        split,
        &inputs(shape(1, 1, 4, 2, 2), &mut buffers),
        true,
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("no causal mask"), "{error}");
}
