//! Chapter 17's figure: the cache ledger, the bytes one token adds to the cache of each
//! published model (bfloat16), computed by the chapter's own ledger.

use ch17_inference::ledger::CARDS;

use crate::bar_chart::{Bar, BarChart};

/// One bar per model card, in the chapter's order, labelled with its attention.
pub fn cache_ledger() -> BarChart {
    BarChart {
        name: "ch17-cache-ledger",
        title: "What one token adds to the cache, bfloat16",
        x_label: "bytes per token",
        bars: CARDS
            .iter()
            .map(|card| Bar {
                label: card.name,
                group: card.attention,
                value: card.bytes_per_token(2),
            })
            .collect(),
    }
}
