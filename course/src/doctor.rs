//! The `doctor` command: whether the libtorch back-end can be used here (its version, CUDA,
//! the GPUs, the environment), with a fix for each problem found.
//!
//! `shared` only says what libtorch tells about itself ([`shared::backend::libtorch_facts`]);
//! the environment (the `LIBTORCH` folder and its version file, `nvidia-smi`, the variables
//! that steer the build) is inspected here.

use shared::backend::LibtorchFacts;

/// The report the `doctor` command prints, line by line.
pub fn report() -> String {
    match shared::backend::libtorch_facts() {
        Some(facts) => libtorch_report(&facts),
        None => "libtorch back-end (feature tch): not compiled in\n\
                 problem: --device torch-cpu and --device cuda need it: run with `--features \
                 tch` and libtorch 2.13.0 on hand (`source scripts/libtorch-env.sh` makes a \
                 virtualenv with it and sets LIBTORCH and LD_LIBRARY_PATH)"
            .to_string(),
    }
}

/// The report of a build with the libtorch back-end.
fn libtorch_report(facts: &LibtorchFacts) -> String {
    let mut lines = vec!["libtorch back-end (feature tch): compiled in".to_string()];
    let mut problems = Vec::new();
    match std::env::var("LIBTORCH").ok() {
        Some(dir) => match libtorch_version(&dir) {
            Some(v) => {
                lines.push(format!("libtorch version: {v} (from {dir})"));
                if !v.starts_with("2.13.0") {
                    problems.push(format!(
                        "tch 0.26 wants libtorch 2.13.0 but {dir} holds {v}: point LIBTORCH at \
                         a 2.13.0 install (source scripts/libtorch-env.sh)"
                    ));
                }
            }
            None => problems.push(format!(
                "no version file under LIBTORCH={dir}: is it a libtorch directory?"
            )),
        },
        None => lines
            .push("LIBTORCH: not set (the build found libtorch another way)".into()),
    }
    // libtorch from PyPI and the official downloads since 2.x use the C++11 string ABI.
    lines.push(
        "C++ ABI: cxx11 (_GLIBCXX_USE_CXX11_ABI=1, as libtorch 2.x ships)".into(),
    );
    lines.push(format!("CPU threads used by libtorch: {}", facts.threads));
    match facts.cuda_devices {
        Some(count) => {
            lines.push(format!(
                "CUDA: available, {count} GPU(s); cuDNN: {}",
                facts.cudnn
            ));
            for name in gpu_names() {
                lines.push(format!("  GPU: {name}"));
            }
        }
        None => {
            lines.push("CUDA: not available (torch-cpu still works)".into());
            if gpu_names().is_empty() {
                lines.push("  no NVIDIA GPU found by nvidia-smi".into());
            } else {
                problems.push(
                    "nvidia-smi sees a GPU but libtorch does not: use a CUDA build of libtorch \
                     and put its CUDA libraries (the nvidia-* wheels' lib folders) on \
                     LD_LIBRARY_PATH"
                        .into(),
                );
            }
        }
    }
    for name in [
        "LIBTORCH",
        "LIBTORCH_USE_PYTORCH",
        "LIBTORCH_BYPASS_VERSION_CHECK",
        "LD_LIBRARY_PATH",
        "SHARED_DEVICE",
    ] {
        let value = std::env::var(name).unwrap_or_else(|_| "(not set)".into());
        lines.push(format!("{name}={value}"));
    }
    if problems.is_empty() {
        lines.push("no problems found".into());
    }
    for p in problems {
        lines.push(format!("problem: {p}"));
    }
    lines.join("\n")
}

/// The version a libtorch folder holds: `version.py` (PyPI's torch) or `build-version`
/// (the official downloads).
fn libtorch_version(dir: &str) -> Option<String> {
    std::fs::read_to_string(format!("{dir}/version.py"))
        .ok()
        .and_then(|text| {
            text.lines().find_map(|l| {
                l.strip_prefix("__version__ = '")
                    .map(|v| v.trim_end_matches('\'').to_string())
            })
        })
        .or_else(|| {
            std::fs::read_to_string(format!("{dir}/build-version"))
                .ok()
                .map(|v| v.trim().to_string())
        })
}

/// The names `nvidia-smi` reports, if it is installed.
fn gpu_names() -> Vec<String> {
    std::process::Command::new("nvidia-smi")
        .args(["--query-gpu=name", "--format=csv,noheader"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_names_what_it_checked() {
        let facts = LibtorchFacts {
            threads: 4,
            cuda_devices: None,
            cudnn: false,
        };
        let report = libtorch_report(&facts);
        assert!(report.starts_with("libtorch back-end (feature tch): compiled in"));
        assert!(
            report.contains("CPU threads used by libtorch: 4"),
            "{report}"
        );
        assert!(report.contains("CUDA: not available"), "{report}");
        assert!(report.contains("LD_LIBRARY_PATH="), "{report}");
    }
}
