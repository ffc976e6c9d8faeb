//! A GPU's `exp` is not PyTorch's: WGSL promises `exp(x)` within `3 + 2|x|` units in the
//! last place, where PyTorch's CPU `exp` is within one. This runs `exp` on the GPU at the
//! chapter's points and compares with PyTorch's values (the chapter prints those, checked
//! against the reference script): within the promise on every adapter, and on lavapipe a
//! snapshot of the values, which the book shows.

mod common;

use ch21_webgpu::launch::compile;
use ch21_webgpu::setup::EXP_AT;
use shared::Tensor;
use wgpu::util::DeviceExt;

/// `exp(x)` of every `x` on the GPU.
fn exp_on_the_gpu(gpu: &ch21_webgpu::device::Gpu, x: &[f32]) -> Vec<f32> {
    let source = "@group(0) @binding(0) var<storage, read_write> x: array<f32>;\n\
                  @compute @workgroup_size(64)\n\
                  fn main(@builtin(global_invocation_id) id: vec3u) {\n\
                      if id.x < arrayLength(&x) { x[id.x] = exp(x[id.x]); }\n\
                  }";
    let module = compile(gpu, "exp", source).unwrap();
    let device = &gpu.device;
    let size = 4 * x.len() as u64;
    let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("x"),
        contents: bytemuck::cast_slice(x),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
    });
    let readable = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("exp(x)"),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("exp"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: buffer.as_entire_binding(),
        }],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups((x.len() as u32).div_ceil(64), 1, 1);
    }
    encoder.copy_buffer_to_buffer(&buffer, 0, &readable, 0, size);
    gpu.queue.submit([encoder.finish()]);
    readable.map_async(wgpu::MapMode::Read, .., |_| {});
    device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    let values =
        bytemuck::cast_slice(&readable.get_mapped_range(..).unwrap()).to_vec();
    readable.unmap();
    values
}

/// `x` with 9 significant digits and a two-digit exponent, as the chapter prints PyTorch's.
fn scientific(x: f32) -> String {
    let text = format!("{:.8e}", f64::from(x));
    let (mantissa, exponent) = text.split_once('e').expect("an exponent");
    let exponent: i32 = exponent.parse().expect("a number");
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.abs())
}

/// The distance from `y` to the next float up: one unit in the last place.
fn spacing(y: f32) -> f64 {
    f64::from(f32::from_bits(y.to_bits() + 1)) - f64::from(y)
}

#[test]
fn exp_on_the_gpu_within_wgsl_s_promise() {
    let Some(gpu) = common::gpu() else {
        return;
    };
    let pytorch = Tensor::from_vec(EXP_AT.to_vec(), &[EXP_AT.len()])
        .exp()
        .to_vec();
    let got = exp_on_the_gpu(gpu, &EXP_AT);
    let mut table =
        String::from("x        on the GPU      in PyTorch      GPU - PyTorch\n");
    for ((&x, &ours), &theirs) in EXP_AT.iter().zip(&got).zip(&pytorch) {
        let units = (f64::from(ours) - f64::from(theirs)).abs() / spacing(theirs);
        // WGSL's promise, plus PyTorch's own unit.
        assert!(
            units <= 3.0 + 2.0 * f64::from(x.abs()) + 1.0,
            "exp({x}) = {ours} on the GPU, {theirs} in PyTorch: {units} units apart"
        );
        table.push_str(&format!(
            "{x:<8} {:<15} {:<15} {:+.2e}\n",
            scientific(ours),
            scientific(theirs),
            f64::from(ours) - f64::from(theirs)
        ));
    }
    if common::is_lavapipe(gpu) {
        insta::assert_snapshot!("exp_on_lavapipe", table);
    }
}
