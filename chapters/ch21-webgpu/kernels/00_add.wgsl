// The first kernel: add two arrays, one invocation per element.

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> sum: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3u) {
    // id = workgroup_id * 64 + local_invocation_id: this invocation's element.
    let i = id.x;
    // The last workgroup may hold more invocations than there are elements left.
    if i >= arrayLength(&sum) {
        return;
    }
    sum[i] = a[i] + b[i];
}
