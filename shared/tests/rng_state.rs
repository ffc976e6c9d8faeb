//! The generator's byte form against `torch.get_rng_state()`: `fixtures/rng_state.json`,
//! made by `scripts/make_rng_state_fixture.py` with PyTorch 2.13.0, holds the bytes after a
//! few seeds and draws, and the draws that follow them.

use proptest::prelude::*;
use serde_json::Value;
use shared::rng::{Generator, STATE_BYTES, get_rng_state, set_rng_state};

const FIXTURE: &str = include_str!("fixtures/rng_state.json");

/// `torch.rand(n)` or `torch.randn(n)` from `generator`.
fn draw(generator: &mut Generator, op: &str, n: usize) -> Vec<f32> {
    let mut out = vec![0.0; n];
    match op {
        "rand" => generator.fill_uniform(&mut out, 0.0, 1.0),
        "randn" => generator.fill_normal(&mut out, 0.0, 1.0, true),
        other => panic!("the fixture names an unknown draw {other}"),
    }
    out
}

fn hex_bytes(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex"))
        .collect()
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .expect("a list")
        .iter()
        .map(|w| {
            let w = w.as_str().expect("hex").trim_start_matches("0x");
            f32::from_bits(u32::from_str_radix(w, 16).expect("hex"))
        })
        .collect()
}

/// The case's generator: its seed, then its draws.
fn replay(case: &Value) -> Generator {
    let mut generator = Generator::new(case["seed"].as_u64().expect("a seed"));
    for d in case["draws"].as_array().expect("draws") {
        let n = d[1].as_u64().expect("a count") as usize;
        draw(&mut generator, d[0].as_str().expect("an op"), n);
    }
    generator
}

fn cases() -> Vec<Value> {
    let fixture: Value = serde_json::from_str(FIXTURE).expect("valid JSON");
    fixture["cases"].as_array().expect("cases").clone()
}

#[test]
fn the_state_is_torchs_bytes() {
    for case in cases() {
        let name = case["name"].as_str().expect("a name");
        let want = hex_bytes(case["state"].as_str().expect("a state"));
        let got = replay(&case).get_state();
        assert_eq!(got.len(), STATE_BYTES, "{name}");
        let first = (0..want.len()).find(|&i| got[i] != want[i]);
        assert_eq!(
            first, None,
            "{name}: the first byte that differs from PyTorch's"
        );
    }
}

#[test]
fn a_generator_set_from_torchs_bytes_draws_what_torch_draws_next() {
    for case in cases() {
        let name = case["name"].as_str().expect("a name");
        let bytes = hex_bytes(case["state"].as_str().expect("a state"));
        let mut generator = Generator::new(0);
        generator.set_state(&bytes).expect("PyTorch's state");
        assert_eq!(
            generator.initial_seed(),
            case["seed"].as_u64().expect("a seed")
        );
        let want = floats(&case["then_rand4"]);
        assert_eq!(
            draw(&mut generator, "rand", 4),
            want,
            "{name}: rand(4) after the state"
        );
    }
}

#[test]
fn the_default_generator_round_trips() {
    shared::manual_seed(11);
    let _ = shared::randn(&[3]); // keeps a spare normal
    let saved = get_rng_state();
    let first = shared::randn(&[5]).to_vec();
    set_rng_state(&saved).expect("our own state");
    assert_eq!(shared::randn(&[5]).to_vec(), first);
}

#[test]
fn bytes_that_cannot_be_a_state_are_errors_naming_the_field() {
    let good = Generator::new(5).get_state();
    let message = |bytes: &[u8]| {
        Generator::from_state(bytes)
            .expect_err("not a state")
            .to_string()
    };
    assert!(message(&good[..100]).contains("5056 bytes, got 100"));
    let mut wide = good.clone();
    wide[24 + 8 * 3 + 5] = 1; // word 3 above 32 bits
    assert!(message(&wide).contains("word 3"), "{}", message(&wide));
    let mut far = good.clone();
    far[8..12].copy_from_slice(&700i32.to_le_bytes()); // left beyond the table
    assert!(message(&far).contains("left 700"), "{}", message(&far));
    let mut spare = good.clone();
    spare[5040..5044].copy_from_slice(&2i32.to_le_bytes());
    assert!(
        message(&spare).contains("spare normal"),
        "{}",
        message(&spare)
    );
    let mut kept = Generator::new(9);
    let before = kept.get_state();
    assert!(kept.set_state(&good[..10]).is_err());
    assert_eq!(
        kept.get_state(),
        before,
        "a failed set_state leaves the generator"
    );
}

proptest! {
    /// Any seed and any number of draws: the bytes read back give the same draws after.
    #[test]
    fn any_state_round_trips(seed in any::<u64>(), uniforms in 0usize..1500, normals in 0usize..20) {
        let mut generator = Generator::new(seed);
        draw(&mut generator, "rand", uniforms);
        draw(&mut generator, "randn", normals);
        let mut restored = Generator::from_state(&generator.get_state()).expect("a state");
        prop_assert_eq!(restored.get_state(), generator.get_state());
        prop_assert_eq!(draw(&mut restored, "randn", 7), draw(&mut generator, "randn", 7));
        prop_assert_eq!(draw(&mut restored, "rand", 3), draw(&mut generator, "rand", 3));
    }
}
