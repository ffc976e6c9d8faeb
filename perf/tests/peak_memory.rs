//! The peak memory Linux reports moves with what the process touches: a block of 64 MiB,
//! every page written, raises it by at least that, and a reset after freeing the block
//! lowers it again. The tests take turns (a lock), since each reads the whole process's
//! memory.

use std::sync::Mutex;

use attention_perf::peak_memory::{measure, peak_bytes, reset_peak, resident_bytes};

const BLOCK: usize = 64 << 20;

/// One test at a time: another test's allocations would move the numbers.
static TURN: Mutex<()> = Mutex::new(());

/// A block of `BLOCK` bytes, every byte written, so that all of it is resident (a block
/// of zeros straight from the allocator is not, until its pages are touched).
fn touched_block() -> Vec<u8> {
    vec![1; BLOCK]
}

#[test]
fn touching_64_mib_raises_the_peak_by_at_least_that() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let (block, measured) = measure(touched_block).expect("Linux's /proc");
    assert_eq!(block.iter().map(|&b| usize::from(b)).sum::<usize>(), BLOCK);
    assert!(
        measured.extra_bytes() >= BLOCK as u64,
        "the peak rose by {} bytes, less than the {BLOCK} touched ({measured:?})",
        measured.extra_bytes()
    );
    // The block is still held: what the process holds now is at least it.
    assert!(resident_bytes().unwrap() >= measured.before_bytes + BLOCK as u64);
    assert!(peak_bytes().unwrap() >= measured.peak_bytes);
    assert!(measured.seconds >= 0.0);
}

#[test]
fn a_reset_forgets_a_freed_block() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    // Through black_box: optimised, a block made and dropped unread is never made.
    drop(std::hint::black_box(touched_block()));
    let peak_with_block = peak_bytes().unwrap();
    // A block this large is mapped on its own and given back to the system when freed.
    reset_peak().expect("Linux 4.0 or later");
    let peak_after = peak_bytes().unwrap();
    assert!(
        peak_after + (BLOCK as u64) / 2 <= peak_with_block,
        "the peak was {peak_with_block} bytes with the block, {peak_after} after the reset"
    );
}
