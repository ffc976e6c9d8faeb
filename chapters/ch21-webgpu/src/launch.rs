//! The host code: what runs on the CPU to run a kernel on the GPU.
//!
//! 1. **Buffers**: the inputs are copied into storage buffers on the device, the output
//!    and log-sum-exp get buffers of their own, and the sizes go into a small uniform
//!    buffer (`Shape` in the WGSL files).
//! 2. **A pipeline**: the device compiles the WGSL source, with the tile sizes filled into
//!    its `override` constants.
//! 3. **A bind group**: which buffer is `@binding(0)`, `@binding(1)`, ...
//! 4. **A dispatch**: how many workgroups to start, in a grid of up to three dimensions.
//! 5. **Reading back**: the results are copied into buffers the CPU can map, and read.
//!
//! The device checks each step and reports a mistake later, asynchronously. Every step
//! here runs inside two error scopes, one for validation errors and one for running out
//! of memory, and what they catch is returned as a [`GpuError`] naming the kernel and the
//! sizes; sizes beyond the adapter's limits are refused before anything is sent.

use bytemuck::{Pod, Zeroable};
use ch09_flash_attention::kernel::AttentionShape;
use wgpu::util::DeviceExt;

use crate::device::Gpu;
use crate::error::{GpuError, Result};
use crate::kernels::Kernel;
use crate::tiles::{HEAD_DIM_MAX, TILE_K_MAX, TileSizes, WORKGROUP};

/// The inputs of one call, as row-major `f32` slices.
///
/// # Shapes
/// `q`: `[heads, queries, d]`, `k`: `[heads, keys, d]`, `v`: `[heads, keys, d_v]`, with
/// the sizes in `shape`.
#[derive(Clone, Copy, Debug)]
pub struct Inputs<'a> {
    /// The queries.
    pub q: &'a [f32],
    /// The keys.
    pub k: &'a [f32],
    /// The values.
    pub v: &'a [f32],
    /// Their sizes.
    pub shape: AttentionShape,
}

/// What a kernel returns: the attention and each row's log-sum-exp.
#[derive(Clone, Debug, PartialEq)]
pub struct Outputs {
    /// `[heads, queries, d_v]`.
    pub out: Vec<f32>,
    /// `[heads, queries]`: `log Σⱼ exp(q·kⱼ/√d)` over the keys the query sees.
    pub lse: Vec<f32>,
}

/// The uniform buffer every kernel reads: `struct Shape` of the WGSL files.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct ShapeUniform {
    heads: u32,
    queries: u32,
    keys: u32,
    d: u32,
    d_v: u32,
    causal: u32,
    scale: f32,
    splits: u32,
}

/// One compute pass: a pipeline, its bindings and how many workgroups it starts.
struct Pass {
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    workgroups: [u32; 3],
}

/// A kernel ready to run: its buffers filled, its pipelines compiled, its bind groups
/// made. [`Launch::run`] runs it (as often as wanted), [`Launch::read`] reads the results.
pub struct Launch {
    kernel: Kernel,
    sizes: String,
    passes: Vec<Pass>,
    out: wgpu::Buffer,
    lse: wgpu::Buffer,
    scratch: Vec<wgpu::Buffer>,
    tiles: TileSizes,
}

/// Runs `kernel` once on `inputs` and reads its results back.
///
/// # Shapes
/// As [`Inputs`]; returns `out` `[heads, queries, d_v]`, `lse` `[heads, queries]`.
pub fn attention(
    gpu: &Gpu,
    kernel: Kernel,
    inputs: &Inputs,
    causal: bool,
) -> Result<Outputs> {
    let launch = Launch::new(gpu, kernel, inputs, causal)?;
    launch.run(gpu)?;
    launch.read(gpu)
}

