//! Every public fixture made by real PyTorch 2.13.0 must pass: bit for bit on the reference
//! platform (our own kernels everywhere; libtorch where its probe says so, see
//! `course::platform`), each value within 1e-6 of its result's scale elsewhere.

use course::platform::platform;
use workspace_tests::parity::run_fixture_text;

fn check(file: &str, expected_cases: usize) {
    let path = format!("{}/fixtures/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("fixture file");
    let report = run_fixture_text(&text).expect("a fixture file in a known format");
    for f in &report.failures {
        eprintln!(
            "FAIL {}\n  expected: {:?}\n  got:      {:?}",
            f.name, f.expected, f.got
        );
    }
    let drift = report.drift;
    eprintln!(
        "{file} on {}: {}; {} of {} values differ from PyTorch's bits, the largest by {:.1e} \
         of its result's scale",
        shared::device(),
        platform(),
        drift.differing,
        drift.values,
        drift.largest_relative
    );
    assert!(
        report.failures.is_empty(),
        "{} of {file} failed",
        report.failures.len()
    );
    assert_eq!(report.passed, expected_cases);
}

#[test]
fn print_fixtures_match_pytorch() {
    check("print_fixtures_public.json", 320);
}

#[test]
fn rng_fixtures_match_pytorch() {
    check("rng_fixtures_public.json", 150);
    check("rng_vectors.json", 29);
}

/// `torch.multinomial` (both of its paths) and `torch.randint`, alone and mixed with other
/// draws from the same seed (`scripts/make_sampling_fixtures.py`).
#[test]
fn sampling_fixtures_match_pytorch() {
    check("sampling_fixtures.json", 361);
}

/// The elementwise maths, GELU, var/std, layer_norm and rms_norm against PyTorch. GELU's last
/// bits depend on the CPU build and, for long tensors, on the thread count; the file records
/// both as PyTorch saw them, and the runner computes with the same.
#[test]
fn norm_fixtures_match_pytorch() {
    check("norm_fixtures.json", 683);
}

#[test]
fn new_ops_fixtures_match_pytorch() {
    check("new_ops_fixtures.json", 376);
}

#[test]
fn edge_fixtures_match_pytorch() {
    check("edge_fixtures.json", 499);
}

/// Which zero `maximum`/`minimum` return on ties (vectors against single elements), `cat`
/// of empty 1-D tensors only, and `F.linear` with a bias on 2-D, 3-D and 4-D inputs
/// (`scripts/make_room_fixtures.py`).
#[test]
fn room_fixtures_match_pytorch() {
    check("room_fixtures.json", 101);
}

/// The chapters' operations, and softmax, log_softmax, sum and mean over many lengths,
/// values and dims: bit for bit, the matrix products (MKL's `sgemm`, closed and ordered by
/// the processor) within 1e-6 of the result's scale. Our kernels compute with the CPU build
/// the file records (softmax adds a row in 16 lanes on AVX-512 and in 8 on AVX2); libtorch
/// with the build its processor picks, bit for bit where that is the reference platform.
#[test]
fn ops_fixtures_match_pytorch() {
    check("ops_fixtures.json", 493);
}

/// The matrix products of the same file, bit for bit: our products add in the orders MKL
/// uses on the AVX-512 processor that made the file (`sgemm`'s fused chains, `sgemv`'s
/// blocks of rows and sweeps of columns), so no tolerance is needed there. Our own kernels
/// only: libtorch's MKL picks its order by the processor it runs on.
#[test]
fn ops_fixtures_matrix_products_are_bit_for_bit() {
    if shared::device() != shared::Device::Cpu {
        eprintln!("skipped: libtorch's MKL adds in the order of this processor");
        return;
    }
    let path = format!("{}/fixtures/ops_fixtures.json", env!("CARGO_MANIFEST_DIR"));
    let mut file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("fixture file"))
            .expect("ops_fixtures.json is JSON");
    let cases = file["cases"].as_array_mut().expect("a list of cases");
    cases.retain_mut(|case| {
        let case = case.as_object_mut().expect("a case is an object");
        case.remove("atol_of_max").is_some()
    });
    let products = cases.len();
    let report = run_fixture_text(&file.to_string())
        .expect("a fixture file in a known format");
    let failed: Vec<_> = report.failures.iter().map(|f| &f.name).collect();
    assert!(failed.is_empty(), "not bit for bit: {failed:?}");
    assert_eq!(report.passed, products);
}

/// The same kernels as PyTorch's portable build computes them (`ATEN_CPU_CAPABILITY=default`,
/// recorded in the file): lanes combined one after the other, the C library's `expf` and
/// `logf`. The C library is only the same as PyTorch's where Rust links against glibc. Our
/// own kernels only: libtorch computes with the build its processor picks.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn default_cpu_fixtures_match_pytorch() {
    if shared::device() != shared::Device::Cpu {
        eprintln!("skipped: libtorch runs its own build, not PyTorch's portable one");
        return;
    }
    check("ops_fixtures_default_cpu.json", 97);
}

/// Off the reference platform every value may be within 1e-6 of its result's largest
/// magnitude (the `atol_of_max` rule): a value 1e-7 of the scale away passes, a value 1e-5 of
/// the scale away, a genuinely wrong one, still fails.
#[test]
fn the_tolerant_rule_rejects_a_wrong_value() {
    let path = format!("{}/fixtures/room_fixtures.json", env!("CARGO_MANIFEST_DIR"));
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("fixture file"))
            .expect("room_fixtures.json is JSON");
    let mut case = file["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .find(|c| c["name"] == "linear with a bias, input [5, 16], 8 outputs")
        .expect("the case")
        .clone();
    case["atol_of_max"] = serde_json::json!(1e-6);
    let value = |hex: &serde_json::Value| {
        let hex = hex
            .as_str()
            .expect("a bit pattern")
            .trim_start_matches("0x");
        f32::from_bits(u32::from_str_radix(hex, 16).expect("hex"))
    };
    let values: Vec<f32> = case["expected"]["values"]
        .as_array()
        .expect("values")
        .iter()
        .map(value)
        .collect();
    let scale = values.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let outcome = |shift: f32| {
        let mut case = case.clone();
        case["expected"]["values"][0] =
            format!("{:#010x}", (values[0] + shift).to_bits()).into();
        let file = serde_json::json!({ "cases": [case] }).to_string();
        run_fixture_text(&file)
            .expect("a fixture file")
            .failures
            .len()
    };
    assert_eq!(outcome(0.0), 0, "PyTorch's own values");
    assert_eq!(outcome(1e-7 * scale), 0, "a last-bits difference passes");
    assert_eq!(outcome(1e-5 * scale), 1, "a wrong value fails");
}
