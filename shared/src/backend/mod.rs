//! Where the arithmetic runs: on this crate's own CPU code (the default), or on libtorch
//! through `tch` (feature `tch`): `torch-cpu`, or a CUDA GPU.
//!
//! A tensor always lives in host memory as an ndarray; views, creation and printing stay
//! there. When a libtorch device is chosen, the operations that do the real work (matrix
//! products, softmax, sums, elementwise arithmetic between tensors, `exp`, `einsum`, and
//! `nn::Linear`) copy their operands to that device, run libtorch's kernel and copy the
//! result back. All randomness (parameters, dropout masks) still comes from our
//! PyTorch-compatible generator, so every back-end starts from the same numbers and meets the
//! same snapshots.
//!
//! The device is chosen per thread (tests run in parallel threads): [`set_device`], or the
//! `SHARED_DEVICE` environment variable (`cpu`, `torch-cpu`, `cuda`, `cuda:N`) read when a
//! thread first asks.

use std::cell::Cell;
use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

#[cfg(feature = "tch")]
pub mod torch;

/// Hands an operation to libtorch when this thread computes there: with the `tch` feature
/// and a libtorch device chosen, evaluates `$body` with that device and returns it from the
/// enclosing function; otherwise does nothing, and our own code below it runs.
macro_rules! on_libtorch {
    (|$device:ident| $body:expr) => {
        #[cfg(feature = "tch")]
        if let Some($device) = $crate::backend::torch::current() {
            return $body;
        }
    };
}
pub(crate) use on_libtorch;

/// A place to compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    /// This crate's own kernels (ndarray), the default.
    Cpu,
    /// libtorch's CPU kernels, through `tch`.
    TorchCpu,
    /// A CUDA GPU through libtorch, by index.
    Cuda(usize),
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
            Device::TorchCpu => f.write_str("torch-cpu"),
            Device::Cuda(i) => write!(f, "cuda:{i}"),
        }
    }
}

impl FromStr for Device {
    type Err = Error;

    /// `cpu`, `torch-cpu`, `cuda` (the first GPU) or `cuda:N`.
    fn from_str(s: &str) -> Result<Device> {
        let bad = || Error::Device {
            detail: format!(
                "unknown device {s:?}: expected cpu, torch-cpu, cuda or cuda:N"
            ),
        };
        match s {
            "cpu" => Ok(Device::Cpu),
            "torch-cpu" => Ok(Device::TorchCpu),
            "cuda" => Ok(Device::Cuda(0)),
            _ => match s.strip_prefix("cuda:") {
                Some(index) => index.parse().map(Device::Cuda).map_err(|_| bad()),
                None => Err(bad()),
            },
        }
    }
}

thread_local! {
    /// This thread's device; `None` until first asked (then `SHARED_DEVICE` decides).
    static CURRENT: Cell<Option<Device>> = const { Cell::new(None) };
}

/// Checks that `device` can be used here: libtorch devices need the `tch` feature, and CUDA
/// needs a GPU that libtorch can see.
pub fn f_check(device: Device) -> Result<()> {
    match device {
        Device::Cpu => Ok(()),
        #[cfg(not(feature = "tch"))]
        Device::TorchCpu | Device::Cuda(_) => Err(Error::Device {
            detail: format!(
                "{device} runs on libtorch, but this program was built without the `tch` \
                 feature: build it with `--features tch` and libtorch 2.13.0 (see \
                 scripts/libtorch-env.sh)"
            ),
        }),
        #[cfg(feature = "tch")]
        Device::TorchCpu | Device::Cuda(_) => torch::f_check(device),
    }
}

/// Makes `device` this thread's device, after checking it can be used.
pub fn f_set_device(device: Device) -> Result<()> {
    f_check(device)?;
    CURRENT.with(|c| c.set(Some(device)));
    Ok(())
}

/// Plain form of [`f_set_device`].
#[track_caller]
pub fn set_device(device: Device) {
    crate::error::or_panic(f_set_device(device))
}

/// This thread's device: the one set with [`set_device`], else `SHARED_DEVICE`, else `cpu`.
/// An unusable `SHARED_DEVICE` is a panic with the reason, not a silent fallback.
pub fn device() -> Device {
    CURRENT.with(|c| match c.get() {
        Some(device) => device,
        None => {
            let device = match std::env::var("SHARED_DEVICE") {
                Ok(name) => {
                    let device = crate::error::or_panic(name.parse::<Device>());
                    crate::error::or_panic(f_check(device));
                    device
                }
                Err(_) => Device::Cpu,
            };
            c.set(Some(device));
            device
        }
    })
}

/// What libtorch says about itself in this program: the facts the `doctor` command of the
/// course reports (with the environment it inspects itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LibtorchFacts {
    /// The CPU threads libtorch uses.
    pub threads: i32,
    /// How many CUDA GPUs libtorch sees, or `None` when CUDA is not available to it.
    pub cuda_devices: Option<i64>,
    /// Whether cuDNN is available (only with CUDA).
    pub cudnn: bool,
}

/// What libtorch says about itself, or `None` when this crate was built without the `tch`
/// feature.
#[cfg(feature = "tch")]
pub fn libtorch_facts() -> Option<LibtorchFacts> {
    Some(torch::facts())
}

/// What libtorch says about itself, or `None` when this crate was built without the `tch`
/// feature.
#[cfg(not(feature = "tch"))]
pub fn libtorch_facts() -> Option<LibtorchFacts> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_device_names() {
        assert_eq!("cpu".parse::<Device>(), Ok(Device::Cpu));
        assert_eq!("torch-cpu".parse::<Device>(), Ok(Device::TorchCpu));
        assert_eq!("cuda".parse::<Device>(), Ok(Device::Cuda(0)));
        assert_eq!("cuda:1".parse::<Device>(), Ok(Device::Cuda(1)));
        assert_eq!(
            "gpu".parse::<Device>().unwrap_err().to_string(),
            "device: unknown device \"gpu\": expected cpu, torch-cpu, cuda or cuda:N"
        );
    }

    #[cfg(not(feature = "tch"))]
    #[test]
    fn libtorch_devices_need_the_feature() {
        let err = f_set_device(Device::Cuda(0)).unwrap_err().to_string();
        assert!(err.starts_with(
            "device: cuda:0 runs on libtorch, but this program was built without the `tch` feature"
        ));
        assert_eq!(device(), Device::Cpu);
    }
}
