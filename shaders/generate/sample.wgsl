// prelude: generate/state.wgsl
// Picks the next token from one row of logits on the device and advances the decode state:
// greedy (the largest logit, the lowest id on a tie) or top-k sampling (softmax of
// logits / temperature over the k largest, k <= 128) with a counter-based generator, so the
// draw of step i depends only on (seed, i) and a run repeats exactly. The chosen id goes to
// state.token (the next step embeds it) and to ids[step] (the host reads ids back later).
//
// Two stages, one entry point (PICK selects): the BLOCK stage runs one workgroup per block of
// BLOCK logits and writes the block's k best as (key, id) pairs, best first, into `cands`
// (KMAX slots a block, unused slots (0, NONE)); the PICK stage runs one workgroup over all the
// blocks' candidates, takes the k best of those (the global k best: every one of them is
// among its block's k best) and draws. Within a workgroup each of the 256 invocations owns a
// contiguous run of items, so "lower id first" among equal keys is item order: ids ascend
// through a block, and the candidates of a block (sorted, ties by id) follow the blocks in
// order. The k best are found exactly by a radix select over order-preserving u32 keys
// (4 rounds of 8 bits, a 256-bucket histogram each), gathered (ties at the threshold: first
// in item order), ranked, and the draw walks their weights in rank order, as
// `generate::sampling::top_k_draw` does on the host. Greedy is k = 1.

override PICK: bool = false;
// Logits per workgroup of the BLOCK stage: 2048 on GPUs, 16384 on CPU adapters (fewer
// workgroups: each one costs llvmpipe a pass over its invocations per barrier), which also
// take the scan with fewer barriers.
override BLOCK: u32 = 2048u;
override SERIAL_SCAN: bool = false;

