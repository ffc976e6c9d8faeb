//! The probe tells the reference platform from the others by itself: another MKL code path
//! (`MKL_CBWR=AVX2`) or another CPU build of PyTorch's kernels (`ATEN_CPU_CAPABILITY=avx2`)
//! is not the reference platform, on libtorch and, for the CPU build, on our own kernels.
//! Both variables are read once, when a process first computes, so each runs in a child
//! process of this test binary.

use std::process::Command;

use course::platform::platform;
use shared::Device;

/// Tells this test binary it runs as the child.
const CHILD: &str = "COURSE_PLATFORM_CHILD";

/// In the child: prints what the probe decided. Elsewhere: nothing.
#[test]
fn child_prints_the_platform() {
    if std::env::var_os(CHILD).is_some() {
        println!("platform: {}", platform());
    }
}

/// What the probe decides in a child process with `variable=value` set.
fn platform_in_child(variable: &str, value: &str) -> String {
    let output = Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", "child_prints_the_platform", "--nocapture"])
        .env(CHILD, "1")
        .env(variable, value)
        .output()
        .expect("the child runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "the child failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
        .lines()
        .find_map(|line| line.strip_prefix("platform: "))
        .unwrap_or_else(|| panic!("no verdict in {stdout}"))
        .to_string()
}

#[test]
fn other_code_paths_are_not_the_reference_platform() {
    let settings: &[(&str, &str)] = match shared::device() {
        // Our kernels follow the CPU build they are told to; MKL's settings do not reach them.
        Device::Cpu => &[("ATEN_CPU_CAPABILITY", "avx2")],
        Device::TorchCpu => &[("MKL_CBWR", "AVX2"), ("ATEN_CPU_CAPABILITY", "avx2")],
        Device::Cuda(_) => {
            assert!(!platform().is_reference(), "a GPU is never the reference");
            return;
        }
    };
    for (variable, value) in settings {
        let verdict = platform_in_child(variable, value);
        assert!(
            verdict.starts_with("not the reference platform"),
            "{variable}={value} on {}: {verdict}",
            shared::device()
        );
    }
}
