// Kernel 3: FlashAttention's forward pass.
//
// One workgroup takes a tile of TILE_Q queries of one head, one invocation per query.
// It walks over the keys in tiles of TILE_K: the workgroup copies a tile of keys and
// values from global memory into workgroup memory once, a barrier waits for the copy,
// and every invocation reads the tile from there. Each invocation keeps its row's
// running maximum, running sum and output in its own registers and updates them tile
// by tile with chapter 9's online softmax. Under the causal mask the tiles after the
// last query of the workgroup are never visited (`key_tiles`), and within the tile on
// the diagonal each query stops at its own position. The log-sum-exp of every row is
// written out for the backward pass.

struct Shape {
    heads: u32,
    queries: u32,
    keys: u32,
    d: u32,
    d_v: u32,
    causal: u32,
    scale: f32, // 1 / sqrt(d)
    splits: u32, // used by kernel 4 only
}

@group(0) @binding(0) var<uniform> shape: Shape;
@group(0) @binding(1) var<storage, read> q: array<f32>; // [heads, queries, d]
@group(0) @binding(2) var<storage, read> k: array<f32>; // [heads, keys, d]
@group(0) @binding(3) var<storage, read> v: array<f32>; // [heads, keys, d_v]
// [heads, queries, d_v]
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<storage, read_write> lse: array<f32>; // [heads, queries]

const LOWEST: f32 = -0x1.fffffep+127f; // -3.4028235e38, written exactly
// The largest d and d_v: a row of the query and of the output live in registers.
const HEAD_DIM_MAX: u32 = 64u;
// The largest tile of keys (the weights of one tile live in registers).
const TILE_K_MAX: u32 = 64u;
// Queries per workgroup (one invocation each) and keys per tile, set by the host from
// the adapter's limits, with the floats of a tile of keys (TILE_K * d) and of values
// (TILE_K * d_v).
override TILE_Q: u32 = 64u;
override TILE_K: u32 = 32u;
override K_TILE_FLOATS: u32 = 2048u;
override V_TILE_FLOATS: u32 = 2048u;

var<workgroup> k_tile: array<f32, K_TILE_FLOATS>; // [TILE_K, d]
var<workgroup> v_tile: array<f32, V_TILE_FLOATS>; // [TILE_K, d_v]

fn visible_keys(i: u32) -> u32 {
    if shape.causal != 0u {
        return min(i + 1u, shape.keys);
    }
    return shape.keys;
}

@compute @workgroup_size(TILE_Q)
fn main(
    @builtin(workgroup_id) wg: vec3u,
    @builtin(local_invocation_index) t: u32,
) {
    let h = wg.y;
    let q_start = wg.x * TILE_Q;
    let i = q_start + t; // this invocation's query
    // A last tile of queries may be short: its extra invocations help copy the tiles
    // and write nothing.
    let real_query = i < shape.queries;
    let row = h * shape.queries + i;
    let first_key = h * shape.keys;
    let last_query = min(q_start + TILE_Q, shape.queries) - 1u;

    var q_row: array<f32, HEAD_DIM_MAX>; // the query, times 1 / sqrt(d)
    // the output so far, relative to the running max
    var acc: array<f32, HEAD_DIM_MAX>;
    var weights: array<f32, TILE_K_MAX>;
    if real_query {
        for (var c = 0u; c < shape.d; c++) {
            q_row[c] = q[row * shape.d + c] * shape.scale;
        }
    }
    var running_max = LOWEST;
    var running_sum = 0.0;
    let visible = select(0u, visible_keys(i), real_query);

    let tiles = key_tiles(last_query, shape.keys, TILE_K, shape.causal != 0u);
    for (var tile = 0u; tile < tiles; tile++) {
        let k_start = tile * TILE_K;
        // Copy the tile of keys and values into workgroup memory, TILE_Q keys at a
        // time.
        for (var j = t; j < TILE_K; j += TILE_Q) {
            let key = k_start + j;
            if key < shape.keys {
                for (var c = 0u; c < shape.d; c++) {
                    k_tile[j * shape.d + c] = k[(first_key + key) * shape.d + c];
                }
                for (var c = 0u; c < shape.d_v; c++) {
                    v_tile[j * shape.d_v + c] = v[(first_key + key) * shape.d_v + c];
                }
            }
        }
        workgroupBarrier(); // the whole tile is in workgroup memory

        // The keys of this tile that this query sees.
        let end = min(TILE_K, max(visible, k_start) - k_start);
        if end > 0u {
            // Scores of the tile and their maximum.
            var tile_max = LOWEST;
            for (var j = 0u; j < end; j++) {
                var s = 0.0;
                for (var c = 0u; c < shape.d; c++) {
                    s += q_row[c] * k_tile[j * shape.d + c];
                }
                weights[j] = s;
                tile_max = max(tile_max, s);
            }
            // The online softmax: a larger maximum shrinks what was accumulated.
            let new_max = max(running_max, tile_max);
            let rescale = exp(running_max - new_max);
            var tile_sum = 0.0;
            for (var j = 0u; j < end; j++) {
                weights[j] = exp(weights[j] - new_max);
                tile_sum += weights[j];
            }
            running_sum = running_sum * rescale + tile_sum;
            running_max = new_max;
            for (var c = 0u; c < shape.d_v; c++) {
                var o = acc[c] * rescale;
                for (var j = 0u; j < end; j++) {
                    o += weights[j] * v_tile[j * shape.d_v + c];
                }
                acc[c] = o;
            }
        }
        workgroupBarrier(); // everyone is done with the tile before the next copy
    }

    if real_query {
        for (var c = 0u; c < shape.d_v; c++) {
            out[row * shape.d_v + c] = acc[c] / running_sum;
        }
        lse[row] = running_max + log(running_sum);
    }
}