impl Launch {
    /// Checks the sizes against the kernel and the device, then makes the buffers,
    /// pipelines and bind groups of one call.
    ///
    /// # Shapes
    /// As [`Inputs`].
    pub fn new(
        gpu: &Gpu,
        kernel: Kernel,
        inputs: &Inputs,
        causal: bool,
    ) -> Result<Launch> {
        let tiles =
            TileSizes::for_limits(&gpu.limits, inputs.shape.d, inputs.shape.d_v);
        Launch::with_tiles(gpu, kernel, inputs, causal, tiles)
    }

    /// [`Launch::new`] with chosen tile sizes instead of the largest the device allows (a
    /// tile the device's workgroup memory cannot hold is an error).
    ///
    /// # Shapes
    /// As [`Inputs`].
    pub fn with_tiles(
        gpu: &Gpu,
        kernel: Kernel,
        inputs: &Inputs,
        causal: bool,
        tiles: TileSizes,
    ) -> Result<Launch> {
        let shape = inputs.shape;
        let sizes = format!(
            "heads {}, queries {}, keys {}, d {}, d_v {}{}",
            shape.heads,
            shape.queries,
            shape.keys,
            shape.d,
            shape.d_v,
            if causal { ", causal" } else { "" }
        );
        check_inputs(kernel, inputs, causal)?;
        let plan = Plan::new(gpu, kernel, shape, tiles, &sizes)?;
        let module = compile(gpu, kernel.name(), &kernel.source())?;
        let errors = ErrorScopes::push(gpu);
        let uniform = ShapeUniform {
            heads: shape.heads as u32,
            queries: shape.queries as u32,
            keys: shape.keys as u32,
            d: shape.d as u32,
            d_v: shape.d_v as u32,
            causal: u32::from(causal),
            scale: 1.0 / (shape.d as f32).sqrt(),
            splits: plan.splits,
        };
        // ANCHOR: launch_new
        let buffers = Buffers::new(gpu, &uniform, inputs, &plan);
        let mut passes = Vec::new();
        for &(entry, workgroups, bindings) in &plan.passes {
            let pipeline = make_pipeline(gpu, &module, entry, &plan.constants);
            let bind_group = buffers.bind_group(gpu, &pipeline, bindings);
            passes.push(Pass {
                pipeline,
                bind_group,
                workgroups,
            });
        }
        // ANCHOR_END: launch_new
        errors.pop(gpu, kernel.name(), &sizes)?;
        Ok(Launch {
            kernel,
            sizes,
            passes,
            out: buffers.out,
            lse: buffers.lse,
            scratch: buffers.scratch,
            tiles,
        })
    }

    /// The kernel this launch runs.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The tile sizes the kernel was compiled with.
    pub fn tiles(&self) -> TileSizes {
        self.tiles
    }

    /// Records the kernel's passes into `encoder`, timed into `timestamps` (two queries,
    /// before and after) if given.
    pub fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        timestamps: Option<&wgpu::QuerySet>,
    ) {
        let timestamp_writes =
            timestamps.map(|query_set| wgpu::ComputePassTimestampWrites {
                query_set,
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: Some(1),
            });
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(self.kernel.name()),
            timestamp_writes,
        });
        // ANCHOR: dispatch
        for step in &self.passes {
            pass.set_pipeline(&step.pipeline);
            pass.set_bind_group(0, &step.bind_group, &[]);
            let [x, y, z] = step.workgroups;
            pass.dispatch_workgroups(x, y, z);
        }
        // ANCHOR_END: dispatch
    }

    /// Runs the kernel once and waits for the GPU to finish.
    pub fn run(&self, gpu: &Gpu) -> Result<()> {
        let errors = ErrorScopes::push(gpu);
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        self.encode(&mut encoder, None);
        gpu.queue.submit([encoder.finish()]);
        wait(gpu, self.kernel)?;
        errors.pop(gpu, self.kernel.name(), &self.sizes)
    }

    /// Copies the results into buffers the CPU can read and reads them.
    ///
    /// # Shapes
    /// Returns `out` `[heads, queries, d_v]`, `lse` `[heads, queries]`.
    pub fn read(&self, gpu: &Gpu) -> Result<Outputs> {
        let errors = ErrorScopes::push(gpu);
        let out = read_back(gpu, &self.out, self.kernel)?;
        let lse = read_back(gpu, &self.lse, self.kernel)?;
        errors.pop(gpu, self.kernel.name(), &self.sizes)?;
        Ok(Outputs { out, lse })
    }
}

