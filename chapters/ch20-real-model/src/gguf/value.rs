//! The metadata's values: each starts with a type code (u32), then the value.

use std::fmt;

use super::Cursor;
use crate::error::LoadError;

/// One metadata value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Types 0, 2, 4 and 10: u8, u16, u32, u64.
    Unsigned(u64),
    /// Types 1, 3, 5 and 11: i8, i16, i32, i64.
    Signed(i64),
    /// Types 6 and 12: f32, f64.
    Float(f64),
    /// Type 7: one byte, 0 or 1.
    Bool(bool),
    /// Type 8: a length (u64) and UTF-8 bytes.
    String(String),
    /// Type 9: an element type, a count (u64) and the elements.
    Array(Vec<Value>),
}

impl Value {
    /// Reads a type code and the value it announces, for metadata `key`.
    pub(crate) fn read(cur: &mut Cursor, key: &str) -> Result<Value, LoadError> {
        let code = cur.u32(&format!("the type of {key}"))?;
        Value::read_typed(cur, code, key)
    }

    fn read_typed(
        cur: &mut Cursor,
        code: u32,
        key: &str,
    ) -> Result<Value, LoadError> {
        Ok(match code {
            0 => Value::Unsigned(cur.array::<1>(key)?[0].into()),
            1 => Value::Signed(i8::from_le_bytes(cur.array(key)?).into()),
            2 => Value::Unsigned(u16::from_le_bytes(cur.array(key)?).into()),
            3 => Value::Signed(i16::from_le_bytes(cur.array(key)?).into()),
            4 => Value::Unsigned(cur.u32(key)?.into()),
            5 => Value::Signed(i32::from_le_bytes(cur.array(key)?).into()),
            6 => Value::Float(f32::from_le_bytes(cur.array(key)?).into()),
            7 => Value::Bool(cur.array::<1>(key)?[0] != 0),
            8 => Value::String(cur.string(key)?),
            9 => {
                let element = cur.u32(&format!("the element type of {key}"))?;
                if element == 9 {
                    return Err(
                        cur.corrupt(format!("{key}: arrays of arrays are not read"))
                    );
                }
                // Each element takes at least its number's bytes (a string: its length).
                let element_bytes = match element {
                    2 | 3 => 2,
                    4..=6 => 4,
                    8 | 10..=12 => 8,
                    _ => 1,
                };
                let n = cur.count(&format!("the length of {key}"), element_bytes)?;
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(Value::read_typed(cur, element, key)?);
                }
                Value::Array(items)
            }
            10 => Value::Unsigned(cur.u64(key)?),
            11 => Value::Signed(i64::from_le_bytes(cur.array(key)?)),
            12 => Value::Float(f64::from_le_bytes(cur.array(key)?)),
            other => {
                return Err(
                    cur.corrupt(format!("{key} has an unknown value type {other}"))
                );
            }
        })
    }

    /// The value as an unsigned integer, if it is a non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::Unsigned(v) => Some(v),
            Value::Signed(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The value as a float, if it is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Float(v) => Some(v),
            Value::Unsigned(v) => Some(v as f64),
            Value::Signed(v) => Some(v as f64),
            _ => None,
        }
    }

    /// The value as a string, if it is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The value as a list of strings, if it is an array of strings.
    pub fn as_strings(&self) -> Option<Vec<&str>> {
        match self {
            Value::Array(items) => items.iter().map(Value::as_str).collect(),
            _ => None,
        }
    }
}

/// Short forms for messages: arrays by their length.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Unsigned(v) => write!(f, "{v}"),
            Value::Signed(v) => write!(f, "{v}"),
            Value::Float(v) => write!(f, "{v}"),
            Value::Bool(v) => write!(f, "{v}"),
            Value::String(s) if s.chars().count() > 60 => {
                let start: String = s.chars().take(60).collect();
                write!(f, "{start:?}... ({} bytes)", s.len())
            }
            Value::String(s) => write!(f, "{s:?}"),
            Value::Array(items) => write!(f, "[{} items]", items.len()),
        }
    }
}
