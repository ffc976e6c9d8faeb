//! Times one large matrix product on one thread, with the packed GEMM of
//! `shared::exact::gemm_with` or with `matrixmultiply` (through `ndarray`).
//!
//! `cargo run --release -p attention-perf --example gemm_speed -- KERNEL M K N [transposed] [REPS]`
//! with `KERNEL` one of `packed`, `avx2`, `matrixmultiply`; `transposed` makes `b`
//! the transposed view `Wᵀ` of a row-major `W: [N, K]`, as in `nn.Linear`. Prints GFLOP/s.

use ndarray::Array2;
use ndarray::linalg::general_mat_mul;
use shared::exact::gemm_with;
use shared::simd::Isa;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "KERNEL M K N [transposed] [REPS]";
    let number = |i: usize| -> usize {
        args.get(i).and_then(|s| s.parse().ok()).expect(usage)
    };
    let (m, k, n) = (number(1), number(2), number(3));
    let transposed = args.get(4).is_some_and(|s| s == "transposed");
    let reps = args
        .get(if transposed { 5 } else { 4 })
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let value = |i: usize, j: usize| ((i * 7 + j * 13) % 17) as f32 / 17.0 - 0.5;
    let a = Array2::from_shape_fn((m, k), |(i, j)| value(i, j));
    let w = Array2::from_shape_fn((n, k), |(i, j)| value(j, i));
    let b_plain = w.t().as_standard_layout().into_owned();
    let b = if transposed { w.t() } else { b_plain.view() };
    let mut c = Array2::<f32>::zeros((m, n));
    let start = std::time::Instant::now();
    for _ in 0..reps {
        match args[0].as_str() {
            "packed" => gemm_with(Isa::detect(), a.view(), b, c.view_mut()),
            #[cfg(target_arch = "x86_64")]
            "avx2" => gemm_with(Isa::Avx2, a.view(), b, c.view_mut()),
            "matrixmultiply" => general_mat_mul(1.0, &a, &b, 0.0, &mut c),
            _ => panic!("{usage}"),
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let flops = 2.0 * (m * k * n) as f64 * reps as f64;
    println!(
        "{:.1} GFLOP/s (c[0,0] = {})",
        flops / seconds / 1e9,
        c[[0, 0]]
    );
}