impl Launch {
    /// Kernel 4's parts, read back: each part's maximum score and its sum of
    /// `exp(s - max)`.
    ///
    /// # Shapes
    /// Returns two `[heads · queries, splits]`; an error for the other kernels.
    pub fn read_parts(&self, gpu: &Gpu) -> Result<(Vec<f32>, Vec<f32>)> {
        let [part_max, part_sum, _] = self.scratch.as_slice() else {
            return Err(GpuError::Shape {
                kernel: self.kernel.name(),
                detail: "only kernel 4 computes parts".into(),
            });
        };
        let errors = ErrorScopes::push(gpu);
        let max = read_back(gpu, part_max, self.kernel)?;
        let sum = read_back(gpu, part_sum, self.kernel)?;
        errors.pop(gpu, self.kernel.name(), &self.sizes)?;
        Ok((max, sum))
    }
}

/// A compute pipeline of `module`'s entry point `entry`, its `override` constants set to
/// `constants`; its bind group layout is the one the WGSL declares.
// ANCHOR: make_pipeline
fn make_pipeline(
    gpu: &Gpu,
    module: &wgpu::ShaderModule,
    entry: &str,
    constants: &[(&str, f64)],
) -> wgpu::ComputePipeline {
    let descriptor = wgpu::ComputePipelineDescriptor {
        label: Some(entry),
        layout: None,
        module,
        entry_point: Some(entry),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants,
            ..Default::default()
        },
        cache: None,
    };
    gpu.device.create_compute_pipeline(&descriptor)
}
// ANCHOR_END: make_pipeline

/// Compiles WGSL `source` into a shader module; a source the device rejects is an error
/// naming `kernel` and the device's message (with the line and column).
pub fn compile(
    gpu: &Gpu,
    kernel: &'static str,
    source: &str,
) -> Result<wgpu::ShaderModule> {
    let errors = ErrorScopes::push(gpu);
    let module = gpu
        .device
        .create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(kernel),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
    errors.pop(gpu, kernel, "compiling its WGSL")?;
    Ok(module)
}

/// The shapes fit together and fit the kernel.
fn check_inputs(kernel: Kernel, inputs: &Inputs, causal: bool) -> Result<()> {
    let AttentionShape {
        heads,
        queries,
        keys,
        d,
        d_v,
    } = inputs.shape;
    let error = |detail: String| {
        Err(GpuError::Shape {
            kernel: kernel.name(),
            detail,
        })
    };
    if inputs.q.len() != heads * queries * d
        || inputs.k.len() != heads * keys * d
        || inputs.v.len() != heads * keys * d_v
    {
        return error(format!(
            "buffers of {}, {} and {} floats do not fit q [{heads}, {queries}, {d}], \
             k [{heads}, {keys}, {d}], v [{heads}, {keys}, {d_v}]",
            inputs.q.len(),
            inputs.k.len(),
            inputs.v.len()
        ));
    }
    if heads == 0 || queries == 0 || keys == 0 || d == 0 || d_v == 0 {
        return error(format!(
            "every size must be positive, got heads {heads}, queries {queries}, keys {keys}, \
             d {d}, d_v {d_v}"
        ));
    }
    if kernel == Kernel::Flash && d.max(d_v) > HEAD_DIM_MAX {
        return error(format!(
            "d = {d} and d_v = {d_v}: this kernel keeps a row in registers, at most \
             {HEAD_DIM_MAX} features"
        ));
    }
    if let Kernel::SplitKv { splits } = kernel {
        if causal {
            return error(
                "split-KV decoding has no causal mask: the new query sees the whole cache".into(),
            );
        }
        if splits == 0 {
            return error("the keys must be cut into at least one part".into());
        }
    }
    Ok(())
}

