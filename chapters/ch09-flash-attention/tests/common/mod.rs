//! What the kernel's and the backward's tests share.

/// Sizes `(queries, keys, d, d_v)` where tiled code tends to break: one token, one feature,
/// `d` not a multiple of the vector width, lengths just past a tile, more queries than keys
/// and fewer.
pub const ODD_SIZES: [(usize, usize, usize, usize); 8] = [
    (1, 1, 1, 1),
    (1, 1, 64, 64),
    (2, 2, 3, 5),
    (65, 65, 17, 33),
    (129, 129, 64, 64),
    (200, 70, 64, 64),
    (70, 200, 64, 80),
    (150, 150, 96, 96),
];
