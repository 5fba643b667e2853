// The engine's browser build on Dawn, Chrome's WebGPU implementation, with no browser around
// it: Node loads web/pkg/ (web/build.sh) and dawn.node (the npm package `webgpu`) provides
// `navigator.gpu`. On the adapter Dawn finds it runs
//   - the page's parity suite (every row, as the page's "Run parity" does),
//   - the dispatch floor: a plan of one-element dispatches (`Plan::dispatch_floor`), the cost
//     of one dispatch through wasm and Dawn,
//   - GPT-2 through the compiled plans: the shipped Shakespeare model sampling 200 tokens
//     after "ROMEO:" (the protocol of the native `shakespeare_tokens_per_s`), then greedy
//     decode, 64 tokens after a 64-token prompt (the protocol of `bench --only gpt2_sizes`),
//     of that model at 8, 1 and 32 steps a submission, and of a 124M-shaped model with random
//     weights in f32 and f16,
// and prints one line per figure and a JSON object of them (`--out FILE` writes it too).
//
//   (cd web/dawn && npm ci) && node web/dawn/dawn.mjs [--quick] [--out FILE]
//
// --quick: the parity suite and the floor only. Without an adapter (Mesa 22.3's lavapipe
// lacks a Vulkan feature Dawn requires, and Dawn has no GL adapter on Linux) it says so and
// exits 0, with `{"adapter": null}` as its JSON. Environment: DAWN_FLAGS, a space-separated
// list of dawn.node options (e.g. `backend=null`, Dawn's null device, which runs the API
// calls but no shader: only for exercising this script; `enable-dawn-toggles=a,b`).

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const outAt = args.indexOf('--out');
const outFile = outAt >= 0 ? args[outAt + 1] : null;
const figures = {};

function finish(code) {
  const json = JSON.stringify(figures, null, 1);
  console.log(json);
  if (outFile) fs.writeFileSync(outFile, json + '\n');
  process.exit(code);
}

function figure(key, value, line) {
  figures[key] = value;
  console.log(`dawn: ${line}`);
}

// Mesa's device-select layer prints "error: XDG_RUNTIME_DIR is invalid" on machines without a
// display; the engine's own Vulkan path sets the same variable.
process.env.NODEVICE_SELECT ??= '1';

let webgpu;
try {
  webgpu = await import('webgpu');
} catch (e) {
  console.error(`dawn: the npm package \`webgpu\` is missing (run \`npm ci\` in web/dawn): ${e.message}`);
  process.exit(1);
}
Object.assign(globalThis, webgpu.globals);
const flags = (process.env.DAWN_FLAGS || '').split(/\s+/).filter(Boolean);
const gpu = webgpu.create(flags);
const adapter = await gpu.requestAdapter();
if (!adapter) {
  figures.adapter = null;
  console.log(
    'dawn: no WebGPU adapter: Dawn found none on this machine (it needs a Vulkan driver with the ' +
      'features Chrome requires; Mesa 22.3 lavapipe lacks one, and Dawn has no GL adapter on Linux). ' +
      'Nothing to run; run this on a machine with a GPU.',
  );
  finish(0);
}
const info = adapter.info || {};
console.log(`dawn: adapter ${info.vendor || '?'} ${info.architecture || ''} ${info.description || ''}`.trim());
console.log(`dawn: adapter features ${[...adapter.features].sort().join(' ')}`);

// wgpu's web backend finds `navigator.gpu` through the global object's `Window` (or
// `WorkerGlobalScope`) property, which Node has not; Node 20 has no `navigator` either.
globalThis.Window ??= class Window {};
Object.defineProperty(globalThis, 'navigator', {
  value: { ...(globalThis.navigator || {}), gpu },
  configurable: true,
  writable: true,
});

const pkg = path.join(root, 'web', 'pkg');
if (!fs.existsSync(path.join(pkg, 'engine_web_bg.wasm'))) {
  console.error('dawn: web/pkg/ is missing: build it first with web/build.sh');
  process.exit(1);
}
const wasm = await import(pathToFileURL(path.join(pkg, 'engine_web.js')).href);
wasm.initSync({ module: fs.readFileSync(path.join(pkg, 'engine_web_bg.wasm')) });
const engine = await wasm.Engine.create(false);
const ai = engine.info();
figures.adapter = ai.summary;
console.log(`dawn: engine on ${ai.summary}`);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
async function timed(f) {
  const t = performance.now();
  await f();
  return performance.now() - t;
}

// ---- parity ------------------------------------------------------------------------------
{
  const cases = engine.parityCases();
  let passed = 0;
  const failed = [];
  const t = performance.now();
  for (const c of cases) {
    let row;
    try {
      row = await engine.runParityCase(c.index);
    } catch (e) {
      row = { passed: false, detail: `threw: ${e.message || e}` };
    }
    if (row.passed) passed += 1;
    else failed.push(`${c.suite} ${c.op} ${c.direction} ${c.shape}: ${row.detail || row.maxAbsErr}`);
  }
  for (const f of failed.slice(0, 20)) console.log(`dawn: parity FAIL ${f}`);
  figures.dawn_parity_total = cases.length;
  figure('dawn_parity_passed', passed, `parity ${passed}/${cases.length} passed in ${((performance.now() - t) / 1e3).toFixed(1)} s`);
}

