//! GGUF, the file llama.cpp runs models from: a lesson in reading a binary format.
//!
//! A GGUF file is four parts, one after the other, every number little-endian:
//!
//! 1. a **header**: the bytes `GGUF`, a version (3), how many tensors, how many metadata
//!    entries;
//! 2. the **metadata**: key–value pairs (`llama.block_count = 30`, the tokenizer's
//!    vocabulary, the chat template), each value tagged with its type;
//! 3. the **tensor infos**: each tensor's name, its sizes (innermost first, the reverse
//!    of PyTorch's order), its type (F32, or a quantised type such as Q8_0) and where its
//!    bytes start, counted from the data section;
//! 4. the **data**: the tensors' bytes, starting at the next multiple of
//!    `general.alignment` (32 unless the metadata says otherwise).
//!
//! Reading it is a cursor that moves forward through the bytes, checking before every read
//! that the bytes are there: a truncated or corrupted file is an error that names the
//! file, the part and the offset (and for a file cut short, the bytes it lacks), never a
//! panic.

mod quant;
mod value;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use quant::{BLOCK, GgmlType, dequantize, q4_1_block, q8_0_block};
pub use value::Value;

use crate::error::LoadError;

/// The first four bytes of every GGUF file.
pub const MAGIC: &[u8; 4] = b"GGUF";

/// The data section's alignment when `general.alignment` is absent.
pub const DEFAULT_ALIGNMENT: u64 = 32;

/// One tensor's entry in the tensor infos.
#[derive(Clone, Debug, PartialEq)]
// ANCHOR: tensor_info
pub struct TensorInfo {
    /// Its name, `blk.0.attn_q.weight`.
    pub name: String,
    /// Its sizes in PyTorch's order, outermost first (GGUF stores them innermost
    /// first).
    pub shape: Vec<usize>,
    /// How its values are stored.
    pub ggml_type: GgmlType,
    /// Where its bytes start, from the start of the data section.
    pub offset: u64,
}
// ANCHOR_END: tensor_info

/// A parsed GGUF file: its metadata, its tensor infos and its bytes.
#[derive(Debug)]
pub struct GgufFile {
    /// Where it was read from (for error messages).
    pub path: PathBuf,
    /// The format version (2 or 3).
    pub version: u32,
    /// Every metadata entry, by key.
    pub metadata: BTreeMap<String, Value>,
    /// Every tensor, in the file's order.
    pub tensors: Vec<TensorInfo>,
    /// Where the data section starts in `bytes`.
    pub data_start: usize,
    bytes: Vec<u8>,
}

/// A cursor over the file's bytes that refuses to read past the end.
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    pub(crate) at: usize,
    path: &'a Path,
}

impl<'a> Cursor<'a> {
    /// The next `n` bytes, for reading `what`.
    pub(crate) fn take(
        &mut self,
        n: usize,
        what: &str,
    ) -> Result<&'a [u8], LoadError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len());
        let Some(end) = end else {
            return Err(LoadError::Truncated {
                path: self.path.to_path_buf(),
                what: what.to_string(),
                offset: self.at as u64,
                needed: n as u64,
                len: self.bytes.len() as u64,
            });
        };
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    /// `N` bytes as an array, for the fixed-size numbers.
    pub(crate) fn array<const N: usize>(
        &mut self,
        what: &str,
    ) -> Result<[u8; N], LoadError> {
        Ok(self.take(N, what)?.try_into().expect("took N bytes"))
    }

    pub(crate) fn u32(&mut self, what: &str) -> Result<u32, LoadError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn u64(&mut self, what: &str) -> Result<u64, LoadError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// A count that must fit what is left of the file, each item taking at least
    /// `min_item_bytes`: a count the file is too short for is refused before anything is
    /// allocated, as a truncated file (the usual cause: a download cut short) with the bytes
    /// the count needs.
    pub(crate) fn count(
        &mut self,
        what: &str,
        min_item_bytes: u64,
    ) -> Result<usize, LoadError> {
        let n = self.u64(what)?;
        let min = min_item_bytes.max(1);
        let needed = n.saturating_mul(min);
        if needed > (self.bytes.len() - self.at) as u64 {
            let items = match min {
                1 => format!("{n} bytes"),
                _ => format!("{n} entries of at least {min} bytes"),
            };
            return Err(LoadError::Truncated {
                path: self.path.to_path_buf(),
                what: format!("{what} ({items})"),
                offset: self.at as u64,
                needed,
                len: self.bytes.len() as u64,
            });
        }
        Ok(n as usize)
    }

    /// A string: its length in bytes (u64), then UTF-8 bytes.
    pub(crate) fn string(&mut self, what: &str) -> Result<String, LoadError> {
        let n = self.count(what, 1)?;
        let at = self.at;
        let bytes = self.take(n, what)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| LoadError::Corrupt {
            path: self.path.to_path_buf(),
            offset: at as u64,
            detail: format!("{what} is not UTF-8"),
        })
    }

    /// An error about the bytes at the cursor.
    pub(crate) fn corrupt(&self, detail: String) -> LoadError {
        LoadError::Corrupt {
            path: self.path.to_path_buf(),
            offset: self.at as u64,
            detail,
        }
    }
}

