// prelude: gpt2/state.wgsl
// Picks the next token from one row of logits on the device and advances the decode state:
// greedy (the largest logit, the lowest id on a tie) or top-k sampling (softmax of
// logits / temperature over the k largest, k <= 128) with a counter-based generator, so the
// draw of step i depends only on (seed, i) and a run repeats exactly. The chosen id goes to
// state.token (the next step embeds it) and to ids[step] (the host reads ids back later).
//
// One workgroup of 256 invocations, each owning a contiguous chunk of the vocabulary (so
// "lower id first" is thread order). Top-k finds the k-th largest logit exactly by a radix
// select over order-preserving u32 keys (4 passes of 8 bits, a 256-bucket histogram each),
// gathers the k candidates (ties at the threshold: lowest ids first), sorts them by rank and
// walks their weights in that order, as `decode::top_k_draw` does on the host.

struct Params {
    vocab: u32,
    logits_off: u32,
    ids_len: u32,
    set_pos: u32,   // 1: state.pos = new_pos (after a prefill); 0: state.pos += 1
    new_pos: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;      // (V,)
@group(0) @binding(2) var<storage, read_write> state: State;
@group(0) @binding(3) var<storage, read_write> ids: array<u32>;   // (ids_len,) ring of chosen ids

const KMAX: u32 = 128u;
const NONE: u32 = 0xffffffffu;

var<workgroup> settings: vec4<u32>;           // mode, top_k, step, temperature bits
var<workgroup> chosen: vec2<u32>;             // radix pass: bucket, how many to take from it
var<workgroup> hist: array<atomic<u32>, 256>;
var<workgroup> scan: array<u32, 256>;
var<workgroup> best_key: array<u32, 256>;
var<workgroup> best_idx: array<u32, 256>;
var<workgroup> cand_key: array<u32, KMAX>;
var<workgroup> cand_idx: array<u32, KMAX>;
var<workgroup> sorted_idx: array<u32, KMAX>;
var<workgroup> sorted_val: array<f32, KMAX>;

// Order-preserving map f32 -> u32: a larger float gets a larger key.
fn key_of(v: f32) -> u32 {
    let b = bitcast<u32>(v);
    return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

fn value_of(k: u32) -> f32 {
    return bitcast<f32>(select(~k, k & 0x7fffffffu, (k & 0x80000000u) != 0u));
}

// A 32-bit integer hash (lowbias32): the counter-based generator.
fn hash(v: u32) -> u32 {
    var x = v;
    x ^= x >> 16u;
    x *= 0x7feb352du;
    x ^= x >> 15u;
    x *= 0x846ca68bu;
    x ^= x >> 16u;
    return x;
}

// Inclusive prefix sum over the invocations (uniform control flow only: it holds barriers).
fn inclusive_scan(lid: u32, v: u32) -> u32 {
    scan[lid] = v;
    workgroupBarrier();
    for (var o = 1u; o < 256u; o <<= 1u) {
        var t = scan[lid];
        if lid >= o {
            t += scan[lid - o];
        }
        workgroupBarrier();
        scan[lid] = t;
        workgroupBarrier();
    }
    let r = scan[lid];
    workgroupBarrier();
    return r;
}

@compute @workgroup_size(256)
fn sample(@builtin(local_invocation_index) lid: u32) {
    if lid == 0u {
        settings = vec4<u32>(state.mode, state.top_k, state.step, bitcast<u32>(state.temperature));
    }
    let s = workgroupUniformLoad(&settings);
    let chunk = (p.vocab + 255u) / 256u;
    let lo = min(lid * chunk, p.vocab);
    let hi = min(lo + chunk, p.vocab);

    // Greedy: the largest key, the lowest index on a tie (chunks ascend with lid).
    var bk = 0u;
    var bi = NONE;
    for (var i = lo; i < hi; i++) {
        let k = key_of(logits[p.logits_off + i]);
        if bi == NONE || k > bk {
            bk = k;
            bi = i;
        }
    }
    best_key[lid] = bk;
    best_idx[lid] = bi;
    workgroupBarrier();
    for (var w = 128u; w > 0u; w >>= 1u) {
        if lid < w {
            let ok = best_key[lid + w];
            let oi = best_idx[lid + w];
            if oi != NONE && (best_idx[lid] == NONE || ok > best_key[lid]) {
                best_key[lid] = ok;
                best_idx[lid] = oi;
            }
        }
        workgroupBarrier();
    }
    var token = best_idx[0];

    let k = min(min(s.y, KMAX), p.vocab);
    if s.x == 1u && k > 1u {
        // Radix select of the k-th largest key, 8 bits a pass from the top.
        var prefix = 0u;
        var mask = 0u;
        var remaining = k;
        for (var round = 0u; round < 4u; round++) {
            let shift = 24u - 8u * round;
            atomicStore(&hist[lid], 0u);
            workgroupBarrier();
            for (var i = lo; i < hi; i++) {
                let key = key_of(logits[p.logits_off + i]);
                if (key & mask) == prefix {
                    atomicAdd(&hist[(key >> shift) & 255u], 1u);
                }
            }
            workgroupBarrier();
            // scan[b] = keys in buckets b..255: a prefix sum over the buckets taken in reverse.
            let r = inclusive_scan(lid, atomicLoad(&hist[255u - lid]));
            scan[255u - lid] = r;
            workgroupBarrier();
            let here = scan[lid];
            let above = select(0u, scan[min(lid + 1u, 255u)], lid < 255u);
            if here >= remaining && above < remaining {
                chosen = vec2<u32>(lid, remaining - above);
            }
            let c = workgroupUniformLoad(&chosen);
            prefix |= c.x << shift;
            mask |= 255u << shift;
            remaining = c.y;
        }
        // prefix is the k-th largest key; take every key above it and the `remaining`
        // lowest-index keys equal to it.
        var n_above = 0u;
        var n_ties = 0u;
        for (var i = lo; i < hi; i++) {
            let key = key_of(logits[p.logits_off + i]);
            n_above += select(0u, 1u, key > prefix);
            n_ties += select(0u, 1u, key == prefix);
        }
        var slot_above = inclusive_scan(lid, n_above) - n_above;
        var tie_rank = inclusive_scan(lid, n_ties) - n_ties;
        let first_tie = k - remaining;
        for (var i = lo; i < hi; i++) {
            let key = key_of(logits[p.logits_off + i]);
            if key > prefix {
                cand_key[slot_above] = key;
                cand_idx[slot_above] = i;
                slot_above++;
            } else if key == prefix {
                if tie_rank < remaining {
                    cand_key[first_tie + tie_rank] = key;
                    cand_idx[first_tie + tie_rank] = i;
                }
                tie_rank++;
            }
        }
        workgroupBarrier();
        // Sort by rank: larger key first, lower id first among equal keys.
        if lid < k {
            let key = cand_key[lid];
            let idx = cand_idx[lid];
            var rank = 0u;
            for (var c = 0u; c < k; c++) {
                let ok = cand_key[c];
                rank += select(0u, 1u, ok > key || (ok == key && cand_idx[c] < idx));
            }
            sorted_idx[rank] = idx;
            sorted_val[rank] = value_of(key);
        }
        workgroupBarrier();
        if lid == 0u {
            let t = bitcast<f32>(s.w);
            let top = sorted_val[0];
            var total = 0.0;
            for (var c = 0u; c < k; c++) {
                total += exp((sorted_val[c] - top) / t);
            }
            let r = hash(state.seed_lo ^ hash(state.seed_hi ^ hash(s.z)));
            var u = f32(r >> 8u) * (1.0 / 16777216.0) * total;
            token = sorted_idx[k - 1u];
            for (var c = 0u; c < k; c++) {
                let wgt = exp((sorted_val[c] - top) / t);
                if u < wgt {
                    token = sorted_idx[c];
                    break;
                }
                u -= wgt;
            }
        }
    }
    if lid == 0u {
        state.token = token;
        if s.z < p.ids_len {
            ids[s.z] = token;
        }
        state.step = s.z + 1u;
        state.pos = select(state.pos + 1u, p.new_pos, p.set_pos == 1u);
    }
}
