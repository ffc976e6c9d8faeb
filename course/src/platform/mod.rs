//! Whether this run computes as the reference platform, and how its output is compared with
//! PyTorch's accordingly.
//!
//! The reference outputs were made by PyTorch 2.13.0 on an Intel CPU with AVX-512 (the
//! reference platform). Our own kernels add in that machine's orders on every processor, so
//! they reproduce its bits everywhere. libtorch does not: its matrix products come from MKL,
//! which picks its order of additions by the processor it finds (an AMD EPYC adds some small
//! products in another order than the Intel machine) and by its settings (`MKL_CBWR`), and its
//! softmax adds a row in 16 lanes or 8 depending on the CPU build (`ATEN_CPU_CAPABILITY`); a
//! GPU adds in its own orders.
//!
//! So before comparing anything, [`platform`] asks the device itself: it computes a probe,
//! committed cases of PyTorch's results on the reference platform known to change on the
//! other paths (`probe.json`, made by `scripts/make_platform_probe.py` from the fixtures
//! `F.linear` with one to 32 outputs and the softmax of two long rows), and calls this the
//! reference platform only if every value comes out bit for bit. There the tests keep
//! asserting equality; elsewhere [`assert_printed`] compares each printed number within its
//! printed digits ([`crate::printed`]) and the fixtures' values within 1e-6 of their
//! result's largest magnitude, and says which branch it took.

use std::fmt;
use std::sync::{Mutex, OnceLock};

use serde_json::Value;
use shared::cpu::{self, Capability};
use shared::nn::Linear;
use shared::{Device, Tensor};

use crate::printed;

/// The committed probe: PyTorch's results on the reference platform, inputs and outputs as
/// float32 bit patterns.
const PROBE: &str = include_str!("probe.json");

/// Where this thread's numbers are computed, as far as bits go.
#[derive(Clone, Debug, PartialEq)]
pub enum Platform {
    /// Every probe value equals PyTorch's on the reference platform, bit for bit.
    Reference,
    /// Not the reference platform, and why.
    Other(String),
}

impl Platform {
    /// Whether this is the reference platform.
    pub fn is_reference(&self) -> bool {
        *self == Platform::Reference
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Platform::Reference => f.write_str(
                "the reference platform: every probe value is PyTorch's bit for bit, \
                 outputs are compared exactly",
            ),
            Platform::Other(why) => write!(
                f,
                "not the reference platform ({why}): printed numbers are compared within \
                 one unit of their last digit, values within 1e-6 of their result's scale"
            ),
        }
    }
}

/// What the probe found: how many values it computed, how many differ from the reference
/// platform's bits, and the largest difference relative to its result's largest magnitude.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeReport {
    /// Values computed.
    pub values: usize,
    /// Values whose bits differ from PyTorch's on the reference platform.
    pub differing: usize,
    /// The largest `|ours - reference| / max |reference|` over the probe's results.
    pub largest_relative: f64,
}

/// Computes the probe on this thread's device (with its CPU capability, for our own kernels).
pub fn probe() -> shared::Result<ProbeReport> {
    let file: Value = serde_json::from_str(PROBE).expect("probe.json is JSON");
    let mut report = ProbeReport {
        values: 0,
        differing: 0,
        largest_relative: 0.0,
    };
    for case in file["cases"].as_array().expect("probe cases") {
        let input = |i: usize| decode(&case["inputs"][i]);
        let got = match case["op"].as_str() {
            Some("linear") => {
                let bias = (case["inputs"].as_array().map_or(0, Vec::len) == 3)
                    .then(|| input(2));
                Linear::f_from_parameters(input(1), bias)?.f_forward(&input(0))?
            }
            Some("softmax") => {
                let dim = case["args"]["dim"].as_i64().expect("softmax's dim");
                input(0).f_softmax(dim)?
            }
            other => panic!("probe.json: unknown op {other:?}"),
        };
        let want = decode(&case["expected"]).to_vec();
        let scale = want.iter().fold(0.0f64, |m, w| m.max(w.abs() as f64));
        for (g, w) in got.to_vec().into_iter().zip(&want) {
            report.values += 1;
            if g.to_bits() != w.to_bits() {
                report.differing += 1;
                let relative =
                    (g as f64 - *w as f64).abs() / scale.max(f64::MIN_POSITIVE);
                report.largest_relative = report.largest_relative.max(relative);
            }
        }
    }
    Ok(report)
}

