//! How GGUF stores a tensor's values: as float32, float16, or quantised in blocks of 32.
//!
//! A quantised block keeps one or two float16 numbers for the whole block and a small
//! integer per value:
//!
//! - **Q8_0** (34 bytes): a scale `d`, then 32 signed bytes `q`; value `i` is `q[i]·d`.
//! - **Q4_1** (20 bytes): a scale `d` and a minimum `m`, then 16 bytes holding 32 numbers
//!   of 4 bits; byte `j`'s low half is value `j`, its high half value `j + 16`; value `i`
//!   is `d·q[i] + m`.
//!
//! Both read as gguf-py (llama.cpp's Python package, which transformers calls) reads them:
//! `d` and `m` widened from float16 to float32, one float32 product then one sum, never a
//! fused multiply-add, so every value has the same bits as in transformers.

use half::f16;
use rayon::prelude::*;

use crate::error::LoadError;

/// Values per quantised block.
pub const BLOCK: usize = 32;

/// The storage types this reader understands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GgmlType {
    /// 4 bytes a value.
    F32,
    /// 2 bytes a value.
    F16,
    /// Blocks of 32: a float16 scale, 32 signed bytes.
    Q8_0,
    /// Blocks of 32: a float16 scale and minimum, 32 four-bit numbers.
    Q4_1,
}

/// ggml's names of its type codes, for messages about the ones not read here.
pub(crate) fn type_name(code: u32) -> &'static str {
    const NAMES: [&str; 16] = [
        "F32", "F16", "Q4_0", "Q4_1", "Q4_2", "Q4_3", "Q5_0", "Q5_1", "Q8_0", "Q8_1",
        "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_K",
    ];
    NAMES.get(code as usize).copied().unwrap_or("unknown")
}

impl GgmlType {
    /// The type of a type code, if this reader reads it.
    pub fn from_code(code: u32) -> Option<GgmlType> {
        match code {
            0 => Some(GgmlType::F32),
            1 => Some(GgmlType::F16),
            3 => Some(GgmlType::Q4_1),
            8 => Some(GgmlType::Q8_0),
            _ => None,
        }
    }

    /// The bytes `n` values take, or an error if `n` does not fill whole blocks.
    pub fn bytes_for(self, n: usize, tensor: &str) -> Result<usize, LoadError> {
        let (per_block, block_bytes) = match self {
            GgmlType::F32 => (1, 4),
            GgmlType::F16 => (1, 2),
            GgmlType::Q8_0 => (BLOCK, 34),
            GgmlType::Q4_1 => (BLOCK, 20),
        };
        if !n.is_multiple_of(per_block) {
            return Err(LoadError::Shape {
                tensor: tensor.to_string(),
                detail: format!(
                    "{n} values do not fill whole blocks of {per_block} ({self:?})"
                ),
            });
        }
        Ok(n / per_block * block_bytes)
    }
}

/// The float32 values of a tensor stored as `ggml_type`.
///
/// # Shapes
/// `bytes`: the whole tensor's data. Returns one float per value.
pub fn dequantize(
    ggml_type: GgmlType,
    bytes: &[u8],
    tensor: &str,
) -> Result<Vec<f32>, LoadError> {
    let n_blocks = |block_bytes: usize| {
        if bytes.len().is_multiple_of(block_bytes) {
            Ok(bytes.len() / block_bytes)
        } else {
            Err(LoadError::Shape {
                tensor: tensor.to_string(),
                detail: format!(
                    "{} bytes are not whole {ggml_type:?} blocks of {block_bytes}",
                    bytes.len()
                ),
            })
        }
    };
    let f16_at = |b: &[u8], i: usize| f16::from_le_bytes([b[i], b[i + 1]]).to_f32();
    Ok(match ggml_type {
        GgmlType::F32 => {
            n_blocks(4)?;
            bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect()
        }
        GgmlType::F16 => {
            n_blocks(2)?;
            bytes.chunks_exact(2).map(|b| f16_at(b, 0)).collect()
        }
        // Each block on its own: the blocks are shared between the threads.
        GgmlType::Q8_0 => {
            let mut out = vec![0.0f32; n_blocks(34)? * BLOCK];
            out.par_chunks_mut(BLOCK)
                .zip(bytes.par_chunks_exact(34))
                .for_each(|(out, block)| out.copy_from_slice(&q8_0_block(block)));
            out
        }
        GgmlType::Q4_1 => {
            let mut out = vec![0.0f32; n_blocks(20)? * BLOCK];
            out.par_chunks_mut(BLOCK)
                .zip(bytes.par_chunks_exact(20))
                .for_each(|(out, block)| out.copy_from_slice(&q4_1_block(block)));
            out
        }
    })
}

/// One Q8_0 block: `q[i]·d`.
///
/// # Shapes
/// `block`: 34 bytes. Returns 32 values.
// ANCHOR: q8_0
pub fn q8_0_block(block: &[u8]) -> [f32; BLOCK] {
    let d = f16::from_le_bytes([block[0], block[1]]).to_f32();
    std::array::from_fn(|i| f32::from(block[2 + i] as i8) * d)
}
// ANCHOR_END: q8_0

/// One Q4_1 block: `d·q[i] + m`, the low halves of the 16 bytes first, then the high ones.
///
/// # Shapes
/// `block`: 20 bytes. Returns 32 values.
// ANCHOR: q4_1
pub fn q4_1_block(block: &[u8]) -> [f32; BLOCK] {
    let d = f16::from_le_bytes([block[0], block[1]]).to_f32();
    let m = f16::from_le_bytes([block[2], block[3]]).to_f32();
    let mut values = [0.0; BLOCK];
    for (j, &byte) in block[4..20].iter().enumerate() {
        values[j] = d * f32::from(byte & 0x0F) + m; // the low half: value j
        values[j + 16] = d * f32::from(byte >> 4) + m; // the high half: value j + 16
    }
    values
}
// ANCHOR_END: q4_1