struct Params {
    items: u32,       // BLOCK stage: V; PICK stage: blocks * KMAX
    logits_off: u32,
    ids_len: u32,
    set_pos: u32,     // 1: state.pos = new_pos (after a prefill); 0: state.pos += 1
    new_pos: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;          // (V,)
@group(0) @binding(2) var<storage, read_write> state: State;
@group(0) @binding(3) var<storage, read_write> ids: array<u32>;       // (ids_len,) chosen ids
@group(0) @binding(4) var<storage, read_write> cands: array<vec2<u32>>; // (blocks * KMAX,) (key, id)

const KMAX: u32 = 128u;
const NONE: u32 = 0xffffffffu;

var<workgroup> settings: vec4<u32>;           // mode, top_k, step, temperature bits
var<workgroup> chosen: vec2<u32>;             // radix pass: bucket, how many to take from it
var<workgroup> hist: array<atomic<u32>, 256>;
var<workgroup> scan: array<u32, 256>;
var<workgroup> run_total: array<u32, 16>;
var<workgroup> cand_key: array<u32, KMAX>;
var<workgroup> cand_idx: array<u32, KMAX>;
var<workgroup> sorted_idx: array<u32, KMAX>;
var<workgroup> sorted_val: array<f32, KMAX>;
var<workgroup> bests: array<vec2<u32>, 256>;  // greedy: each invocation's best (key, id)

// Order-preserving map f32 -> u32: a larger float gets a larger key. The engine's argmax rule
// (`reference::nn::argmax_index`): every NaN gets the largest key, -0.0 the key of +0.0.
fn key_of(v: f32) -> u32 {
    var b = bitcast<u32>(v);
    if (b & 0x7fffffffu) > 0x7f800000u {
        return 0xffffffffu;
    }
    if b == 0x80000000u {
        b = 0u;
    }
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

// Item i of this workgroup as (key, id).
fn item(base: u32, i: u32) -> vec2<u32> {
    if PICK {
        return cands[i];
    }
    return vec2<u32>(key_of(logits[p.logits_off + base + i]), base + i);
}

// Inclusive prefix sum over the invocations (uniform control flow only: it holds barriers).
// GPUs: a halving scan (17 barriers, each step parallel). CPU adapters (SERIAL_SCAN): three
// barriers, 16 runs of 16 scanned serially, then each invocation adds the totals of the runs
// before its own; llvmpipe pays a pass over all 256 invocations for every barrier, a GPU
// pays for the serial runs.
fn inclusive_scan(lid: u32, v: u32) -> u32 {
    scan[lid] = v;
    workgroupBarrier();
    if SERIAL_SCAN {
        if lid < 16u {
            var s = 0u;
            for (var i = 16u * lid; i < 16u * lid + 16u; i++) {
                s += scan[i];
                scan[i] = s;
            }
            run_total[lid] = s;
        }
        workgroupBarrier();
        var r = scan[lid];
        for (var i = 0u; i < lid / 16u; i++) {
            r += run_total[i];
        }
        workgroupBarrier();
        return r;
    }
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
fn sample(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    if lid == 0u {
        settings = vec4<u32>(state.mode, state.top_k, state.step, bitcast<u32>(state.temperature));
    }
    let s = workgroupUniformLoad(&settings);
    // This workgroup's items: a block of the logits, or every candidate.
    var base = 0u;
    var n = p.items;
    if !PICK {
        base = wid.x * BLOCK;
        n = min(BLOCK, p.items - base);
    }
    let chunk = (n + 255u) / 256u;
    let lo = min(lid * chunk, n);
    let hi = min(lo + chunk, n);
    var k = 1u;
    if s.x == 1u {
        k = clamp(s.y, 1u, KMAX);
    }
    k = min(k, n);

    if k == 1u {
        // Greedy: the largest key, the lowest id among equal keys (item order), by a
        // halving tree over the invocations' own bests: 8 barriers where the radix select
        // takes over a hundred (the sampler's two dispatches took 0.042 ms of a 0.74 ms step
        // on the H200).
        var best = vec2<u32>(0u, NONE);
        for (var i = lo; i < hi; i++) {
            let it = item(base, i);
            if it.x > best.x || (it.x == best.x && it.y < best.y) {
                best = it;
            }
        }
        bests[lid] = best;
        workgroupBarrier();
        for (var o = 128u; o > 0u; o >>= 1u) {
            if lid < o {
                let other = bests[lid + o];
                let mine = bests[lid];
                if other.x > mine.x || (other.x == mine.x && other.y < mine.y) {
                    bests[lid] = other;
                }
            }
            workgroupBarrier();
        }
        if lid == 0u {
            cand_key[0] = bests[0].x;
            cand_idx[0] = bests[0].y;
        }
    } else {
        // Radix select of the k-th largest key, 8 bits a round from the top.
        var prefix = 0u;
        var mask = 0u;
        var remaining = k;
        for (var round = 0u; round < 4u; round++) {
            let shift = 24u - 8u * round;
            atomicStore(&hist[lid], 0u);
            workgroupBarrier();
            for (var i = lo; i < hi; i++) {
                let key = item(base, i).x;
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
        // prefix is the k-th largest key; take every key above it and the first `remaining`
        // (in item order) equal to it.
        var n_above = 0u;
        var n_ties = 0u;
        for (var i = lo; i < hi; i++) {
            let key = item(base, i).x;
            n_above += select(0u, 1u, key > prefix);
            n_ties += select(0u, 1u, key == prefix);
        }
        var slot_above = inclusive_scan(lid, n_above) - n_above;
        var tie_rank = inclusive_scan(lid, n_ties) - n_ties;
        let first_tie = k - remaining;
        for (var i = lo; i < hi; i++) {
            let it = item(base, i);
            if it.x > prefix {
                cand_key[slot_above] = it.x;
                cand_idx[slot_above] = it.y;
                slot_above++;
            } else if it.x == prefix {
                if tie_rank < remaining {
                    cand_key[first_tie + tie_rank] = it.x;
                    cand_idx[first_tie + tie_rank] = it.y;
                }
                tie_rank++;
            }
        }
    }
    workgroupBarrier();
    // Rank: larger key first, lower id first among equal keys.
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
        if !PICK {
            cands[wid.x * KMAX + rank] = vec2<u32>(key, idx);
        }
    }
    if !PICK {
        if lid >= k && lid < KMAX {
            cands[wid.x * KMAX + lid] = vec2<u32>(0u, NONE);
        }
        return;
    }
    workgroupBarrier();
    if lid == 0u {
        var token = sorted_idx[0];
        if s.x == 1u && k > 1u {
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
        state.token = token;
        if s.z < p.ids_len {
            ids[s.z] = token;
        }
        state.step = s.z + 1u;
        state.pos = select(state.pos + 1u, p.new_pos, p.set_pos == 1u);
    }
}
