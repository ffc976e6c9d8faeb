//! Chapter 18's chunked forms, faster. Version 1 is each listing, which stays in the
//! chapter:
//!
//! - [`v2_chunked_gemm`]:
//!   [`linear_chunked`](ch18_linear_attention::chunked::linear_chunked) with each chunk's
//!   products through the packed GEMM: within a derived bound of the listing;
//! - [`v2_chunked_delta_gemm`]:
//!   [`gated_delta_chunked`](ch18_linear_attention::chunked_delta::gated_delta_chunked)
//!   with each chunk's products through the packed GEMM: within a derived bound of the
//!   listing.
//!
//! [`gemm_rows`]: the three products they take, on flat rows.

pub mod gemm_rows;
pub mod v2_chunked_delta_gemm;
pub mod v2_chunked_gemm;
