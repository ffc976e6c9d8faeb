//! Trains the chapter's run from a seed and writes every step's loss as its float32 bits,
//! one hex word a line, as `reference/ch19_induction_heads.py --dump PATH` writes
//! PyTorch's, so the two can be compared bit for bit:
//!
//! ```text
//! cargo run --release -p ch19-induction-heads --example loss_bits -- SEED STEPS > ours.txt
//! ```

use ch19_induction_heads::data::Repeats;
use ch19_induction_heads::model::AttentionOnly;
use ch19_induction_heads::train::train;
use course::process;

fn main() {
    let mut args = std::env::args().skip(1);
    let seed: u64 = args.next().map_or(7, |s| s.parse().expect("a seed"));
    let steps: u32 = args
        .next()
        .map_or(2000, |s| s.parse().expect("a number of steps"));
    process::keep_freed_memory();
    process::on_pool_thread(|| {
        shared::manual_seed(seed);
        let mut model = AttentionOnly::new();
        // The evaluation batch and the shown sequence come before the first training batch.
        let _ = Repeats::Variable.draw(256);
        let _ = Repeats::Variable.draw(1);
        train(&mut model, Repeats::Variable, steps, |_, loss, _| {
            println!("{:08x}", loss.to_bits());
        });
    });
}
