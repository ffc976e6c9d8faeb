//! At scale, on paper: a cost model of one ring pass. Each step a rank computes its share
//! of the blocks while the next block travels; the step takes the longer of the two. A
//! message costs a fixed latency plus its bytes over the bandwidth (Hockney's model); a
//! block costs its query-key products over the rate at which a device computes them.
//!
//! The chapter fits the three numbers to what `ch24-mpi` measures on the machine at hand,
//! and evaluates the same formula for published hardware figures, which no laptop can
//! measure.

use crate::counts::products_of_rank;
use crate::setup::Sizes;
use crate::shards::Layout;

/// What one message and one product cost.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostModel {
    /// Seconds before the first byte of a message arrives.
    pub latency: f64,
    /// Bytes per second once it flows.
    pub bandwidth: f64,
    /// Query-key products per second of one rank (each also weighs one value row).
    pub products_per_second: f64,
}

/// One ring pass as the model sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RingEstimate {
    /// Seconds a step of the busiest rank spends attending.
    pub compute_per_step: f64,
    /// Seconds one block takes to reach the next rank.
    pub message_per_step: f64,
    /// The whole pass: every step takes the longer of the two (the message travels
    /// beside the attention), the first step needs no message.
    pub total: f64,
}

impl CostModel {
    /// The model's estimate of a causal ring pass of `sizes` over `world` ranks with
    /// `layout` shards, its keys and values `kv_heads` heads of `bytes_per_number` bytes.
    ///
    /// # Shapes
    /// Counts only.
    // ANCHOR: estimate
    pub fn ring(
        &self,
        sizes: Sizes,
        kv_heads: usize,
        bytes_per_number: usize,
        world: usize,
        layout: Layout,
    ) -> RingEstimate {
        let busiest = (0..world)
            .map(|r| products_of_rank(sizes, world, layout, r))
            .max()
            .unwrap_or(0);
        let compute_per_step =
            busiest as f64 / world as f64 / self.products_per_second;
        let block =
            sizes.tokens / world * kv_heads * sizes.head_dim * bytes_per_number;
        let message_per_step = self.latency + (2 * block) as f64 / self.bandwidth;
        let total = compute_per_step
            + (world - 1) as f64 * compute_per_step.max(message_per_step);
        RingEstimate {
            compute_per_step,
            message_per_step,
            total,
        }
    }
    // ANCHOR_END: estimate
}
