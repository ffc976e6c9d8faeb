//! The chapter across processes: `mpirun --oversubscribe -np 4 ch24-mpi` (the `mpi`
//! feature), whose rank 0 checks every result against the one-process simulation bit for
//! bit, once over shared memory and once over TCP on the loopback, the transport two
//! machines use; and sizes that do not fit, which every rank must refuse together.
//!
//! Without `mpirun` on the PATH these tests pass with a message, unless
//! `ATTN_REQUIRE_MPI=1` (as in CI).
#![cfg(feature = "mpi")]

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Whether `mpirun` is here; without it the test says so and passes, unless
/// `ATTN_REQUIRE_MPI=1`.
fn mpirun_is_here(test: &str) -> bool {
    let here = Command::new("mpirun")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !here {
        assert!(
            std::env::var("ATTN_REQUIRE_MPI").as_deref() != Ok("1"),
            "{test}: ATTN_REQUIRE_MPI=1, but there is no mpirun (apt-get install \
             libopenmpi-dev openmpi-bin libclang-dev)"
        );
        eprintln!("{test}: skipped, no mpirun on the PATH");
    }
    here
}

/// `mpirun` with 4 ranks of `ch24-mpi` and `args`, killed after a minute: a rank that
/// hangs fails the test instead of stopping it.
fn mpirun(transport: &[&str], args: &[&str]) -> Output {
    let mut child = Command::new("mpirun")
        .args(["--oversubscribe", "-np", "4"])
        .args(transport)
        .arg(env!("CARGO_BIN_EXE_ch24-mpi"))
        .args(args)
        // Open MPI refuses root unless told; containers often run as root.
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mpirun starts");
    let start = Instant::now();
    while child.try_wait().expect("mpirun's status").is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().expect("kill mpirun");
            let output = child.wait_with_output().expect("mpirun's output");
            panic!(
                "mpirun {args:?} still ran after a minute:\n{}\n{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("mpirun's output")
}

const SMALL: [&str; 6] = ["--tokens", "64", "--heads", "8", "--head-dim", "16"];

/// Runs the job on `transport` and checks every line rank 0 printed.
fn every_result_equals_the_simulation(transport: &[&str]) {
    let output = mpirun(transport, &SMALL);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "mpirun {transport:?} failed:\n{stdout}\n{stderr}"
    );
    let checks: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("bit for bit"))
        .collect();
    assert_eq!(
        checks.len(),
        8,
        "eight checks expected, rank 0 printed:\n{stdout}"
    );
    for line in checks {
        assert!(line.ends_with(": true"), "{transport:?}: {line}\n{stdout}");
    }
    assert!(
        stdout.contains("all-reduce: equal on every rank: true"),
        "every rank gets the same all-reduce:\n{stdout}"
    );
    assert!(
        stdout.contains("rank 3: 7,232 query-key products"),
        "contiguous shards: rank 3 computes 8 heads × (3 · 16² + 16 · 17 / 2) products:\n{stdout}"
    );
}

#[test]
fn four_processes_give_the_simulations_bits() {
    if mpirun_is_here("four_processes_give_the_simulations_bits") {
        every_result_equals_the_simulation(&[]);
    }
}

#[test]
fn four_processes_over_tcp_on_the_loopback_give_the_same_bits() {
    if mpirun_is_here("four_processes_over_tcp_on_the_loopback_give_the_same_bits") {
        every_result_equals_the_simulation(&[
            "--mca",
            "btl",
            "self,tcp",
            "--mca",
            "btl_tcp_if_include",
            "lo",
            "--mca",
            "oob_tcp_if_include",
            "lo",
        ]);
    }
}

#[test]
fn sizes_that_do_not_fit_stop_every_rank_with_one_message() {
    if !mpirun_is_here("sizes_that_do_not_fit_stop_every_rank_with_one_message") {
        return;
    }
    let cases: [(&[&str], &str); 3] = [
        (
            &["--tokens", "20", "--heads", "4", "--head-dim", "8"],
            "20 tokens on 4 ranks",
        ),
        (
            &["--tokens", "16", "--heads", "6", "--head-dim", "8"],
            "6 heads on 4 ranks",
        ),
        (
            &[
                "--tokens",
                "16",
                "--heads",
                "4",
                "--head-dim",
                "8",
                "--rank-tokens",
                "2=32",
            ],
            "rank 2 has 32 tokens",
        ),
    ];
    for (args, expected) in cases {
        let output = mpirun(&[], args);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} succeeded:\n{stdout}");
        assert_eq!(
            stderr.matches("cannot share this attention").count(),
            1,
            "{args:?}: one message from rank 0 expected:\n{stderr}"
        );
        assert!(
            stderr.contains(expected),
            "{args:?}: the message should say {expected:?}:\n{stderr}"
        );
        assert!(
            !stderr.contains("panicked"),
            "{args:?}: a rank panicked:\n{stderr}"
        );
        assert!(
            stdout.is_empty(),
            "{args:?}: no result may be printed:\n{stdout}"
        );
    }
}
