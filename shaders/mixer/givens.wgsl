// prelude: mixer/math.wgsl
// The Givens transition shared by the rotation-family mixer kernels (prepended after
// math.wgsl). A block of K state values turns by G = R_{K-2} ... R_0, where R_j rotates the
// coordinate pair (j, j + 1) by angle theta_j; K = 2 is one plain 2 x 2 rotation. The step
// is A = lambda G with lambda = sigmoid(decay) in (0, 1), applied to a vector in O(K) work:
// the K x K matrix is never formed.
//
// Block layout of pre (B, T, 2D), D = N K, per step row:
//   [ v (D): block n at n K .. | decay (N): at D + n | angles (N (K - 1)): at D + N + n (K - 1) .. ]

override K: u32 = 2u;
const KMAX: u32 = 16u;

@group(0) @binding(1) var<storage, read> pre: array<f32>; // (B, T, 2D), every kernel's first input

// One block's step: lambda, the cosines and sines of its K - 1 angles, and its K values.
struct Step {
    lambda: f32,
    c: array<f32, KMAX>,
    s: array<f32, KMAX>,
    v: array<f32, KMAX>,
}

// Reads block n of step row `row` from pre (D = N K values per step).
fn load_step(row: u32, n: u32, nblocks: u32) -> Step {
    let d = nblocks * K;
    let base = row * 2u * d;
    var st: Step;
    st.lambda = sigmoid(pre[base + d + n]);
    for (var j = 0u; j + 1u < K; j++) {
        let sc = sin_cos(pre[base + d + nblocks + n * (K - 1u) + j]);
        st.s[j] = sc.x;
        st.c[j] = sc.y;
    }
    for (var i = 0u; i < K; i++) {
        st.v[i] = pre[base + n * K + i];
    }
    return st;
}

// u[0..K] <- 0. Why not `var u: array<f32, KMAX>;` alone: Tint on SwiftShader did not zero a
// loop-body array again on each trip; and not `array<f32, KMAX>()`: a whole-array initialiser
// made NVIDIA's compiler slow matrix_affine_scan threefold.
fn zero(u: ptr<function, array<f32, KMAX>>) {
    for (var i = 0u; i < K; i++) {
        (*u)[i] = 0.0;
    }
}

// u <- G u.
fn givens_apply(u: ptr<function, array<f32, KMAX>>, st: ptr<function, Step>) {
    for (var j = 0u; j + 1u < K; j++) {
        let x = (*u)[j];
        let y = (*u)[j + 1u];
        (*u)[j] = (*st).c[j] * x - (*st).s[j] * y;
        (*u)[j + 1u] = (*st).s[j] * x + (*st).c[j] * y;
    }
}

// Column c of G: G e_c.
fn givens_column(st: ptr<function, Step>, c: u32) -> array<f32, KMAX> {
    var u: array<f32, KMAX>;
    zero(&u);
    u[c] = 1.0;
    givens_apply(&u, st);
    return u;
}

// u <- G^T u (the rotations undone in reverse order).
fn givens_apply_t(u: ptr<function, array<f32, KMAX>>, st: ptr<function, Step>) {
    for (var q = 0u; q + 1u < K; q++) {
        let j = K - 2u - q;
        let x = (*u)[j];
        let y = (*u)[j + 1u];
        (*u)[j] = (*st).c[j] * x + (*st).s[j] * y;
        (*u)[j + 1u] = -(*st).s[j] * x + (*st).c[j] * y;
    }
}

// Reverse mode through u_out = G u_in. On entry u = u_out and w = dL/du_out; on return
// u = u_in (undone rotation by rotation with R_j^T: orthogonal, so exact to rounding, with
// no division by lambda and nothing to blow up), w = G^T w, and dL/dtheta_j is added to
// dtheta[j]. For x' = c x - s y, y' = s x + c y: dx'/dtheta = -y', dy'/dtheta = x'.
fn givens_vjp(u: ptr<function, array<f32, KMAX>>, w: ptr<function, array<f32, KMAX>>,
              st: ptr<function, Step>, dtheta: ptr<function, array<f32, KMAX>>) {
    for (var q = 0u; q + 1u < K; q++) {
        let j = K - 2u - q;
        let c = (*st).c[j];
        let s = (*st).s[j];
        let x = (*u)[j];
        let y = (*u)[j + 1u];
        let wx = (*w)[j];
        let wy = (*w)[j + 1u];
        (*dtheta)[j] += wy * x - wx * y;
        (*u)[j] = c * x + s * y;
        (*u)[j + 1u] = -s * x + c * y;
        (*w)[j] = c * wx + s * wy;
        (*w)[j + 1u] = -s * wx + c * wy;
    }
}
