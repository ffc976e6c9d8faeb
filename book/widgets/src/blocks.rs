//! Chapter 17's block pool as requests arrive: the chapter's batch (one system prompt,
//! four questions) admitted one request at a time into a pool of blocks, decoded one token
//! per request at a time, and forked (two answers to one prompt), all through the
//! chapter's own `BlockPool`, `prefill_paged` and `step_paged` with its target model.
//!
//! A request is stateless: it names the block size and every step since the start, and
//! the answer replays them from an empty pool, so the page and the native check get the
//! same pool for the same steps.

use std::collections::HashSet;

use ch15_modern_layer::TinyModel;
use ch17_inference::paged::{BlockPool, Sequence};
use ch17_inference::paged_decode::{prefill_paged, step_paged};
use ch17_inference::setup::{BLOCK_SIZE, CONFIG, SYSTEM, USER, recipe};
use serde::{Deserialize, Serialize};
use shared::manual_seed;

/// Blocks in the widget's pool: room for the whole batch with blocks of one token, and
/// a few decoding rounds, before the pool runs out.
pub const POOL_BLOCKS: usize = 32;

/// The largest block size the page offers.
pub const MAX_BLOCK_SIZE: usize = 8;

/// The seed of the chapter's target model.
const SEED: u64 = 2026;

/// The page's request: a block size and the steps taken since the pool was empty.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockSettings {
    /// Tokens per block, 1 to [`MAX_BLOCK_SIZE`] (the chapter's 4 if left out).
    pub block_size: Option<usize>,
    /// In order: `request` (the next request of the batch arrives), `token` (every
    /// sequence decodes one token), `fork` (the last sequence is answered a second time).
    #[serde(default)]
    pub steps: Vec<String>,
}

/// One physical block as the page draws it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BlockView {
    /// Its tokens, in order (none for a free block).
    pub tokens: Vec<i64>,
    /// How many tables point at it.
    pub refs: usize,
    /// `free`, `used` (one table), `shared` (several) or `copied` (one table, made by
    /// copy-on-write from a shared block).
    pub state: &'static str,
}

/// One sequence: its name, its tokens and its block table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SequenceView {
    /// `request 1`, or `request 1, second answer` for a fork.
    pub name: String,
    /// Every token the pool holds for it.
    pub tokens: Vec<i64>,
    /// Physical block of each logical block.
    pub table: Vec<usize>,
}

/// The pool after the steps.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PoolView {
    /// Tokens per block.
    pub block_size: usize,
    /// The largest block size the page offers, [`MAX_BLOCK_SIZE`].
    pub max_block_size: usize,
    /// Every block of the pool, by id.
    pub blocks: Vec<BlockView>,
    /// The sequences, in the order they arrived.
    pub sequences: Vec<SequenceView>,
    /// Requests of the batch still to arrive.
    pub waiting: usize,
    /// The counts under the pool, in words.
    pub caption: String,
}

