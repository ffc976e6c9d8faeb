//! A paged KV cache: a pool of fixed-size blocks, a block table per sequence, and blocks
//! shared between sequences (a common prompt prefix, or a forked sequence), copied only
//! when a shared block would change.
//!
//! Kwon et al., "Efficient Memory Management for Large Language Model Serving with
//! PagedAttention": a contiguous cache per sequence must reserve room for the longest
//! answer up front; a paged one takes a block of `block_size` tokens when the last one is
//! full, so at most one block per sequence is partly empty. The table maps the
//! sequence's logical block `position / block_size` to a physical block of the pool.
//!
//! Prefix caching keys every full block by its tokens and the key of the prefix before
//! it, `key_i = hash(key_{i-1}, tokens_i)`: two prompts that start alike produce the same
//! chain of keys, so a new request finds the blocks an earlier one computed. A freed
//! block keeps its key and contents until the pool hands it out again, so a later request
//! can still find it.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};

use ch14_generation::KvCache;
use shared::{Error, Result, Tensor, f_cat};

use crate::block_table::slot;
use crate::write::Write;
use crate::write_target::write_target;

/// One physical block: up to `block_size` tokens' keys and values in every layer.
#[derive(Clone, Debug, Default)]
// ANCHOR: block
pub struct Block {
    /// How many sequences' tables point at this block.
    pub refs: usize,
    /// The tokens whose keys and values it holds, in order.
    pub tokens: Vec<i64>,
    /// Its prefix-cache key, once it is full.
    pub key: Option<u64>,
    /// Per layer, per token: a key and a value, `[batch, n_kv_heads, 1, head_dim]`.
    pub slots: Vec<Vec<(Tensor, Tensor)>>,
}
// ANCHOR_END: block

/// A sequence as the pool sees it: its tokens and its block table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
// ANCHOR: sequence
pub struct Sequence {
    /// The tokens whose keys and values are in the pool.
    pub tokens: Vec<i64>,
    /// Physical block of each logical block.
    pub table: Vec<usize>,
}
// ANCHOR_END: sequence

impl Sequence {
    /// How many tokens the sequence holds.
    ///
    /// # Shapes
    /// Counts only.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether it holds none.
    ///
    /// # Shapes
    /// Counts only.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }
}

/// The pool of blocks, its free list and its prefix cache.
#[derive(Clone, Debug)]
pub struct BlockPool {
    /// Tokens per block.
    pub block_size: usize,
    /// Layers whose keys and values every block holds.
    pub n_layers: usize,
    /// Every physical block, by id.
    pub blocks: Vec<Block>,
    /// Blocks no table points at, the next to hand out first.
    free: VecDeque<usize>,
    /// Full blocks by prefix-cache key.
    cached: HashMap<u64, usize>,
    /// Full prompt blocks (before the last prompt token) looked up in the prefix cache.
    pub lookups: usize,
    /// Those found there.
    pub hits: usize,
    /// Blocks copied because a shared block was about to change.
    pub copies: usize,
}

/// The prefix-cache key of a full block: its tokens and the key of the blocks before it.
///
/// # Shapes
/// `tokens`: the block's `block_size` token ids.
// ANCHOR: block_key
pub fn block_key(prefix: Option<u64>, tokens: &[i64]) -> u64 {
    let mut hasher = DefaultHasher::new();
    (prefix, tokens).hash(&mut hasher);
    hasher.finish()
}
// ANCHOR_END: block_key

impl BlockPool {
    /// A pool of `n_blocks` empty blocks of `block_size` tokens for `n_layers` layers.
    ///
    /// # Shapes
    /// Keys and values of `[batch, n_kv_heads, 1, head_dim]` per token and layer.
    pub fn new(
        n_blocks: usize,
        block_size: usize,
        n_layers: usize,
    ) -> Result<BlockPool> {
        if block_size == 0 {
            return Err(Error::InvalidArgument {
                op: "BlockPool::new",
                detail: "a block must hold at least one token".into(),
            });
        }
        Ok(BlockPool {
            block_size,
            n_layers,
            blocks: vec![Block::default(); n_blocks],
            free: (0..n_blocks).collect(),
            cached: HashMap::new(),
            lookups: 0,
            hits: 0,
            copies: 0,
        })
    }

    /// Blocks some table points at.
    ///
    /// # Shapes
    /// Counts only.
    pub fn used(&self) -> usize {
        self.blocks.len() - self.free.len()
    }

    /// Takes the next free block, forgetting what it held.
    fn allocate(&mut self) -> Result<usize> {
        let id = self
            .free
            .pop_front()
            .ok_or_else(|| Error::InvalidArgument {
                op: "BlockPool::allocate",
                detail: format!("all {} blocks are in use", self.blocks.len()),
            })?;
        let block = &mut self.blocks[id];
        if let Some(key) = block.key.take()
            && self.cached.get(&key) == Some(&id)
        {
            self.cached.remove(&key);
        }
        *block = Block {
            refs: 1,
            slots: vec![Vec::new(); self.n_layers],
            ..Block::default()
        };
        Ok(id)
    }

