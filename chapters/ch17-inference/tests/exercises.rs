//! One test per exercise, named after it, so `cargo test -p ch17-inference --features
//! exercise NAME` checks just that function. Each checks what PyTorch printed (through the
//! reference output) or the definition, and properties a hard-coded answer cannot
//! satisfy; none calls another exercise.

use course::narrative::step_text;
use course::quiet_proptest::quiet;
use proptest::prelude::*;

use ch17_inference::accepted::accepted;
use ch17_inference::block_table::slot;
use ch17_inference::mla_bytes::mla_bytes_per_token;
use ch17_inference::write::Write;
use ch17_inference::write_target::write_target;

const PYTORCH: &str = include_str!("../../../reference/expected/ch17-inference.txt");

#[test]
fn exercise_slot_finds_the_example() {
    // Blocks 7, 2, 5 hold the sequence's tokens 0..4, 4..8, 8..12.
    assert_eq!(slot(&[7, 2, 5], 4, 0), (7, 0));
    assert_eq!(slot(&[7, 2, 5], 4, 5), (2, 1));
    assert_eq!(slot(&[7, 2, 5], 4, 11), (5, 3));
}

proptest! {
    #![proptest_config(quiet(64))]

    /// Tokens written into a flat pool of shuffled blocks read back in order.
    #[test]
    fn exercise_slot_reads_back_what_was_written(
        block_size in 1usize..6,
        len in 1usize..30,
        shuffle in any::<u64>(),
    ) {
        let n_blocks = len.div_ceil(block_size);
        let mut table: Vec<usize> = (0..n_blocks + 3).collect();
        // a fixed pseudo-random order of physical blocks
        table.sort_by_key(|&b| (b as u64).wrapping_mul(shuffle | 1).rotate_left(17));
        table.truncate(n_blocks);
        let mut pool = vec![None; (n_blocks + 3) * block_size];
        for (logical, &physical) in table.iter().enumerate() {
            for offset in 0..block_size {
                pool[physical * block_size + offset] = Some(logical * block_size + offset);
            }
        }
        for position in 0..len {
            let (block, offset) = slot(&table, block_size, position);
            prop_assert!(offset < block_size);
            prop_assert_eq!(pool[block * block_size + offset], Some(position));
        }
    }
}

#[test]
fn exercise_write_target_decides_each_case() {
    assert_eq!(write_target(0, 4, None), Write::NewBlock);
    assert_eq!(write_target(4, 4, Some(1)), Write::NewBlock);
    assert_eq!(write_target(8, 4, Some(3)), Write::NewBlock);
    assert_eq!(write_target(5, 4, Some(1)), Write::InPlace);
    assert_eq!(write_target(6, 4, Some(2)), Write::CopyOnWrite);
}

proptest! {
    #![proptest_config(quiet(64))]

    /// A sequence growing alone takes exactly one block per `block_size` tokens; a
    /// sequence forked inside a block copies it on its first write and never again.
    #[test]
    fn exercise_write_target_counts_blocks_and_copies(
        block_size in 1usize..8,
        fork_at in 1usize..20,
        grow in 1usize..20,
    ) {
        let mut blocks = 0;
        let mut refs = None;
        for position in 0..fork_at {
            match write_target(position, block_size, refs) {
                Write::NewBlock => { blocks += 1; refs = Some(1); }
                Write::InPlace => {}
                Write::CopyOnWrite => prop_assert!(false, "nothing is shared yet"),
            }
        }
        prop_assert_eq!(blocks, fork_at.div_ceil(block_size));
        refs = Some(2); // forked: the last block is shared
        let mut copies = 0;
        for position in fork_at..fork_at + grow {
            match write_target(position, block_size, refs) {
                Write::NewBlock => refs = Some(1),
                Write::CopyOnWrite => { copies += 1; refs = Some(1); }
                Write::InPlace => prop_assert_eq!(refs, Some(1)),
            }
        }
        let mid_block = !fork_at.is_multiple_of(block_size);
        prop_assert_eq!(copies, usize::from(mid_block));
    }
}

#[test]
fn exercise_accepted_matches_the_reference_passes() {
    let text = step_text(
        PYTORCH,
        "Greedy speculative decoding, 3 draft tokens per target pass",
    )
    .expect("the step is in the reference output");
    let list = |s: &str| -> Vec<i64> {
        s.trim_matches(|c| c == '[' || c == ']')
            .split(", ")
            .filter(|x| !x.is_empty())
            .map(|x| x.parse().unwrap())
            .collect()
    };
    let mut passes = 0;
    for line in text.lines().filter(|l| l.starts_with("pass ")) {
        let draft = &line[line.find("draft ").unwrap() + 6..line.find(", target").unwrap()];
        let target = &line[line.find("target ").unwrap() + 7..line.find(", kept").unwrap()];
        let kept: usize = line[line.find("kept ").unwrap() + 5..line.find(" +").unwrap()]
            .parse()
            .unwrap();
        assert_eq!(accepted(&list(draft), &list(target)), kept, "{line}");
        passes += 1;
    }
    assert!(passes > 0);
}

proptest! {
    #![proptest_config(quiet(128))]

    /// A draft that agrees for `n` tokens and then differs keeps exactly `n`.
    #[test]
    fn exercise_accepted_stops_at_the_first_mismatch(
        agree in prop::collection::vec(0i64..32, 0..6),
        rest in prop::collection::vec(0i64..32, 0..6),
        wrong in 1i64..32,
        tail in 0i64..32,
    ) {
        let mut target = agree.clone();
        let mut drafted = agree.clone();
        if let Some(&first) = rest.first() {
            target.push(first);
            drafted.push((first + wrong) % 32); // differs from the target here
            drafted.extend_from_slice(&rest[1..]);
            target.extend_from_slice(&rest[1..]); // agreeing again does not count
            target.push(tail);
            prop_assert_eq!(accepted(&drafted, &target), agree.len());
        } else {
            target.push(tail);
            prop_assert_eq!(accepted(&drafted, &target), agree.len());
        }
    }
}

#[test]
fn exercise_mla_bytes_per_token_matches_the_reference_ledger() {
    let text = step_text(PYTORCH, "Cache per token, bfloat16").expect("the ledger step");
    let line = |name: &str| -> u64 {
        let line = text
            .lines()
            .find(|l| l.starts_with(name))
            .expect("the model's line");
        line[line.rfind("= ").unwrap() + 2..line.rfind(" bytes").unwrap()]
            .parse()
            .unwrap()
    };
    assert_eq!(mla_bytes_per_token(60, 512, 64, 2), line("DeepSeek-V2 "));
    assert_eq!(mla_bytes_per_token(61, 512, 64, 2), line("DeepSeek-V3 "));
}

proptest! {
    #![proptest_config(quiet(128))]

    /// Linear in the layers and the bytes per value, and the latent and the RoPE key
    /// count alike.
    #[test]
    fn exercise_mla_bytes_per_token_is_linear(
        layers in 1usize..100,
        latent in 1usize..1024,
        rope in 0usize..128,
        bytes in 1usize..5,
    ) {
        let one = mla_bytes_per_token(1, latent, rope, 1);
        prop_assert_eq!(one, (latent + rope) as u64);
        prop_assert_eq!(mla_bytes_per_token(layers, latent, rope, bytes), one * (layers * bytes) as u64);
        prop_assert_eq!(mla_bytes_per_token(layers, rope, latent, bytes), mla_bytes_per_token(layers, latent, rope, bytes));
    }
}
