//! Chapter 18's chunked forms, faster. Version 1 is each listing, which stays in the
//! chapter:
//!
//! - [`v2_chunked_gemm`], version 2 of
//!   [`linear_chunked`](ch18_linear_attention::chunked::linear_chunked): each chunk's
//!   products through the packed GEMM, within a derived bound of the listing;
//! - [`v2_chunked_delta_gemm`], version 2 of
//!   [`gated_delta_chunked`](ch18_linear_attention::chunked_delta::gated_delta_chunked):
//!   each chunk's products through the packed GEMM, within a derived bound of the listing.
//!
//! Both take their products through [`gemm_rows`], on flat rows.

pub mod gemm_rows;
pub mod v2_chunked_delta_gemm;
pub mod v2_chunked_gemm;
