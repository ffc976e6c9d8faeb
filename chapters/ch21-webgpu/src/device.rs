//! The device: finding a GPU adapter, opening it, and what it allows.
//!
//! wgpu looks for adapters on every back-end it was built with (Vulkan on Linux and
//! Windows, Metal on macOS, DirectX 12 on Windows), or only on the ones `WGPU_BACKEND`
//! names (`WGPU_BACKEND=vulkan`). Without a hardware GPU, Mesa's lavapipe is a Vulkan
//! driver that runs the kernels on the CPU; `--cpu-adapter` asks for such a software
//! adapter even where a hardware one exists.

use std::sync::{Arc, Mutex};

use wgpu::{AdapterInfo, Backends, DeviceType, Instance, InstanceDescriptor, Limits};

use crate::error::{GpuError, Result};

/// Which adapter to ask for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AdapterChoice {
    /// The adapter wgpu prefers (a hardware GPU where there is one).
    #[default]
    Preferred,
    /// A software adapter that runs on the CPU (lavapipe, WARP, SwiftShader).
    Cpu,
}

/// An open GPU device with its queue, and what its adapter is and allows.
pub struct Gpu {
    /// The device: it makes buffers, pipelines and bind groups.
    pub device: wgpu::Device,
    /// Where command buffers are submitted.
    pub queue: wgpu::Queue,
    /// The adapter's name, back-end and type.
    pub info: AdapterInfo,
    /// The limits the device was opened with: all that the adapter offers.
    pub limits: Limits,
    /// Whether the device can time passes with timestamp queries.
    pub timestamps: bool,
    /// Errors no error scope caught, in the order they came (see [`Gpu::take_uncaptured`]).
    uncaptured: Arc<Mutex<Vec<String>>>,
}

/// A wgpu instance on the back-ends `WGPU_BACKEND` names, or on all this build has.
pub fn instance() -> Instance {
    Instance::new(InstanceDescriptor::new_without_display_handle().with_env())
}

/// Every adapter the instance finds, on every back-end.
pub fn list_adapters() -> Vec<AdapterInfo> {
    let instance = instance();
    let adapters = pollster::block_on(instance.enumerate_adapters(Backends::all()));
    adapters.iter().map(|a| a.get_info()).collect()
}

/// One line about an adapter: `name (back-end, type)`.
pub fn describe(info: &AdapterInfo) -> String {
    format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type)
}

/// A private `XDG_RUNTIME_DIR` made for this run, removed when dropped.
#[derive(Debug, Default)]
pub struct RuntimeDir(Option<std::path::PathBuf>);

/// Gives Mesa's Vulkan drivers a private `XDG_RUNTIME_DIR` where none is set (on a
/// server, in a container), so that they do not print `error: XDG_RUNTIME_DIR is
/// invalid or not set`: a new directory only this user may enter (mode 0700), as the
/// XDG specification asks of it, removed when the returned guard is dropped.
///
/// # Safety
/// It changes the process's environment, which no other thread may read meanwhile:
/// call it before any thread starts, first thing in `main`.
pub unsafe fn private_runtime_dir_if_unset() -> RuntimeDir {
    let set = std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|dir| !dir.is_empty());
    if set || !cfg!(unix) {
        return RuntimeDir(None);
    }
    let dir =
        std::env::temp_dir().join(format!("ch21-webgpu-{}", std::process::id()));
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    if builder.create(&dir).is_err() {
        return RuntimeDir(None); // Mesa prints its line, and runs all the same
    }
    // SAFETY: the caller guarantees that no other thread is running.
    unsafe { std::env::set_var("XDG_RUNTIME_DIR", &dir) };
    RuntimeDir(Some(dir))
}

impl Drop for RuntimeDir {
    fn drop(&mut self) {
        if let Some(dir) = &self.0 {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Gpu {
    /// Finds an adapter of the kind asked for and opens a device with all the limits it
    /// offers.
    pub fn new(choice: AdapterChoice) -> Result<Gpu> {
        pollster::block_on(Gpu::open(choice))
    }

    async fn open(choice: AdapterChoice) -> Result<Gpu> {
        // ANCHOR: open
        let instance = instance();
        let options = wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: choice == AdapterChoice::Cpu,
            ..Default::default()
        };
        let adapter = instance.request_adapter(&options).await.map_err(|e| {
            GpuError::NoAdapter {
                why: match choice {
                    AdapterChoice::Preferred => format!("wgpu found none: {e}"),
                    AdapterChoice::Cpu => {
                        format!("wgpu found no software adapter: {e}")
                    }
                },
            }
        })?;
        let info = adapter.get_info();
        let limits = adapter.limits();
        let timestamps = adapter.features().contains(wgpu::Features::TIMESTAMP_QUERY);
        let required_features = if timestamps {
            wgpu::Features::TIMESTAMP_QUERY
        } else {
            wgpu::Features::empty()
        };
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("attention"),
                required_features,
                required_limits: limits.clone(),
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::NoDevice {
                adapter: info.name.clone(),
                why: e.to_string(),
            })?;
        // ANCHOR_END: open
        // Without a handler, an error no scope catches would panic inside wgpu; this one
        // keeps it for the host code to return.
        let uncaptured = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&uncaptured);
        device.on_uncaptured_error(Arc::new(move |error: wgpu::Error| {
            sink.lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .push(error.to_string());
        }));
        Ok(Gpu {
            device,
            queue,
            info,
            limits,
            timestamps,
            uncaptured,
        })
    }

    /// One line about the adapter: `name (back-end, type)`.
    pub fn description(&self) -> String {
        describe(&self.info)
    }

    /// Whether the adapter is a software one that runs on the CPU.
    pub fn is_software(&self) -> bool {
        self.info.device_type == DeviceType::Cpu
    }

    /// The errors no error scope caught since the last call, oldest first.
    pub fn take_uncaptured(&self) -> Vec<String> {
        std::mem::take(
            &mut *self
                .uncaptured
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        )
    }
}
