//! What can go wrong on the way to a GPU, as errors that say what to do.
//!
//! A GPU API reports a mistake (a shader that does not compile, a buffer larger than the
//! device allows) asynchronously, long after the call that caused it, and by default
//! wgpu panics on one. The host code here catches every such error in an error scope
//! (see [`crate::launch`]) and returns it as a [`GpuError`] naming the kernel, the sizes
//! and the limit involved.

/// What each operating system needs for a GPU adapter, one line each.
pub const INSTALL_HINTS: &str = concat!(
    "  Debian, Ubuntu: sudo apt-get install mesa-vulkan-drivers",
    " (lavapipe, a software GPU, where there is no other)\n",
    "  Fedora: sudo dnf install mesa-vulkan-drivers\n",
    "  Arch: sudo pacman -S vulkan-swrast (software) or your GPU's Vulkan driver\n",
    "  macOS: Metal is built in (macOS 10.13 or newer)\n",
    "  Windows: DirectX 12 is built in (Windows 10 or newer); update the graphics driver",
);

/// An error of this chapter's GPU code.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No adapter was found (no driver, or none of the kind asked for).
    #[error(
        "no GPU adapter: install mesa-vulkan-drivers (or your GPU's Vulkan driver)\n{why}\n{INSTALL_HINTS}"
    )]
    NoAdapter {
        /// What wgpu said, or which kind of adapter was asked for.
        why: String,
    },
    /// The adapter would not open a device.
    #[error("no GPU device on {adapter}: {why}")]
    NoDevice {
        /// The adapter's name.
        adapter: String,
        /// What wgpu said.
        why: String,
    },
    /// The inputs' shapes do not fit together, or not this kernel.
    #[error("{kernel}: {detail}")]
    Shape {
        /// The kernel asked to run.
        kernel: &'static str,
        /// What is wrong, naming the shapes.
        detail: String,
    },
    /// A size beyond one of the device's limits, found before anything was sent to it.
    #[error(
        "{kernel}, {sizes}: {what} needs {needed}, more than the adapter's {limit_name} of {limit}"
    )]
    OverLimit {
        /// The kernel.
        kernel: &'static str,
        /// The sizes of the call.
        sizes: String,
        /// What needs too much (a buffer, workgroup memory, a dispatch).
        what: String,
        /// How much it needs.
        needed: u64,
        /// The name of the limit, as wgpu's `Limits` calls it.
        limit_name: &'static str,
        /// The adapter's value of it.
        limit: u64,
    },
    /// The device found a mistake: a shader that does not compile, a binding that does not
    /// fit. Caught by an error scope, or by the uncaptured-error handler.
    #[error("{kernel}, {sizes}: the GPU rejected it: {message}")]
    Validation {
        /// The kernel.
        kernel: &'static str,
        /// The sizes of the call.
        sizes: String,
        /// The device's message.
        message: String,
    },
    /// The device ran out of memory.
    #[error("{kernel}, {sizes}: out of GPU memory: {message}")]
    OutOfMemory {
        /// The kernel.
        kernel: &'static str,
        /// The sizes of the call.
        sizes: String,
        /// The device's message.
        message: String,
    },
    /// Waiting for the GPU, or reading its results back, failed.
    #[error("{kernel}: {message}")]
    Device {
        /// The kernel.
        kernel: &'static str,
        /// What failed.
        message: String,
    },
}

/// `Result` with this chapter's [`GpuError`].
pub type Result<T> = std::result::Result<T, GpuError>;

impl From<GpuError> for shared::Error {
    fn from(error: GpuError) -> shared::Error {
        shared::Error::Device {
            detail: error.to_string(),
        }
    }
}