/// What one call needs from the device: the entry points and their grids, the override
/// constants, and the size of every buffer; checked against the device's limits.
struct Plan {
    /// Each pass's entry point, grid of workgroups and the `@binding`s it uses.
    passes: Vec<(&'static str, [u32; 3], &'static [u32])>,
    constants: Vec<(&'static str, f64)>,
    splits: u32,
    /// Floats of the scores buffer (kernel 1) or of the parts' outputs (kernel 4).
    scratch: usize,
}

impl Plan {
    fn new(
        gpu: &Gpu,
        kernel: Kernel,
        shape: AttentionShape,
        tiles: TileSizes,
        sizes: &str,
    ) -> Result<Plan> {
        let AttentionShape {
            heads,
            queries,
            keys,
            d,
            d_v,
        } = shape;
        let limits = &gpu.limits;
        let over = |what: String, needed: usize, limit_name, limit: u64| {
            GpuError::OverLimit {
                kernel: kernel.name(),
                sizes: sizes.to_string(),
                what,
                needed: needed as u64,
                limit_name,
                limit,
            }
        };
        let rows = heads * queries;
        let (passes, constants, splits, scratch) = match kernel {
            Kernel::Naive => {
                let grid = [rows.div_ceil(WORKGROUP), 1, 1];
                (vec![("main", grid, ALL_SEVEN)], vec![], 0, rows * keys)
            }
            Kernel::RowPerWorkgroup => {
                if keys > tiles.row_capacity {
                    return Err(over(
                        format!("a row of {keys} scores in workgroup memory (bytes)"),
                        4 * (keys + WORKGROUP),
                        "max_compute_workgroup_storage_size",
                        limits.max_compute_workgroup_storage_size.into(),
                    ));
                }
                let constants = vec![("ROW_CAPACITY", keys.max(1) as f64)];
                (
                    vec![("main", [queries, heads, 1], FORWARD)],
                    constants,
                    0,
                    0,
                )
            }
            // ANCHOR: flash_plan
            Kernel::Flash => {
                if tiles.tile_k > TILE_K_MAX || tiles.tile_q == 0 {
                    return Err(GpuError::Shape {
                        kernel: kernel.name(),
                        detail: format!(
                            "tiles of {} queries and {} keys: the kernel takes 1 query and \
                             at most {TILE_K_MAX} keys",
                            tiles.tile_q, tiles.tile_k
                        ),
                    });
                }
                if tiles.tile_k == 0 {
                    return Err(over(
                        format!(
                            "one key and one value of {d} and {d_v} floats (bytes)"
                        ),
                        4 * (d + d_v),
                        "max_compute_workgroup_storage_size",
                        limits.max_compute_workgroup_storage_size.into(),
                    ));
                }
                let constants = vec![
                    ("TILE_Q", tiles.tile_q as f64),
                    ("TILE_K", tiles.tile_k as f64),
                    ("K_TILE_FLOATS", (tiles.tile_k * d) as f64),
                    ("V_TILE_FLOATS", (tiles.tile_k * d_v) as f64),
                ];
                // One workgroup per tile of queries (x) of each head (y).
                let grid = [queries.div_ceil(tiles.tile_q), heads, 1];
                (vec![("main", grid, FORWARD)], constants, 0, 0)
            }
            // ANCHOR_END: flash_plan
            Kernel::SplitKv { splits } => {
                let part_len = keys.div_ceil(splits as usize);
                if part_len > tiles.row_capacity {
                    return Err(over(
                        format!(
                            "a part of {part_len} scores in workgroup memory (bytes)"
                        ),
                        4 * (part_len + WORKGROUP),
                        "max_compute_workgroup_storage_size",
                        limits.max_compute_workgroup_storage_size.into(),
                    ));
                }
                let constants = vec![("PART_CAPACITY", part_len as f64)];
                let passes = vec![
                    ("partials", [splits as usize, rows, 1], PARTIALS),
                    ("merge", [d_v.div_ceil(WORKGROUP), rows, 1], MERGE),
                ];
                (passes, constants, splits, rows * splits as usize * d_v)
            }
        };
        let max_groups = limits.max_compute_workgroups_per_dimension;
        let mut checked_passes = Vec::new();
        for (entry, grid, bindings) in passes {
            for (axis, &count) in ["x", "y", "z"].iter().zip(&grid) {
                if count > max_groups as usize {
                    return Err(over(
                        format!("a grid of {grid:?} workgroups ({axis})"),
                        count,
                        "max_compute_workgroups_per_dimension",
                        max_groups.into(),
                    ));
                }
            }
            checked_passes.push((entry, grid.map(|n| n as u32), bindings));
        }
        let binding = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        let buffers = [
            ("q", rows * d),
            ("k", heads * keys * d),
            ("v", heads * keys * d_v),
            ("the output", rows * d_v),
            (
                match kernel {
                    Kernel::Naive => "the scores",
                    _ => "the parts' outputs",
                },
                scratch,
            ),
        ];
        for (name, floats) in buffers {
            let bytes = 4 * floats as u64;
            if bytes > binding {
                return Err(over(
                    format!("{name} (bytes)"),
                    bytes as usize,
                    "max_storage_buffer_binding_size",
                    binding,
                ));
            }
        }
        Ok(Plan {
            passes: checked_passes,
            constants,
            splits,
            scratch,
        })
    }
}

/// The `@binding`s of the entry points: kernels 2 and 3 use `shape`, `q`, `k`, `v`, `out`
/// and `lse`; kernel 1 also `scores`; kernel 4's `partials` reads the inputs and writes the
/// parts, its `merge` reads the parts and writes `out` and `lse`.
const FORWARD: &[u32] = &[0, 1, 2, 3, 4, 5];
const ALL_SEVEN: &[u32] = &[0, 1, 2, 3, 4, 5, 6];
const PARTIALS: &[u32] = &[0, 1, 2, 3, 6, 7, 8];
const MERGE: &[u32] = &[0, 4, 5, 6, 7, 8];

/// The buffers of one call.
struct Buffers {
    shape: wgpu::Buffer,
    q: wgpu::Buffer,
    k: wgpu::Buffer,
    v: wgpu::Buffer,
    out: wgpu::Buffer,
    lse: wgpu::Buffer,
    /// Kernel 1's scores, or kernel 4's parts: maxima, sums, outputs.
    scratch: Vec<wgpu::Buffer>,
}

impl Buffers {
    fn new(
        gpu: &Gpu,
        uniform: &ShapeUniform,
        inputs: &Inputs,
        plan: &Plan,
    ) -> Buffers {
        let device = &gpu.device;
        // ANCHOR: buffers
        let input = |label, data: &[f32]| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytemuck::cast_slice(data),
                usage: wgpu::BufferUsages::STORAGE,
            })
        };
        let output = |label, floats: usize| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                // At least one float: a binding may not be empty.
                size: 4 * floats.max(1) as u64,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        };
        // ANCHOR_END: buffers
        let shape = inputs.shape;
        let rows = shape.heads * shape.queries;
        let parts = rows * plan.splits as usize;
        let scratch = match plan.splits {
            0 => vec![output("scores", plan.scratch)],
            _ => vec![
                output("part_max", parts),
                output("part_sum", parts),
                output("part_out", plan.scratch),
            ],
        };
        Buffers {
            shape: device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("shape"),
                contents: bytemuck::bytes_of(uniform),
                usage: wgpu::BufferUsages::UNIFORM,
            }),
            q: input("q", inputs.q),
            k: input("k", inputs.k),
            v: input("v", inputs.v),
            out: output("out", rows * shape.d_v),
            lse: output("lse", rows),
            scratch,
        }
    }

    /// The bind group of `pipeline`: the buffer of each `@binding` its entry point uses
    /// (the layout the device derives from the WGSL holds only those).
    fn bind_group(
        &self,
        gpu: &Gpu,
        pipeline: &wgpu::ComputePipeline,
        bindings: &[u32],
    ) -> wgpu::BindGroup {
        // ANCHOR: bind_group
        let layout = pipeline.get_bind_group_layout(0);
        let mut all =
            vec![&self.shape, &self.q, &self.k, &self.v, &self.out, &self.lse];
        all.extend(&self.scratch);
        let entries: Vec<wgpu::BindGroupEntry> = bindings
            .iter()
            .map(|&binding| wgpu::BindGroupEntry {
                binding,
                resource: all[binding as usize].as_entire_binding(),
            })
            .collect();
        gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &layout,
            entries: &entries,
        })
        // ANCHOR_END: bind_group
    }
}

