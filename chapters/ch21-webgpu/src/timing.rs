//! Timing a kernel on the device: timestamp queries where the adapter has them (the GPU
//! writes the time before and after the pass), else the wall clock around submitting the
//! work and waiting for it. Pipelines are made before, never timed.

use std::time::{Duration, Instant};

use crate::device::Gpu;
use crate::error::{GpuError, Result};
use crate::launch::{Launch, wait};

/// How a time was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// The GPU's timestamps around the compute pass.
    Timestamps,
    /// The CPU's clock around submit and wait.
    WallClock,
}

/// Runs `launch` once and returns how long the GPU took, and how that was measured.
pub fn time_once(gpu: &Gpu, launch: &Launch) -> Result<(Duration, Clock)> {
    if !gpu.timestamps {
        let started = Instant::now();
        launch.run(gpu)?;
        return Ok((started.elapsed(), Clock::WallClock));
    }
    let queries = gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
        label: Some("timestamps"),
        ty: wgpu::QueryType::Timestamp,
        count: 2,
    });
    let resolved = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("timestamps"),
        size: 16,
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let readable = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("timestamps, readable"),
        size: 16,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    launch.encode(&mut encoder, Some(&queries));
    encoder.resolve_query_set(&queries, 0..2, &resolved, 0);
    encoder.copy_buffer_to_buffer(&resolved, 0, &readable, 0, 16);
    gpu.queue.submit([encoder.finish()]);
    readable.map_async(wgpu::MapMode::Read, .., |_| {});
    wait(gpu, launch.kernel())?;
    let ticks: [u64; 2] = {
        let view = readable
            .get_mapped_range(..)
            .map_err(|e| GpuError::Device {
                kernel: launch.kernel().name(),
                message: format!("reading the timestamps failed: {e}"),
            })?;
        let values: &[u64] = bytemuck::cast_slice(&view);
        [values[0], values[1]]
    };
    readable.unmap();
    let nanos = ticks[1].saturating_sub(ticks[0]) as f64
        * f64::from(gpu.queue.get_timestamp_period());
    Ok((Duration::from_nanos(nanos as u64), Clock::Timestamps))
}