impl GgufFile {
    /// Reads and parses the file at `path`.
    pub fn open(path: &Path) -> Result<GgufFile, LoadError> {
        let bytes = std::fs::read(path).map_err(|source| LoadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        GgufFile::parse(bytes, path)
    }

    /// Parses a whole file held in memory; `path` only names it in errors.
    // ANCHOR: parse
    pub fn parse(bytes: Vec<u8>, path: &Path) -> Result<GgufFile, LoadError> {
        let mut cur = Cursor {
            bytes: &bytes,
            at: 0,
            path,
        };
        // 1. The header.
        if cur.take(4, "the magic bytes")? != MAGIC {
            return Err(LoadError::NotGguf {
                path: path.to_path_buf(),
            });
        }
        let version = cur.u32("the version")?;
        if !(2..=3).contains(&version) {
            return Err(LoadError::Unsupported {
                path: path.to_path_buf(),
                field: "GGUF version".into(),
                value: version.to_string(),
            });
        }
        let n_tensors = cur.count("the tensor count", 8 + 4 + 8 + 4 + 8)?;
        let n_metadata = cur.count("the metadata count", 8 + 4)?;
        // 2. The metadata.
        let mut metadata = BTreeMap::new();
        for _ in 0..n_metadata {
            let key = cur.string("a metadata key")?;
            let value = Value::read(&mut cur, &key)?;
            metadata.insert(key, value);
        }
        // 3. The tensor infos.
        let mut tensors = Vec::with_capacity(n_tensors);
        for _ in 0..n_tensors {
            tensors.push(TensorInfo::read(&mut cur)?);
        }
        // 4. The data, at the next multiple of the alignment.
        let alignment = match metadata.get("general.alignment") {
            Some(v) => {
                v.as_u64().filter(|a| a.is_power_of_two()).ok_or_else(|| {
                    cur.corrupt(format!(
                        "general.alignment must be a power of two, got {v}"
                    ))
                })?
            }
            None => DEFAULT_ALIGNMENT,
        };
        let data_start = (cur.at as u64).div_ceil(alignment) * alignment;
        let file = GgufFile {
            path: path.to_path_buf(),
            version,
            metadata,
            tensors,
            data_start: data_start as usize,
            bytes,
        };
        for info in &file.tensors {
            file.tensor_bytes(info)?; // every tensor lies inside the file
        }
        Ok(file)
    }
    // ANCHOR_END: parse

    /// The raw bytes of one tensor.
    pub fn tensor_bytes(&self, info: &TensorInfo) -> Result<&[u8], LoadError> {
        let numel = info.shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        let len = numel.and_then(|n| info.ggml_type.bytes_for(n, &info.name).ok());
        let start = (self.data_start as u64).checked_add(info.offset);
        let end = start.zip(len).and_then(|(s, l)| s.checked_add(l as u64));
        match (start, end) {
            (Some(start), Some(end)) if end <= self.bytes.len() as u64 => {
                Ok(&self.bytes[start as usize..end as usize])
            }
            _ => Err(LoadError::Truncated {
                path: self.path.clone(),
                what: format!("the data of tensor {}", info.name),
                offset: start.unwrap_or(u64::MAX),
                needed: len.map_or(u64::MAX, |l| l as u64),
                len: self.bytes.len() as u64,
            }),
        }
    }

    /// One tensor's values as float32, dequantised, with its shape in PyTorch's order.
    ///
    /// # Shapes
    /// Returns the values of `info.shape`, row-major.
    pub fn tensor(&self, name: &str) -> Result<(Vec<f32>, Vec<usize>), LoadError> {
        let info = self
            .tensors
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| LoadError::MissingTensor {
                path: self.path.clone(),
                name: name.to_string(),
            })?;
        let values =
            dequantize(info.ggml_type, self.tensor_bytes(info)?, &info.name)?;
        Ok((values, info.shape.clone()))
    }

    /// The metadata value of `key`, or an error naming it.
    pub fn get(&self, key: &str) -> Result<&Value, LoadError> {
        self.metadata.get(key).ok_or_else(|| LoadError::MissingKey {
            path: self.path.clone(),
            key: key.to_string(),
        })
    }
}

impl TensorInfo {
    /// One entry of the tensor infos: name, dims (count, then each innermost first), type,
    /// offset.
    fn read(cur: &mut Cursor) -> Result<TensorInfo, LoadError> {
        let name = cur.string("a tensor name")?;
        let n_dims = cur.u32(&format!("the dims of {name}"))?;
        if n_dims > 4 {
            return Err(
                cur.corrupt(format!("tensor {name} has {n_dims} dims (at most 4)"))
            );
        }
        let mut shape = Vec::with_capacity(n_dims as usize);
        for _ in 0..n_dims {
            let d = cur.u64(&format!("the dims of {name}"))?;
            shape.push(
                usize::try_from(d)
                    .map_err(|_| cur.corrupt(format!("tensor {name}: size {d}")))?,
            );
        }
        shape.reverse(); // innermost first in the file, outermost first in PyTorch
        let code = cur.u32(&format!("the type of {name}"))?;
        let ggml_type =
            GgmlType::from_code(code).ok_or_else(|| LoadError::Unsupported {
                path: cur.path.to_path_buf(),
                field: format!("type of tensor {name}"),
                value: format!("ggml type {code} ({})", quant::type_name(code)),
            })?;
        let offset = cur.u64(&format!("the offset of {name}"))?;
        Ok(TensorInfo {
            name,
            shape,
            ggml_type,
            offset,
        })
    }
}
