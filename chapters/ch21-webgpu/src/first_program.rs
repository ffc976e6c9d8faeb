//! The first GPU program: add two arrays. Every step of the host code, once, in one
//! function: buffers, a WGSL kernel compiled into a pipeline, a bind group, a
//! dispatch, and the read-back. The attention kernels take the same steps
//! ([`crate::launch`]).

use wgpu::util::DeviceExt;

use crate::device::Gpu;
use crate::error::{GpuError, Result};

/// The kernel: one invocation per element, in workgroups of 64.
pub const ADD: &str = include_str!("../kernels/00_add.wgsl");
/// The invocations of one workgroup, as `@workgroup_size` in [`ADD`] says.
pub const WORKGROUP: usize = 64;

/// `a + b`, element by element, computed on the GPU.
///
/// # Shapes
/// `a`, `b`: `[n]`, `n` at least 1; returns `[n]`.
// ANCHOR: add_arrays
pub fn add_arrays(gpu: &Gpu, a: &[f32], b: &[f32]) -> Result<Vec<f32>> {
    let workgroups = check_sizes(gpu, a.len(), b.len())?;
    let device = &gpu.device;

    // 1. Buffers in the GPU's global memory: the inputs copied in, an empty one for
    //    the sum, and one the CPU can map to read the sum back.
    let input = |data: &[f32]| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: bytemuck::cast_slice(data),
            usage: wgpu::BufferUsages::STORAGE,
        })
    };
    let (a_buffer, b_buffer) = (input(a), input(b));
    let bytes = 4 * a.len() as u64;
    let sum_buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("sum"),
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let readable = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("sum, readable"),
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });

    // 2. A pipeline: the device compiles the WGSL; its bindings come from the source.
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("add"),
        source: wgpu::ShaderSource::Wgsl(ADD.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("add"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });

    // 3. A bind group: buffer `a` is `@binding(0)`, `b` is 1, `sum` is 2.
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: a_buffer.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: b_buffer.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: sum_buffer.as_entire_binding(),
            },
        ],
    });

    // 4. A dispatch of ceil(n / 64) workgroups, then a copy of the sum into the
    //    readable buffer; nothing runs until the commands are submitted.
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(workgroups, 1, 1);
    }
    encoder.copy_buffer_to_buffer(&sum_buffer, 0, &readable, 0, bytes);
    gpu.queue.submit([encoder.finish()]);

    // 5. The read-back: map the buffer, wait for the GPU to finish, copy the floats.
    let (sender, receiver) = std::sync::mpsc::channel();
    readable.map_async(wgpu::MapMode::Read, .., move |mapped| {
        let _ = sender.send(mapped);
    });
    let failed = |e: &dyn std::fmt::Display| GpuError::Device {
        kernel: "add_arrays",
        message: format!("reading the sum back failed: {e}"),
    };
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| failed(&e))?;
    receiver
        .recv()
        .map_err(|e| failed(&e))?
        .map_err(|e| failed(&e))?;
    let view = readable.get_mapped_range(..).map_err(|e| failed(&e))?;
    Ok(bytemuck::cast_slice::<u8, f32>(&view).to_vec())
}
// ANCHOR_END: add_arrays

/// The workgroups `add_arrays` starts for arrays of `a_len` and `b_len` floats, or an
/// error naming the sizes: the arrays differ in length, are empty (a binding may not
/// be), or need more workgroups than the device starts in one dimension.
fn check_sizes(gpu: &Gpu, a_len: usize, b_len: usize) -> Result<u32> {
    let shape_error = |detail: String| GpuError::Shape {
        kernel: "add_arrays",
        detail,
    };
    if a_len != b_len {
        return Err(shape_error(format!(
            "a [{a_len}] and b [{b_len}] differ in length"
        )));
    }
    if a_len == 0 {
        return Err(shape_error("a [0] and b [0]: nothing to add".into()));
    }
    let workgroups = a_len.div_ceil(WORKGROUP);
    let limit = gpu.limits.max_compute_workgroups_per_dimension;
    if workgroups > limit as usize {
        return Err(GpuError::OverLimit {
            kernel: "add_arrays",
            sizes: format!("a [{a_len}], b [{b_len}]"),
            what: format!("workgroups of {WORKGROUP} invocations"),
            needed: workgroups as u64,
            limit_name: "max_compute_workgroups_per_dimension",
            limit: limit.into(),
        });
    }
    Ok(workgroups as u32)
}
