"""Writes the vec4<f16>-staged cooperative-matrix kernels of coop_probe.wgsl (everything after
its line "The vec4<f16>-staged variants below"): one generator, a line of parameters a variant
(subgroup grid WM x WN, FM x FN fragments of 16 x 16 a subgroup, K slice, padding in halves).

    python3 dev/src/bin/coop_probe_staged.py   # prints the ENTRIES rows; writes /tmp/coop_gen.wgsl
"""
import sys
def gen(name, WM, WN, FM, FN, KS, PAD, doc):
    T = 32*WM*WN
    TM, TN = WM*FM*16, WN*FN*16
    wa, wb = KS//4, TN//4            # vec4<f16> words per row of a slice of A, B
    sa, sb = wa + PAD//4, wb + PAD//4  # row strides in workgroup memory
    bufa, bufb = TM*sa, KS*sb
    na, nb = TM*wa//T, KS*wb//T
    assert na*T == TM*wa and nb*T == KS*wb and na >= 1 and nb >= 1
    mem = 2*(bufa+bufb)*8
    assert mem <= 49152, (name, mem)
    L=[]; a=L.append
    a(f"// {doc}")
    a(f"// Tile {TM} x {TN}, {WM} x {WN} subgroups of {FM*16} x {FN*16} ({FM} x {FN} fragments), {KS}-wide K slices,")
    a(f"// rows padded by {PAD} halves, double-buffered: {mem} bytes of workgroup memory.")
    a(f"var<workgroup> {name}_a: array<vec4<f16>, {2*bufa}>; // 2 x {TM} rows, stride {sa}")
    a(f"var<workgroup> {name}_b: array<vec4<f16>, {2*bufb}>; // 2 x {KS} rows, stride {sb}")
    a("")
    a(f"// Grid: (N / {TN}, M / {TM}); K a multiple of {KS}; subgroups 32 wide.")
    a(f"@compute @workgroup_size({T})")
    a(f"fn {name}(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{")
    a("    let s = lid / 32u;")
    a(f"    let r0 = wid.y * {TM}u;")
    a(f"    let q0 = wid.x * {TN}u;")
    a(f"    let br = (s / {WN}u) * {FM*16}u;")
    a(f"    let bq = (s % {WN}u) * {FN*16}u;")
    a("    let n = p.n;")
    a("    let k4 = p.k / 4u;")
    a("    let n4 = n / 4u;")
    a("    let r = r0 + br;")
    a("    let q = q0 + bq;")
    for i in range(FM):
        for j in range(FN):
            a(f"    var c{i}_{j} = coopLoadT<TileC>(&c[(r + {16*i}u) * n + q + {16*j}u], n);")
    for i in range(na):
        a(f"    let ea{i} = lid + {T*i}u;")
        a(f"    let ga{i} = (r0 + ea{i} / {wa}u) * k4 + ea{i} % {wa}u;")
        a(f"    let sa{i} = (ea{i} / {wa}u) * {sa}u + ea{i} % {wa}u;")
    for i in range(nb):
        a(f"    let eb{i} = lid + {T*i}u;")
        a(f"    let gb{i} = (eb{i} / {wb}u) * n4 + q0 / 4u + eb{i} % {wb}u;")
        a(f"    let sb{i} = (eb{i} / {wb}u) * {sb}u + eb{i} % {wb}u;")
    for i in range(na): a(f"    var va{i} = a4[ga{i}];")
    for i in range(nb): a(f"    var vb{i} = b4[gb{i}];")
    for i in range(na): a(f"    {name}_a[sa{i}] = va{i};")
    for i in range(nb): a(f"    {name}_b[sb{i}] = vb{i};")
    a("    workgroupBarrier();")
    a(f"    for (var k0 = 0u; k0 < p.k; k0 += {KS}u) {{")
    a(f"        let cur = (k0 / {KS}u) % 2u;")
    a(f"        let more = k0 + {KS}u < p.k;")
    a("        if more {")
    for i in range(na): a(f"            va{i} = a4[ga{i} + (k0 + {KS}u) / 4u];")
    for i in range(nb): a(f"            vb{i} = b4[gb{i} + (k0 + {KS}u) * n4];")
    a("        }")
    a(f"        let ao = cur * {bufa}u;")
    a(f"        let bo = cur * {bufb}u;")
    for kk in range(0, KS, 16):
        for i in range(FM):
            a(f"        let ia{i}_{kk} = ao + (br + {16*i}u) * {sa}u + {kk//4}u;")
            a(f"        let a{i}_{kk} = coopLoadT<TileA>(&{name}_a[ia{i}_{kk}], {sa}u);")
        for j in range(FN):
            a(f"        let ib{j}_{kk} = bo + {kk*sb}u + (bq + {16*j}u) / 4u;")
            a(f"        let b{j}_{kk} = coopLoadT<TileB>(&{name}_b[ib{j}_{kk}], {sb}u);")
        for i in range(FM):
            for j in range(FN):
                a(f"        c{i}_{j} = coopMultiplyAdd(a{i}_{kk}, b{j}_{kk}, c{i}_{j});")
    a("        if more {")
    a(f"            let nao = (1u - cur) * {bufa}u;")
    a(f"            let nbo = (1u - cur) * {bufb}u;")
    for i in range(na): a(f"            {name}_a[nao + sa{i}] = va{i};")
    for i in range(nb): a(f"            {name}_b[nbo + sb{i}] = vb{i};")
    a("        }")
    a("        workgroupBarrier();")
    a("    }")
    for i in range(FM):
        for j in range(FN):
            a(f"    let o{i}_{j} = (r + {16*i}u) * n + q + {16*j}u;")
            a(f"    coopStoreT(c{i}_{j}, &c[o{i}_{j}], n);")
    a("}")
    return "\n".join(L), (name, TM, TN)

V = [
 ("coop_staged_h4", 2,2,4,4,32,8, "coop_staged_v4 with the tiles in workgroup memory as vec4<f16> (8-byte words, a and b read as vec4<f16>): the cooperative loads' pointer has the matrices' own component type, where coop_staged_v4's reads f16 through vec4<u32> (which NVIDIA's compiler rejects)."),
 ("coop_staged_h4_k16", 2,2,4,4,16,8, "coop_staged_h4 with 16-wide K slices."),
 ("coop_staged_h4_nopad", 2,2,4,4,32,0, "coop_staged_h4 without the rows' padding."),
 ("coop_staged_h4_256x128", 4,2,4,4,16,8, "coop_staged_h4 with eight subgroups over a 256 x 128 tile."),
 ("coop_staged_h4_128x256", 2,4,4,4,16,8, "coop_staged_h4 with eight subgroups over a 128 x 256 tile."),
 ("coop_staged_h4_256x128_p4", 4,2,4,4,16,4, "coop_staged_h4_256x128 with rows padded by 4 halves."),
 ("coop_staged_h4_256x256", 4,4,4,4,16,8, "coop_staged_h4 with sixteen subgroups over a 256 x 256 tile."),
 ("coop_staged_h4_f2x4", 4,2,2,4,32,8, "coop_staged_h4 with eight subgroups of 32 x 64 (2 x 4 fragments) over the 128 x 128 tile."),
]
out=[]; entries=[]
for v in V:
    code, e = gen(*v); out.append(code); entries.append(e)
open('/tmp/coop_gen.wgsl','w').write("\n\n".join(out)+"\n")
print(entries)