    /// A new sequence for `prompt`: the table of the longest run of the prompt's full
    /// blocks already in the prefix cache. Their tokens count as held; the caller appends
    /// the rest of the prompt with [`BlockPool::append`]. The last prompt token is never
    /// taken from the cache: its logits pick the first new token.
    ///
    /// # Shapes
    /// `prompt`: token ids.
    // ANCHOR: admit
    pub fn admit(&mut self, prompt: &[i64]) -> Sequence {
        let mut seq = Sequence::default();
        let mut prefix = None;
        let before_last = &prompt[..prompt.len().saturating_sub(1)];
        self.lookups += before_last.len() / self.block_size;
        for tokens in before_last.chunks_exact(self.block_size) {
            let key = block_key(prefix, tokens);
            let Some(&id) = self.cached.get(&key) else {
                break; // the keys after a miss chain on it: they miss too
            };
            if self.blocks[id].tokens != tokens {
                break; // two prefixes with the same key: not a hit
            }
            if self.blocks[id].refs == 0 {
                self.free.retain(|&free| free != id); // revived before it was reused
            }
            self.blocks[id].refs += 1;
            self.hits += 1;
            seq.table.push(id);
            seq.tokens.extend_from_slice(tokens);
            prefix = Some(key);
        }
        seq
    }
    // ANCHOR_END: admit

    /// Appends one token's keys and values (one per layer) to `seq`: into its last block,
    /// a fresh one, or a copy of a shared one (see [`write_target`]). A block that becomes
    /// full enters the prefix cache.
    ///
    /// # Shapes
    /// `kv`: per layer, a key and a value of `[batch, n_kv_heads, 1, head_dim]`.
    // ANCHOR: append
    pub fn append(
        &mut self,
        seq: &mut Sequence,
        token: i64,
        kv: Vec<(Tensor, Tensor)>,
    ) -> Result<()> {
        if kv.len() != self.n_layers {
            return Err(Error::InvalidArgument {
                op: "BlockPool::append",
                detail: format!(
                    "{} layers' keys for a pool of {} layers",
                    kv.len(),
                    self.n_layers
                ),
            });
        }
        let position = seq.len();
        let last_refs = seq.table.last().map(|&id| self.blocks[id].refs);
        match write_target(position, self.block_size, last_refs) {
            Write::NewBlock => {
                let id = self.allocate()?;
                seq.table.push(id);
            }
            Write::CopyOnWrite => {
                let shared = *seq.table.last().expect("a block to copy");
                let copy = self.allocate()?;
                self.blocks[copy].tokens = self.blocks[shared].tokens.clone();
                self.blocks[copy].slots = self.blocks[shared].slots.clone();
                self.blocks[shared].refs -= 1;
                *seq.table.last_mut().expect("a block to copy") = copy;
                self.copies += 1;
            }
            Write::InPlace => {}
        }
        let (id, _) = slot(&seq.table, self.block_size, position);
        let block = &mut self.blocks[id];
        block.tokens.push(token);
        for (layer, kv) in block.slots.iter_mut().zip(kv) {
            layer.push(kv);
        }
        seq.tokens.push(token);
        if block.tokens.len() == self.block_size {
            let prefix = seq
                .table
                .len()
                .checked_sub(2)
                .and_then(|i| self.blocks[seq.table[i]].key);
            let key = block_key(prefix, &self.blocks[id].tokens);
            self.blocks[id].key = Some(key);
            self.cached.entry(key).or_insert(id);
        }
        Ok(())
    }
    // ANCHOR_END: append

    /// A second sequence reading the same blocks (one more reference to each), as when one
    /// prompt is answered several times.
    ///
    /// # Shapes
    /// Tables only: no keys or values move.
    pub fn fork(&mut self, seq: &Sequence) -> Sequence {
        for &id in &seq.table {
            self.blocks[id].refs += 1;
        }
        seq.clone()
    }

    /// Ends `seq`: one reference fewer to each of its blocks; a block no table reads goes
    /// back to the free list, keeping its contents for the prefix cache until reused.
    ///
    /// # Shapes
    /// Tables only: no keys or values move.
    pub fn release(&mut self, seq: Sequence) {
        for &id in seq.table.iter().rev() {
            self.blocks[id].refs -= 1;
            if self.blocks[id].refs == 0 {
                self.free.push_back(id);
            }
        }
    }

    /// The keys and values of `seq` in `layer`, gathered through its table into one
    /// contiguous cache, token by token.
    ///
    /// # Shapes
    /// Returns keys and values of `[batch, n_kv_heads, len, head_dim]`.
    // ANCHOR: gather
    pub fn gather(&self, seq: &Sequence, layer: usize) -> Result<KvCache> {
        let (keys, values): (Vec<&Tensor>, Vec<&Tensor>) = (0..seq.len())
            .map(|position| {
                let (id, offset) = slot(&seq.table, self.block_size, position);
                let (k, v) = &self.blocks[id].slots[layer][offset];
                (k, v)
            })
            .unzip();
        Ok(KvCache::new(f_cat(&keys, 2)?, f_cat(&values, 2)?, None))
    }
    // ANCHOR_END: gather
}