/// The validation and out-of-memory scopes around one step.
struct ErrorScopes {
    out_of_memory: wgpu::ErrorScopeGuard,
    validation: wgpu::ErrorScopeGuard,
}

impl ErrorScopes {
    fn push(gpu: &Gpu) -> ErrorScopes {
        let validation = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let out_of_memory =
            gpu.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        ErrorScopes {
            out_of_memory,
            validation,
        }
    }

    /// Pops both scopes (the inner one first) and returns the first error they caught, or
    /// one the uncaptured-error handler received meanwhile.
    fn pop(self, gpu: &Gpu, kernel: &'static str, sizes: &str) -> Result<()> {
        let out_of_memory = pollster::block_on(self.out_of_memory.pop());
        let validation = pollster::block_on(self.validation.pop());
        let sizes = sizes.to_string();
        if let Some(error) = out_of_memory {
            return Err(GpuError::OutOfMemory {
                kernel,
                sizes,
                message: error.to_string(),
            });
        }
        let uncaptured = gpu.take_uncaptured();
        match validation
            .map(|e| e.to_string())
            .or(uncaptured.into_iter().next())
        {
            Some(message) => Err(GpuError::Validation {
                kernel,
                sizes,
                message,
            }),
            None => Ok(()),
        }
    }
}

