//! What the chapter's tests share: one device per test binary, and what to do without one.
#![allow(dead_code)] // each test binary uses part of it

use std::sync::OnceLock;

use ch21_webgpu::device::{AdapterChoice, Gpu};

/// Set (to anything) where a missing adapter must fail the tests rather than skip them: CI
/// installs lavapipe and sets it.
pub const REQUIRE_GPU: &str = "ATTN_REQUIRE_GPU";

fn open() -> &'static Result<Gpu, String> {
    static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();
    GPU.get_or_init(|| Gpu::new(AdapterChoice::Preferred).map_err(|e| e.to_string()))
}

/// The device, or `None` (with a message) where there is no adapter and
/// `ATTN_REQUIRE_GPU` is not set; with it set, a missing adapter fails the test.
pub fn gpu() -> Option<&'static Gpu> {
    match open() {
        Ok(gpu) => Some(gpu),
        Err(error) if std::env::var_os(REQUIRE_GPU).is_some() => {
            panic!("{REQUIRE_GPU} is set and there is {error}")
        }
        Err(error) => {
            eprintln!("skipped, as there is {error}");
            None
        }
    }
}

/// The device, for the exercises' tests, which never skip: without an adapter they fail
/// and say what to install.
pub fn require_gpu() -> &'static Gpu {
    match open() {
        Ok(gpu) => gpu,
        Err(error) => panic!("{error}"),
    }
}

/// Whether the device is lavapipe, the software GPU CI runs on (its snapshots are the
/// ones the book shows).
pub fn is_lavapipe(gpu: &Gpu) -> bool {
    gpu.is_software() && gpu.info.name.starts_with("llvmpipe")
}
