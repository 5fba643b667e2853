// prelude: ops/reduce/tree.wgsl
// Softmax cross-entropy over rows of logits, forward and backward in one pass. One
// workgroup (256) per row:
//   loss_r = logsumexp(x_r) - x_r[target_r]
//   dx_r   = (softmax(x_r) - onehot(target_r)) * scale   (1 / rows: the gradient of the mean loss)
// x and dx are rows of `stride` >= cols elements: columns cols .. stride of x are not read and
// those of dx are written 0 (the tied head's blocks keep their logits and gradients in tiles
// padded to a multiple of 64 columns, and save a copy and a fill each way).
// Targets are stored as f32 (exact below 2^24); the op checks them before the launch.

struct Params {
    rows: u32,
    cols: u32,
    stride: u32,
    scale: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;         // (rows, stride) logits, cols read
@group(0) @binding(2) var<storage, read> targets: array<f32>;   // (rows,) class indices
@group(0) @binding(3) var<storage, read_write> loss: array<f32>; // (rows,)
@group(0) @binding(4) var<storage, read_write> dx: array<f32>;   // (rows, stride), 0 past cols

@compute @workgroup_size(256)
fn cross_entropy(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) lid: u32) {
    let row = wid.x + wid.y * nwg.x;
    if row >= p.rows {
        return;
    }
    let base = row * p.stride;
    var m = -3.0e38;
    for (var c = lid; c < p.cols; c += 256u) {
        m = max(m, x[base + c]);
    }
    let mx = tree_max(lid, m);
    var s = 0.0;
    for (var c = lid; c < p.cols; c += 256u) {
        s += exp(x[base + c] - mx);
    }
    let sum = tree_sum(lid, s);
    let tgt = u32(targets[row]);
    for (var c = lid; c < p.cols; c += 256u) {
        var g = exp(x[base + c] - mx) / sum;
        if c == tgt {
            g -= 1.0;
        }
        dx[base + c] = g * p.scale;
    }
    for (var c = p.cols + lid; c < p.stride; c += 256u) {
        dx[base + c] = 0.0;
    }
    if lid == 0u {
        loss[row] = mx + log(sum) - x[base + tgt];
    }
}
