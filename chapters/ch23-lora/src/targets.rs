//! The projections of a layer an adapter can sit beside, named as transformers names them
//! (and PEFT's `target_modules` lists them).

use ch15_modern_layer::Layer;
use shared::nn::Linear;

use crate::error::LoraError;

/// One of the layer's seven projections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Target {
    /// `self_attn.q_proj`: the queries.
    Query,
    /// `self_attn.k_proj`: the keys.
    Key,
    /// `self_attn.v_proj`: the values.
    Value,
    /// `self_attn.o_proj`: the heads mixed back into the stream.
    Output,
    /// `mlp.gate_proj`: SwiGLU's gate branch.
    Gate,
    /// `mlp.up_proj`: SwiGLU's value branch.
    Up,
    /// `mlp.down_proj`: SwiGLU's way back to the stream.
    Down,
}

impl Target {
    /// All seven, in the order of the layer's modules (PyTorch's `named_modules()`).
    pub const ALL: [Target; 7] = [
        Target::Query,
        Target::Key,
        Target::Value,
        Target::Output,
        Target::Gate,
        Target::Up,
        Target::Down,
    ];

    /// The module's own name, as `target_modules` lists it.
    pub fn name(self) -> &'static str {
        match self {
            Target::Query => "q_proj",
            Target::Key => "k_proj",
            Target::Value => "v_proj",
            Target::Output => "o_proj",
            Target::Gate => "gate_proj",
            Target::Up => "up_proj",
            Target::Down => "down_proj",
        }
    }

    /// Its path inside a layer: `self_attn.q_proj`, `mlp.gate_proj`.
    pub fn path(self) -> String {
        match self {
            Target::Gate | Target::Up | Target::Down => {
                format!("mlp.{}", self.name())
            }
            _ => format!("self_attn.{}", self.name()),
        }
    }

    /// The target called `name`, or an error listing the seven.
    pub fn parse(name: &str) -> Result<Target, LoraError> {
        Target::ALL
            .into_iter()
            .find(|t| t.name() == name)
            .ok_or_else(|| {
                let known: Vec<&str> = Target::ALL.iter().map(|t| t.name()).collect();
                LoraError::Settings(format!(
                    "unknown target module {name:?}: a layer has {}",
                    known.join(", ")
                ))
            })
    }

    /// The projection in `layer`.
    pub fn linear(self, layer: &Layer) -> &Linear {
        match self {
            Target::Query => &layer.attn.w_query,
            Target::Key => &layer.attn.w_key,
            Target::Value => &layer.attn.w_value,
            Target::Output => &layer.attn.out_proj,
            Target::Gate => &layer.ffn.w_gate,
            Target::Up => &layer.ffn.w_up,
            Target::Down => &layer.ffn.w_down,
        }
    }

    /// The projection in `layer`, mutable (to merge an adapter into it).
    pub fn linear_mut(self, layer: &mut Layer) -> &mut Linear {
        match self {
            Target::Query => &mut layer.attn.w_query,
            Target::Key => &mut layer.attn.w_key,
            Target::Value => &mut layer.attn.w_value,
            Target::Output => &mut layer.attn.out_proj,
            Target::Gate => &mut layer.ffn.w_gate,
            Target::Up => &mut layer.ffn.w_up,
            Target::Down => &mut layer.ffn.w_down,
        }
    }
}