/// Replays `settings.steps` from an empty pool. An error is a message for the reader (an
/// unknown step, a block size out of range, a pool with no free block left).
pub fn pool(settings: &BlockSettings) -> Result<PoolView, String> {
    let block_size = settings.block_size.unwrap_or(BLOCK_SIZE);
    if !(1..=MAX_BLOCK_SIZE).contains(&block_size) {
        return Err(format!(
            "a block holds 1 to {MAX_BLOCK_SIZE} tokens here, not {block_size}"
        ));
    }
    let recipe = recipe();
    manual_seed(SEED);
    let target = TinyModel::new(CONFIG);
    let mut pool = BlockPool::new(POOL_BLOCKS, block_size, CONFIG.n_layers)
        .map_err(|e| e.to_string())?;
    // Per sequence: its name, its table and tokens, the token it writes next.
    let mut seqs: Vec<(String, Sequence, i64)> = Vec::new();
    let mut copied = HashSet::new();
    let mut arrived = 0;
    for step in &settings.steps {
        match step.as_str() {
            "request" => {
                let user = USER.get(arrived).ok_or_else(|| {
                    format!("all {} requests have arrived", USER.len())
                })?;
                let prompt = [&SYSTEM[..], user].concat();
                let (seq, last) = prefill_paged(&target, &mut pool, &prompt, &recipe)
                    .map_err(|e| e.to_string())?;
                seqs.push((
                    format!("request {arrived}"),
                    seq,
                    last.argmax_dim(-1, true).item(),
                ));
                arrived += 1;
            }
            "token" => {
                for (_, seq, next) in &mut seqs {
                    let copies = pool.copies;
                    let last = step_paged(&target, &mut pool, seq, *next, &recipe)
                        .map_err(|e| e.to_string())?;
                    if pool.copies > copies {
                        copied.insert(*seq.table.last().expect("a block written"));
                    }
                    *next = last.argmax_dim(-1, true).item();
                }
            }
            "fork" => {
                let (name, seq, next) =
                    seqs.last().ok_or("no sequence to fork yet")?;
                let fork = pool.fork(seq);
                seqs.push((format!("{name}, second answer"), fork, *next));
            }
            other => {
                return Err(format!("no step {other:?}: request, token or fork"));
            }
        }
    }
    let blocks = pool
        .blocks
        .iter()
        .enumerate()
        .map(|(id, block)| BlockView {
            tokens: if block.refs == 0 {
                Vec::new()
            } else {
                block.tokens.clone()
            },
            refs: block.refs,
            state: match block.refs {
                0 => "free",
                1 if copied.contains(&id) => "copied",
                1 => "used",
                _ => "shared",
            },
        })
        .collect();
    let unshared: usize = seqs
        .iter()
        .map(|(_, seq, _)| seq.len().div_ceil(block_size))
        .sum();
    let caption = format!(
        "prefix cache: {} of {} full prompt blocks found; blocks in use: {} of {POOL_BLOCKS} \
         (without sharing: {unshared}); copies on write: {}",
        pool.hits,
        pool.lookups,
        pool.used(),
        pool.copies
    );
    Ok(PoolView {
        block_size,
        max_block_size: MAX_BLOCK_SIZE,
        blocks,
        sequences: seqs
            .into_iter()
            .map(|(name, seq, _)| SequenceView {
                name,
                tokens: seq.tokens,
                table: seq.table,
            })
            .collect(),
        waiting: USER.len() - arrived,
        caption,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(names: &[&str], block_size: usize) -> Result<PoolView, String> {
        pool(&BlockSettings {
            block_size: Some(block_size),
            steps: names.iter().map(|s| s.to_string()).collect(),
        })
    }

    /// The four requests at the chapter's block size give the tables and the hits the
    /// chapter prints.
    #[test]
    fn the_batch_fills_the_pool_as_the_chapter_prints() {
        let view = steps(&["request"; 4], BLOCK_SIZE).unwrap();
        let printed = include_str!(
            "../../../chapters/ch17-inference/tests/snapshots/output__a_paged_cache_16_blocks_of_4_tokens_four_requests_with_one_system_prompt.snap"
        );
        for (r, seq) in view.sequences.iter().enumerate() {
            let line = format!(
                "request {r}: {} tokens, block table {:?}",
                seq.tokens.len(),
                seq.table
            );
            assert!(printed.contains(&line), "{line}");
        }
        assert!(printed.contains("prefix cache: 6 of 9 full prompt blocks found"));
        assert!(view.caption.starts_with("prefix cache: 6 of 9"));
        assert!(view.caption.contains("blocks in use: 7 of"));
        assert_eq!(view.waiting, 0);
        assert_eq!(view.blocks[0].state, "shared");
        assert_eq!(view.blocks[0].refs, 4);
        assert_eq!(view.blocks[0].tokens, SYSTEM[..4]);
    }

    /// A fork shares every block; the first write into its shared last block copies it.
    #[test]
    fn a_fork_copies_its_shared_block_on_the_next_token() {
        let view = steps(&["request", "token", "fork", "token"], 4).unwrap();
        assert!(
            view.caption.ends_with("copies on write: 1"),
            "{}",
            view.caption
        );
        let copied: Vec<_> =
            view.blocks.iter().filter(|b| b.state == "copied").collect();
        assert_eq!(copied.len(), 1);
        let (a, b) = (&view.sequences[0], &view.sequences[1]);
        assert_eq!(a.tokens, b.tokens, "two answers, greedy: the same tokens");
        assert_ne!(a.table.last(), b.table.last());
        assert_eq!(a.table[..3], b.table[..3]);
    }

    #[test]
    fn bad_steps_are_messages() {
        assert!(
            steps(&["request"; 5], 4)
                .unwrap_err()
                .contains("all 4 requests")
        );
        assert!(steps(&["fork"], 4).unwrap_err().contains("no sequence"));
        assert!(steps(&["jump"], 4).unwrap_err().contains("no step"));
        assert!(steps(&[], 9).unwrap_err().contains("1 to 8"));
        let full = steps(
            &[
                "request", "request", "request", "request", "token", "token",
                "token", "token",
            ],
            1,
        );
        assert!(full.unwrap_err().contains("blocks are in use"));
    }
}
