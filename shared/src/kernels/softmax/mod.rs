//! The order of PyTorch's CPU softmax and log-softmax kernels, operation for operation:
//! `vector` (how a row is summed in W lanes, with SLEEF's `exp` and `log`), `rows` (a
//! softmax over the last dim) and `columns` (over any other dim). Measured against PyTorch
//! 2.13.0's AVX-512, AVX2 and DEFAULT builds (`tests/fixtures/ops_fixtures.json`,
//! `norm_fixtures.json`).

pub(crate) mod columns;
pub(crate) mod rows;
pub(crate) mod vector;