// ---- the dispatch floor --------------------------------------------------------------------
for (const n of [1, 64]) {
  const floor = engine.dispatchFloor(n);
  await floor.run(3);
  const reps = 50;
  const xs = [];
  for (let i = 0; i < 5; i++) xs.push(await timed(() => floor.run(reps)));
  const batch = median(xs);
  const perReplay = batch / reps;
  // The same replays in one submission: the difference is what a submission costs.
  const ys = [];
  for (let i = 0; i < 5; i++) ys.push(await timed(() => floor.run(reps, true)));
  figures[`dawn_floor${n}_one_submit_ms`] = median(ys) / reps;
  console.log(`dawn: the same, ${reps} replays in one submission: ${(median(ys) / reps).toFixed(4)} ms a replay`);
  figure(`dawn_floor${n}_ms`, perReplay, `a plan of ${n} one-element dispatch${n > 1 ? 'es' : ''}: ${perReplay.toFixed(4)} ms a replay (${reps} replays a read-back)`);
  if (n === 64) {
    figure('dawn_dispatch_us', (perReplay * 1e3) / n, `${((perReplay * 1e3) / n).toFixed(2)} us a dispatch`);
  }
  floor.free();
}

// ---- GPT-2 decode ----------------------------------------------------------------------------
// The protocol of `bench --only gpt2_sizes`: prefill = a 64-token prompt and one token; decode =
// (64 more tokens - prefill) / 64; medians over rotated random prompts.
async function decode(model, vocab) {
  let seed = 5;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8);
  const prompts = [0, 1, 2, 3].map(() => Uint32Array.from({ length: 64 }, () => rand() % vocab));
  const n = 64;
  await model.generateIds(prompts[0], 1 + n); // builds the prefill and decode plans
  const pre = [];
  const long = [];
  for (let i = 0; i < 7; i++) pre.push(await timed(() => model.generateIds(prompts[i % 4], 1)));
  for (let i = 0; i < 5; i++) long.push(await timed(() => model.generateIds(prompts[i % 4], 1 + n)));
  const prefill = median(pre);
  return { prefill, step: (median(long) - prefill) / n };
}

// The protocol of the native `shakespeare_tokens_per_s` (`bench --only gpt2`): 200 tokens
// sampled at temperature 0.8, top-k 40, seed 1, after "ROMEO:", prefill included; median of 7
// after 2 warm-ups. Through the page's own call, text decoding included.
async function sampled(model) {
  const run = () => timed(() => model.generate('ROMEO:', 200, () => {}, 0.8, 40, 1));
  for (let i = 0; i < 2; i++) await run();
  const xs = [];
  for (let i = 0; i < 7; i++) xs.push(await run());
  return 200 / (median(xs) / 1e3);
}

if (!quick) {
  try {
    const dir = path.join(root, 'assets', 'models', 'shakespeare');
    const config = fs.readFileSync(path.join(dir, 'config.json'), 'utf8');
    const weights = fs.readFileSync(path.join(dir, 'model.safetensors'));
    const model = await engine.loadGpt2(config, weights, null);
    console.log(`dawn: shakespeare: ${model.describe()}`);
    const tps = await sampled(model);
    figure('dawn_shakespeare_tokens_per_s', tps, `shakespeare, 200 sampled tokens after "ROMEO:": ${tps.toFixed(0)} tokens/s (prefill included)`);
    // Where the time goes: greedy decode with 8 steps a submission (the default), then 1 and 32.
    for (const chunk of [8, 1, 32]) {
      model.setChunk(chunk);
      const r = await decode(model, JSON.parse(config).vocab_size);
      const k = chunk === 8 ? '' : `_chunk${chunk}`;
      if (chunk === 8) figures.dawn_shakespeare_prefill64_ms = r.prefill;
      figure(`dawn_shakespeare_decode${k}_ms`, r.step, `shakespeare greedy decode, ${chunk} step${chunk > 1 ? 's' : ''} a submission: ${r.step.toFixed(3)} ms a token${chunk === 8 ? `, prefill 64 ${r.prefill.toFixed(2)} ms` : ''}`);
    }
    model.free();
  } catch (e) {
    figure('dawn_shakespeare_tokens_per_s', null, `shakespeare: failed: ${e.message || e}`);
  }

  for (const dtype of ['f32', 'f16']) {
    const d = dtype === 'f32' ? '' : '_f16';
    try {
      const m = await engine.randomGpt2(12, 768, 12, dtype);
      const r = await decode(m, 50257);
      figures[`dawn_gpt2_prefill64${d}_ms`] = r.prefill;
      figure(`dawn_gpt2_decode${d}_ms`, r.step, `124M-shaped ${dtype} decode ${r.step.toFixed(3)} ms a token, prefill 64 ${r.prefill.toFixed(2)} ms`);
      m.free();
    } catch (e) {
      // A figure that could not be measured is null, with the reason on its line.
      figure(`dawn_gpt2_decode${d}_ms`, null, `124M-shaped ${dtype}: failed: ${e.message || e}`);
    }
  }
}

finish(figures.dawn_parity_passed === figures.dawn_parity_total ? 0 : 1);