/// A float32 tensor stored as `{"shape", "values"}` with `"0x%08x"` bit patterns.
fn decode(t: &Value) -> Tensor {
    let shape: Vec<usize> =
        serde_json::from_value(t["shape"].clone()).expect("a shape");
    let values = t["values"]
        .as_array()
        .expect("values")
        .iter()
        .map(|v| {
            let hex = v.as_str().expect("a bit pattern").trim_start_matches("0x");
            f32::from_bits(u32::from_str_radix(hex, 16).expect("hex bits"))
        })
        .collect();
    Tensor::from_vec(values, &shape)
}

/// Whether this thread's device computes as the reference platform. Decided once per device
/// and CPU capability by the [`probe`]: our own kernels reproduce it wherever they follow the
/// AVX-512 build (the default); libtorch where MKL and the CPU build add as the reference
/// machine did; a GPU never.
pub fn platform() -> Platform {
    type Decided = Vec<((Device, Capability), Platform)>;
    static DECIDED: OnceLock<Mutex<Decided>> = OnceLock::new();
    let key = (shared::device(), cpu::capability());
    let decided = DECIDED.get_or_init(Default::default);
    if let Some((_, platform)) = decided
        .lock()
        .expect("not poisoned")
        .iter()
        .find(|(k, _)| *k == key)
    {
        return platform.clone();
    }
    let platform = match key.0 {
        Device::Cuda(_) => {
            Platform::Other(format!("{}: a GPU adds in its own orders", key.0))
        }
        device => match probe() {
            Ok(p) if p.differing == 0 => Platform::Reference,
            Ok(p) => Platform::Other(format!(
                "{device}: {} of {} probe values differ from the reference platform's bits, \
                 the largest by {:.1e} of its result's scale",
                p.differing, p.values, p.largest_relative
            )),
            Err(e) => Platform::Other(format!("{device}: the probe failed: {e}")),
        },
    };
    decided
        .lock()
        .expect("not poisoned")
        .push((key, platform.clone()));
    platform
}

/// Asserts that `ours` prints what `pytorch` printed: byte for byte on the reference
/// platform, else within the printed digits ([`printed::compare`]); `what` names the output
/// in the failure message. Outside the reference platform it says on stderr which branch it
/// took and how many printed numbers differ.
#[track_caller]
pub fn assert_printed(ours: &str, pytorch: &str, what: &str) {
    match platform() {
        Platform::Reference => {
            if ours != pytorch {
                // The first differing line, then both texts whole.
                let line = ours
                    .lines()
                    .zip(pytorch.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or_else(|| {
                        ours.lines().count().min(pytorch.lines().count())
                    });
                panic!(
                    "{what}: ours differs from PyTorch's text at line {}\n  ours:    {}\n  \
                     PyTorch: {}\n--- ours ---\n{ours}\n--- PyTorch ---\n{pytorch}",
                    line + 1,
                    ours.lines().nth(line).unwrap_or("(ends)"),
                    pytorch.lines().nth(line).unwrap_or("(ends)")
                );
            }
        }
        other => match printed::compare(ours, pytorch) {
            Ok(agreement) => eprintln!("{what}: {other}; {agreement}"),
            Err(e) => panic!("{what}: {other}\n{e}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Our own kernels follow the reference platform's AVX-512 build: the probe holds.
    #[test]
    fn our_kernels_are_the_reference_platform() {
        if shared::device() != Device::Cpu {
            eprintln!("skipped: this thread computes on {}", shared::device());
            return;
        }
        let report = probe().unwrap();
        assert!(report.values > 3000, "{report:?}");
        assert_eq!(report.differing, 0, "{report:?}");
        assert_eq!(platform(), Platform::Reference);
    }

    /// With the AVX2 build's 8 lanes, our softmax adds a row as PyTorch's AVX2 build does, and
    /// the probe sees it: the platform is then not the reference one.
    #[test]
    fn the_avx2_build_is_not_the_reference_platform() {
        if shared::device() != Device::Cpu {
            eprintln!("skipped: this thread computes on {}", shared::device());
            return;
        }
        let before = cpu::capability();
        cpu::set_capability(Some(Capability::Avx2));
        let (report, platform) = (probe().unwrap(), platform());
        cpu::set_capability(Some(before));
        assert!(report.differing > 100, "{report:?}");
        assert!(report.largest_relative < 1e-6, "{report:?}");
        assert!(!platform.is_reference(), "{platform}");
    }
}