/// Waits until the device has finished all submitted work.
pub(crate) fn wait(gpu: &Gpu, kernel: Kernel) -> Result<()> {
    gpu.device
        .poll(wgpu::PollType::wait_indefinitely())
        .map(|_| ())
        .map_err(|e| GpuError::Device {
            kernel: kernel.name(),
            message: format!("waiting for the GPU failed: {e}"),
        })
}

/// Copies `buffer` into a buffer the CPU can map, and reads it.
// ANCHOR: read_back
fn read_back(gpu: &Gpu, buffer: &wgpu::Buffer, kernel: Kernel) -> Result<Vec<f32>> {
    let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("read back"),
        size: buffer.size(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
    gpu.queue.submit([encoder.finish()]);
    let (sender, receiver) = std::sync::mpsc::channel();
    staging.map_async(wgpu::MapMode::Read, .., move |result| {
        let _ = sender.send(result);
    });
    wait(gpu, kernel)?;
    let failed = |message: String| GpuError::Device {
        kernel: kernel.name(),
        message,
    };
    receiver
        .recv()
        .map_err(|e| failed(format!("reading the results back failed: {e}")))?
        .map_err(|e| failed(format!("reading the results back failed: {e}")))?;
    let values = {
        let view = staging
            .get_mapped_range(..)
            .map_err(|e| failed(format!("reading the results back failed: {e}")))?;
        bytemuck::cast_slice::<u8, f32>(&view).to_vec()
    };
    staging.unmap();
    Ok(values)
}
// ANCHOR_END: read_back
