# The variants timed in this call (walk_probe --variants DIR), made from the engine's linear
# kernel and the probe's vec4 U = 16 synced walk as `walk_probe --dump SRC` writes them:
#   python3 make_variants.py SRC DIR
import sys
src, out = sys.argv[1], sys.argv[2]
e = open(f'{src}/engine_linear.wgsl').read()
p = open(f'{src}/probe_linear_w4_u16_sync.wgsl').read()
# The probe's walk body, reading the engine's bindings (out for h, the launch's t_len).
body = p[p.index('    let n = p.n;'):]
body = body[:body.rindex('}')].replace('p.t_len', 'p.launch.t_len').replace('h[i', 'out[i')
start, end = e.index('fn lanes(id: u32) {'), e.index('// side slot of chunk')
def lanes(fn):
    return e[:start] + fn + '\n' + e[end:]
probe_loop = lanes('fn lanes(id: u32) {\n    let lane = id;\n' + body + '}\n')
variants = {
    'v00_as_built': e,
    'v01_probe_loop': probe_loop,
    'v02_no_live': lanes('fn lanes(id: u32) {\n    var w = begin(id, p.launch.t_end);\n'
                         '    w.s = walk_forward(w, p.launch.t_begin, p.launch.t_end, F(0.0), true);\n}\n'),
    'v03_wg256': '// wg: 256\n' + e.replace('const WG: u32 = 64u;', 'const WG: u32 = 256u;'),
    'v04_stores_unconditional': e.replace('if write { fwd_store(', '{ fwd_store('),
    'v05_probe_loop_nobarrier': lanes('fn lanes(id: u32) {\n    let lane = id;\n'
                                      + body.replace('workgroupBarrier();', '') + '}\n'),
    'v06_probe_loop_wg256': '// wg: 256\n' + probe_loop.replace('const WG: u32 = 64u;', 'const WG: u32 = 256u;'),
}
for name, wgsl in variants.items():
    open(f'{out}/{name}.wgsl', 'w').write(wgsl)
