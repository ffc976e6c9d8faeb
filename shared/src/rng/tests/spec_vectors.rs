//! Test vectors recorded from real torch 2.13.0, each from a fresh seed: the first values of
//! each recipe, and the rows where a recipe computed another way (libm instead of the
//! vectorised log, or without the fused multiply-add) gives other bits.

use super::super::{Generator, manual_seed, with_default_generator};
use super::{bits, dropout_full, linear, normal, randn, uniform};

/// Asserts that `values` starts with the float32 bit patterns `expected`.
#[track_caller]
fn assert_starts_with(values: &[f32], expected: &[u32]) {
    let got = bits(&values[..expected.len()]);
    let hex = |v: &[u32]| {
        v.iter()
            .map(|b| format!("{b:08x}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(hex(&got), hex(expected));
}

#[test]
fn rand_24x16() {
    let cases: [(u64, [u32; 4]); 3] = [
        (0, [0x3efe1558, 0x3f44aa2f, 0x3db533a8, 0x3e073300]),
        (123, [0x3e979bfc, 0x3f043d6d, 0x3e80dafc, 0x3f304542]),
        (789, [0x3f461233, 0x3f65468e, 0x3f71799e, 0x3eb561a4]),
    ];
    for (seed, expected) in cases {
        assert_starts_with(
            &uniform(&mut Generator::new(seed), 24 * 16, 0.0, 1.0),
            &expected,
        );
    }
    // `torch.rand(8, 16)` starts the same way.
    assert_starts_with(
        &uniform(&mut Generator::new(123), 8 * 16, 0.0, 1.0),
        &cases[1].1,
    );
}

#[test]
fn randn_3x2_scalar_path() {
    let cases: [(u64, [u32; 6]); 4] = [
        (
            0,
            [
                0x3fc53f5c, 0xbe963c50, 0xc00b7149, 0x3f1184b6, 0xbf8ad1a1, 0xbfb3052d,
            ],
        ),
        (
            123,
            [
                0xbde448df, 0x3df680d9, 0xbebd40bc, 0xbe763021, 0xbf9934d1, 0x3e564ab5,
            ],
        ),
        (
            789,
            [
                0x3eedf11f, 0x3f957a93, 0xbf7cc5e0, 0xbfc4bd0b, 0xbed7f269, 0xbf03952c,
            ],
        ),
        // Only the low 32 bits of the seed matter: 2^32 + 123 is seed 123.
        (
            (1 << 32) + 123,
            [
                0xbde448df, 0x3df680d9, 0xbebd40bc, 0xbe763021, 0xbf9934d1, 0x3e564ab5,
            ],
        ),
    ];
    for (seed, expected) in cases {
        assert_starts_with(&randn(&mut Generator::new(seed), 6), &expected);
    }
}

#[test]
fn third_randn_3x2_uses_the_stream_and_cache_of_the_first_two() {
    let mut generator = Generator::new(123);
    randn(&mut generator, 6);
    randn(&mut generator, 6);
    assert_starts_with(
        &randn(&mut generator, 6),
        &[
            0x3e709cdf, 0x3f2a4e82, 0x3eb4a4ec, 0x3f790ace, 0xbd1e2c0a, 0xbf62d78b,
        ],
    );
}

#[test]
fn randn_16_block_path() {
    let cases: [(u64, [u32; 4]); 3] = [
        // Trap row: libm or f64 math gives element 3 as bede255e.
        (0, [0xbf901b85, 0xbf93808a, 0xbe804bd6, 0xbede255d]),
        (123, [0x3eacbbc9, 0xbe360b3b, 0xbe9b67f8, 0xbf1687f2]),
        (789, [0xbef5d430, 0xbf58d650, 0xbebe4470, 0x3f5fc7e0]),
    ];
    for (seed, expected) in cases {
        assert_starts_with(&randn(&mut Generator::new(seed), 16), &expected);
    }
    // `randn(1000)` and `nn.Embedding(6, 16)` start with the same block.
    assert_starts_with(&randn(&mut Generator::new(123), 1000), &cases[1].1);
    assert_starts_with(&randn(&mut Generator::new(123), 6 * 16), &cases[1].1);
}

#[test]
fn randn_20_tail_block() {
    let cases: [(u64, [u32; 4]); 3] = [
        (0, [0x3f194d8b, 0xbfc70d5b, 0xbeaec6ca, 0x3fed2f4e]),
        (123, [0x3fca5d36, 0x3fa6887a, 0x3fa33d12, 0xbe4dc6a6]),
        (789, [0xbf205b7c, 0x3f41eec4, 0x3f29ca66, 0xbdec1967]),
    ];
    for (seed, expected) in cases {
        assert_starts_with(&randn(&mut Generator::new(seed), 20)[4..], &expected);
    }
}

#[test]
fn randn_33_slice() {
    assert_starts_with(
        &randn(&mut Generator::new(0), 33)[17..21],
        &[0x3d016764, 0xbefc4028, 0x3e7e6070, 0x3ee11fd0],
    );
}

#[test]
fn cached_normal_survives_a_block_path_call() {
    let mut generator = Generator::new(123);
    randn(&mut generator, 3);
    randn(&mut generator, 20);
    assert_starts_with(&randn(&mut generator, 1), &[0xbe763021]);
}

#[test]
fn manual_seed_clears_the_cached_normal() {
    let mut generator = Generator::new(123);
    randn(&mut generator, 3);
    generator.manual_seed(123);
    assert_starts_with(&randn(&mut generator, 1), &[0xbde448df]);
}

#[test]
fn embedding_3x4_scalar_path() {
    assert_starts_with(
        &randn(&mut Generator::new(123), 3 * 4),
        &[0xbde448df, 0x3df680d9, 0xbebd40bc, 0xbe763021],
    );
}

#[test]
fn normal_with_mean_and_std() {
    assert_starts_with(
        &normal(&mut Generator::new(123), 5, 0.5, 2.0),
        &[0x3e8ddb90, 0x3f3da036, 0xbe7502f0, 0x3c9cfdeb],
    );
    assert_starts_with(
        &normal(&mut Generator::new(123), 40, 0.0, 0.02),
        &[0x3bdd1953, 0xbb690422, 0xbbc6eb7b, 0xbc40ae02],
    );
}

#[test]
fn linear_3x2_without_bias() {
    let cases: [(u64, [u32; 6]); 2] = [
        // Trap row: unfused, elements 1 and 3 would be 3c9caae0 and 3e5ef3bc.
        (
            123,
            [
                0xbe711478, 0x3c9caaef, 0xbe92d05d, 0x3e5ef3ba, 0xbefbdecd, 0x3ed8b0b2,
            ],
        ),
        // Trap row: unfused, element 0 would be 3ea1d27e.
        (
            789,
            [
                0x3ea1d27f, 0x3ee9e2d0, 0x3f03079c, 0xbe2c5302, 0xbeacfe38, 0xbdbbf3f0,
            ],
        ),
    ];
    for (seed, expected) in cases {
        let (weight, bias) = linear(&mut Generator::new(seed), 3, 2, false);
        assert_eq!(bits(&weight), expected);
        assert!(bias.is_none());
    }
}

#[test]
fn third_linear_3x2_continues_the_stream() {
    let mut generator = Generator::new(789);
    linear(&mut generator, 3, 2, false);
    linear(&mut generator, 3, 2, false);
    let (weight, _) = linear(&mut generator, 3, 2, false);
    assert_eq!(
        bits(&weight),
        [
            0x3e8150d7, 0xbe10dfae, 0xbe48e3c3, 0x3f04e439, 0xbdae6c57, 0xbe513b1c
        ]
    );
}

#[test]
fn linear_4x4_with_bias() {
    let (weight, bias) = linear(&mut Generator::new(123), 4, 4, true);
    assert_starts_with(&weight, &[0xbe50c808, 0x3c87ada0, 0xbe7e4a08, 0x3e411508]);
    assert_starts_with(
        &bias.unwrap_or_default(),
        &[0xbec34b04, 0x3ea7a05e, 0xbdf17db8, 0x3e245880],
    );
}

#[test]
fn the_fma_traps_really_bite() {
    // The same draws as `linear_3x2_without_bias`, but with `u * span + a` rounded twice.
    let unfused = |seed: u64| {
        let mut generator = Generator::new(seed);
        let b = super::linear_weight_bound(3) as f32;
        let a = -b;
        (0..6)
            .map(|_| {
                let u = (generator.random() & 0x00FF_FFFF) as f32 / (1u32 << 24) as f32;
                (u * (b - a) + a).to_bits()
            })
            .collect::<Vec<_>>()
    };
    let seed_123 = unfused(123);
    assert_eq!([seed_123[1], seed_123[3]], [0x3c9caae0, 0x3e5ef3bc]);
    assert_eq!(unfused(789)[0], 0x3ea1d27e);
}

#[test]
fn dropout_masks_and_scales() {
    let mut generator = Generator::new(123);
    let half = dropout_full(&mut generator, 6 * 6, 1.0, 0.5);
    let (two, zero) = (0x4000_0000, 0);
    assert_eq!(
        bits(&half[..12]),
        [
            two, two, zero, two, two, zero, zero, zero, zero, two, zero, two
        ]
    );

    let scale = 0x3f8e38e4; // 1.0f32 / f32(0.9)
    let tenth = dropout_full(&mut Generator::new(123), 2 * 6 * 6, 1.0, 0.1);
    let mut expected = [scale; 12];
    expected[8] = zero;
    assert_eq!(bits(&tenth[..12]), expected);

    let point_three = dropout_full(&mut Generator::new(123), 6, 0.3, 0.1);
    assert_eq!(bits(&point_three), [0x3eaaaaac; 6]);
}

#[test]
fn dropout_of_zero_and_one_makes_no_draws() {
    let mut generator = Generator::new(7);
    let untouched = dropout_full(&mut generator, 5, 0.3, 0.0);
    assert_eq!(untouched, [0.3; 5]);
    let mut values = [1.0, -2.0, f32::INFINITY];
    super::dropout_in_place(&mut generator, &mut values, 1.0);
    assert_eq!(bits(&values[..2]), [0, (-0.0f32).to_bits()]);
    assert!(values[2].is_nan());
    assert_eq!(generator.random(), Generator::new(7).random());
}

#[test]
fn negative_seed_is_twos_complement() {
    // torch.manual_seed(-1); torch.rand(4)
    assert_starts_with(
        &uniform(&mut Generator::new(-1i64 as u64), 4, 0.0, 1.0),
        &[0x3f7e69a3, 0x3f124122, 0x3f11ec0c, 0x3d4ac470],
    );
    assert_eq!(Generator::new(u64::MAX).initial_seed(), u64::MAX);
}

#[test]
fn random64_puts_the_first_draw_high() {
    let mut first = Generator::new(0);
    let expected = (u64::from(first.random()) << 32) | u64::from(first.random());
    assert_eq!(Generator::new(0).random64(), expected);
    assert_eq!(expected >> 32, 2_357_136_044);
}

#[test]
fn kaiming_gain_uses_pythons_a_squared() {
    let a = 5.0_f64.sqrt();
    assert_eq!(a * a, 5.000000000000001);
    // f32(bound) == f32(1/sqrt(in)) for all practical sizes.
    for fan_in in [1, 3, 4, 7, 28, 512, 199_999] {
        assert_eq!(
            super::linear_weight_bound(fan_in) as f32,
            super::linear_bias_bound(fan_in) as f32
        );
    }
}

#[test]
fn default_generator_is_per_thread_and_reseedable() {
    let fresh = |seed| Generator::new(seed).random();
    let draw_on_a_new_thread =
        || std::thread::spawn(|| with_default_generator(|generator| generator.random())).join();
    assert_eq!(draw_on_a_new_thread().ok(), Some(fresh(67_280_421_310_721)));
    manual_seed(123);
    assert_eq!(
        with_default_generator(|generator| generator.random()),
        fresh(123)
    );
    // Seeding this thread's generator leaves other threads' alone.
    assert_eq!(draw_on_a_new_thread().ok(), Some(fresh(67_280_421_310_721)));
}
