//! The first GPU program adds two arrays exactly (a GPU's addition of two floats is
//! rounded as the CPU's), at any length, and refuses arrays it cannot add; the
//! chapter's binary runs it with `--add-arrays`, without Mesa's complaint about
//! `XDG_RUNTIME_DIR`.

mod common;

use ch21_webgpu::error::GpuError;
use ch21_webgpu::first_program::add_arrays;
use ch21_webgpu::setup::draw_arrays;

#[test]
fn add_arrays_equals_the_cpus_sum_at_any_length() {
    let Some(gpu) = common::gpu() else {
        return;
    };
    // One element, a workgroup short of full, exactly full, one over, and many.
    for len in [1, 63, 64, 65, 100, 1000, 100_000] {
        let [a, b] = draw_arrays(len as u64, len);
        let got = add_arrays(gpu, &a.to_vec(), &b.to_vec())
            .unwrap_or_else(|e| panic!("{len} floats: {e}"));
        let want = a.f_add(&b).expect("same shapes").to_vec();
        assert_eq!(got.len(), len, "{len} floats: the sum's length");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g, w,
                "{len} floats: sum[{i}] is {g} on the GPU, {w} on the CPU"
            );
        }
    }
}

#[test]
fn arrays_that_cannot_be_added_are_errors() {
    let Some(gpu) = common::gpu() else {
        return;
    };
    let error = add_arrays(gpu, &[1.0, 2.0], &[1.0]).expect_err("lengths differ");
    assert!(
        matches!(error, GpuError::Shape { .. })
            && error.to_string().contains("a [2] and b [1]"),
        "{error}"
    );
    let error = add_arrays(gpu, &[], &[]).expect_err("nothing to add");
    assert!(error.to_string().contains("a [0]"), "{error}");
    let too_many = 64 * gpu.limits.max_compute_workgroups_per_dimension as usize + 1;
    let long = vec![0.0; too_many];
    let error = add_arrays(gpu, &long, &long).expect_err("too many workgroups");
    assert!(
        error
            .to_string()
            .contains("max_compute_workgroups_per_dimension"),
        "{error}"
    );
}

#[test]
fn the_binary_adds_arrays_with_no_word_from_mesa() {
    if common::gpu().is_none() {
        return;
    }
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_ch21-webgpu"))
        .arg("--add-arrays")
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .expect("the chapter's binary runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "--add-arrays failed:\n{stderr}");
    assert!(
        !stderr.contains("XDG_RUNTIME_DIR"),
        "the chapter should set a private XDG_RUNTIME_DIR where none is set:\n{stderr}"
    );
    // Exact sums: the same text on every adapter.
    insta::assert_snapshot!("add_arrays", stdout);
}
