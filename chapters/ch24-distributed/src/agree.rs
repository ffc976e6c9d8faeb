//! Before any attention message, every rank tells the others its sizes; all of them
//! check the same list and so reach the same verdict. A rank that found a problem alone
//! would stop while the others wait for it forever.

use shared::{Error, Result};

use crate::setup::Sizes;
use crate::shards::{Layout, chunk_len};
use crate::ulysses::check_heads;

/// The sizes every rank reported, checked: all the same, the sequence cut into two chunks
/// per rank (zigzag shards need `2W`), the heads shared evenly (Ulysses, tensor-parallel
/// heads). Returns the common sizes, or an error naming every size that does not fit.
///
/// # Shapes
/// `reported`: one entry per rank, in rank order, at least one.
pub fn check_agreed_sizes(reported: &[Sizes]) -> Result<Sizes> {
    let world = reported.len();
    let Some(&first) = reported.first() else {
        return Err(Error::InvalidArgument {
            op: "check_agreed_sizes",
            detail: "no rank reported its sizes".into(),
        });
    };
    let describe = |s: &Sizes| {
        format!("{} tokens, {} heads of {}", s.tokens, s.heads, s.head_dim)
    };
    if let Some((rank, other)) =
        reported.iter().enumerate().find(|(_, s)| **s != first)
    {
        return Err(Error::InvalidArgument {
            op: "check_agreed_sizes",
            detail: format!(
                "the ranks disagree: rank 0 has {}, rank {rank} has {}",
                describe(&first),
                describe(other)
            ),
        });
    }
    chunk_len(first.tokens, world, Layout::Zigzag)?;
    check_heads("check_agreed_sizes", first.heads, world)?;
    if first.head_dim == 0 {
        return Err(Error::InvalidArgument {
            op: "check_agreed_sizes",
            detail: format!("{}: a head needs at least one number", describe(&first)),
        });
    }
    Ok(first)
}
