// The page's logic: open the adapter, load GPT-2 (default model, local files or a URL, with a
// fetch progress bar) and stream sampled tokens with tokens/s, train a character-level minGRU
// model step by step with a live loss chart and a sample, and run the parity suite row by row
// behind a one-line summary.
// Every failure is shown under "Messages"; nothing is left to reach the console uncaught.
// The browser test (web/test/browser_test.mjs) drives this page through the element ids and
// the data-state attributes set here.

const $ = (id) => document.getElementById(id);

// Model folders tried in order for "Load default": the trained Shakespeare model when the
// repository ships it, else the untrained tiny-random one.
const DEFAULT_MODELS = ['../assets/models/shakespeare/', '../assets/models/tiny-random/']
  .map((p) => new URL(p, import.meta.url).href);

let wasm = null;   // the wasm-bindgen module (web/pkg/engine_web.js)
let engine = null; // wasm.Engine
let model = null;  // wasm.Gpt2
let source = null; // the loaded model's { name, configJson, weights }, for a change of dtype
let busy = false;

// ---- messages ---------------------------------------------------------------------------

function report(what, err) {
  let text = err instanceof Error ? err.message : String(err);
  // A Rust panic surfaces as a wasm RuntimeError; the panic hook kept its message.
  const panic = wasm && wasm.lastPanic ? wasm.lastPanic() : null;
  if (err instanceof WebAssembly.RuntimeError && panic) text += ` (${panic})`;
  const li = document.createElement('li');
  li.textContent = `${what}: ${text}`;
  $('errors').append(li);
}

// Runs an async UI action, showing its failure on the page instead of throwing.
function guarded(what, action) {
  return async (...args) => {
    try {
      await action(...args);
    } catch (err) {
      report(what, err);
    }
  };
}

window.addEventListener('error', (e) => { report('error', e.error ?? e.message); e.preventDefault(); });
window.addEventListener('unhandledrejection', (e) => { report('unhandled', e.reason); e.preventDefault(); });

// ---- adapter ----------------------------------------------------------------------------

async function start() {
  const gpu = 'gpu' in navigator && navigator.gpu;
  const banner = $('webgpu');
  if (!gpu) {
    banner.textContent = 'This browser has no WebGPU (navigator.gpu is undefined). Use a recent Chrome, ' +
      'Edge or Chromium (on Linux start it with --enable-unsafe-webgpu), Safari 26, or Firefox 141+ ' +
      'on Windows. GPT-2 can still run on the CPU reference compiled into the wasm, slowly; the ' +
      'parity suite needs a GPU.';
    banner.classList.add('bad');
    banner.dataset.webgpu = 'missing';
  } else {
    banner.textContent = 'WebGPU is available.';
    banner.dataset.webgpu = 'present';
  }

  try {
    wasm = await import('./pkg/engine_web.js');
    await wasm.default();
  } catch (err) {
    $('adapter').dataset.state = 'error';
    $('adapter').textContent = 'The wasm module did not load; build it with web/build.sh.';
    throw err;
  }
  $('gpt2-status').textContent = wasm.gpt2Status();
  // The sampling defaults are the library's (the gpt2 example's), not restated here.
  const d = wasm.gpt2Defaults();
  $('temperature').value = d.temperature.toFixed(2).replace(/0$/, '');
  $('top-k').value = d.topK;
  $('seed').value = d.seed;

  try {
    engine = await wasm.Engine.create(!gpu);
  } catch (err) {
    $('adapter').dataset.state = 'error';
    $('adapter').textContent = 'No adapter.';
    throw err;
  }
  const info = engine.info();
  const name = info.name || (gpu ? await browserAdapterName(gpu) : '');
  $('adapter').textContent = info.summary.replace(/^adapter: *$/m, (line) => `${line}${name}`);
  $('adapter').dataset.state = info.isGpu ? 'gpu' : 'cpu';
  $('adapter').dataset.name = name;
  $('adapter').dataset.backend = info.backend;
  $('adapter-name').textContent = `${name || info.backend}${info.isGpu ? '' : ' (CPU reference)'}`;

  renderCases();
  $('run-parity').disabled = !info.isGpu;
  if (!info.isGpu) $('parity-summary').textContent = 'needs WebGPU (it compares the GPU with the CPU reference)';
  $('load-default').disabled = false;
  $('load-url').disabled = false;
  $('model-files').disabled = false;
  $('default-url').textContent = DEFAULT_MODELS.join(' or ');
  $('train').disabled = false;
  await guarded('GPT-2 default model', loadDefault)();
}

// wgpu reports the GPUAdapterInfo description as the name, which browsers often leave empty;
// the vendor and architecture they do report name the adapter (e.g. google swiftshader).
async function browserAdapterName(gpu) {
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  const i = adapter && adapter.info;
  if (!i) return 'unknown WebGPU adapter';
  const parts = [i.vendor, i.architecture, i.device, i.description].filter((p) => p);
  return `${parts.join(' ') || 'unnamed'}${i.isFallbackAdapter ? ' (fallback adapter)' : ''}`;
}

// ---- parity -----------------------------------------------------------------------------

function renderCases() {
  const body = $('parity').tBodies[0];
  body.replaceChildren();
  const cases = engine.parityCases();
  $('parity-summary').textContent = `${cases.length} cases against the f64 CPU reference: not run yet`;
  for (const c of cases) {
    const tr = body.insertRow();
    for (const v of [c.index, c.suite, c.op, c.direction, c.shape, '', '', '', '', 'pending']) {
      tr.insertCell().textContent = v;
    }
    tr.cells[6].className = 'num';
    tr.cells[8].className = 'num';
  }
}

async function runParity() {
  if (busy) return;
  busy = true;
  const summary = $('parity-summary');
  summary.dataset.state = 'running';
  const rows = $('parity').tBodies[0].rows;
  let passed = 0;
  let failed = 0;
  try {
    renderCases();
    for (let i = 0; i < rows.length; i++) {
      const t0 = performance.now();
      const r = await engine.runParityCase(i);
      const ms = performance.now() - t0;
      const tr = rows[i];
      tr.cells[5].textContent = r.strategy;
      tr.cells[6].textContent = Number.isFinite(r.maxAbsErr) ? r.maxAbsErr.toExponential(2) : 'inf';
      tr.cells[7].textContent = r.gate;
      tr.cells[8].textContent = ms.toFixed(0);
      tr.cells[9].textContent = r.passed ? 'pass' : 'FAIL';
      tr.title = r.detail;
      tr.className = r.passed ? 'pass' : 'fail';
      if (r.passed) passed++; else failed++;
      summary.textContent = `${passed} passed, ${failed} failed (${i + 1}/${rows.length})`;
    }
    summary.textContent = `${passed} passed, ${failed} failed`;
    summary.dataset.state = failed === 0 ? 'passed' : 'failed';
    if (failed > 0) $('parity-details').open = true;
  } catch (err) {
    summary.dataset.state = 'error';
    throw err;
  } finally {
    busy = false;
  }
}

// ---- GPT-2 ------------------------------------------------------------------------------

function progress(loaded, total, label) {
  const bar = $('fetch-progress');
  bar.max = total || 1;
  bar.value = total ? loaded : 0;
  const mib = (n) => (n / 1048576).toFixed(1);
  $('fetch-text').textContent = total ? `${label}: ${mib(loaded)} / ${mib(total)} MiB` : `${label}: ${mib(loaded)} MiB`;
}

// The body of `url` as bytes, reporting progress as chunks arrive.
async function fetchBytes(url) {
  let resp;
  try {
    resp = await fetch(url);
  } catch (err) {
    throw new Error(`could not fetch ${url}: ${err.message}`);
  }
  if (!resp.ok) throw new Error(`could not fetch ${url}: HTTP ${resp.status} ${resp.statusText}`);
  const total = Number(resp.headers.get('content-length')) || 0;
  const reader = resp.body.getReader();
  const chunks = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.length;
    progress(loaded, total, url.split('/').pop());
  }
  const bytes = new Uint8Array(loaded);
  let at = 0;
  for (const c of chunks) { bytes.set(c, at); at += c.length; }
  return bytes;
}

async function fetchText(url) {
  return new TextDecoder().decode(await fetchBytes(url));
}

// Loads a model with its weights in the dtype the Weights control picks ('' = as stored); on
// failure the previous model (if any) stays loaded and usable. The source is kept so that a
// change of dtype reloads it.
async function load(name, configJson, weights) {
  const label = $('model-name');
  const previous = label.textContent;
  const dtype = $('gpt2-dtype').value;
  label.textContent = `${name} (loading...)`;
  let loaded;
  try {
    loaded = await engine.loadGpt2(configJson, weights, dtype);
  } catch (err) {
    label.textContent = previous;
    throw err;
  }
  if (model) model.free();
  model = loaded;
  source = { name, configJson, weights };
  label.textContent = `${name}: ${model.describe()}`;
  label.dataset.url = name;
  label.dataset.dtype = dtype;
  $('generate').disabled = false;
}

// The Weights control: reloads the current model in the chosen dtype.
async function reloadDtype() {
  if (!source) return;
  if (busy) {
    // Not while generating: the control shows the dtype that stays loaded.
    $('gpt2-dtype').value = $('model-name').dataset.dtype || '';
    throw new Error('the weights dtype changes after the generation in progress ends');
  }
  try {
    await load(source.name, source.configJson, source.weights);
  } catch (err) {
    $('gpt2-dtype').value = $('model-name').dataset.dtype || '';
    throw err;
  }
}

async function loadFolder(url) {
  const base = url.endsWith('/') ? url : `${url}/`;
  const config = await fetchText(`${base}config.json`);
  const weights = await fetchBytes(`${base}model.safetensors`);
  await load(base, config, weights);
}

async function loadDefault() {
  for (const url of DEFAULT_MODELS) {
    const head = await fetch(`${url}config.json`, { method: 'HEAD' }).catch(() => null);
    if (head && head.ok) return loadFolder(url);
  }
  throw new Error(`no default model found at ${DEFAULT_MODELS.join(' or ')}`);
}

async function loadFiles() {
  const files = [...$('model-files').files];
  const config = files.find((f) => f.name.endsWith('.json'));
  const weights = files.find((f) => f.name.endsWith('.safetensors'));
  if (!config || !weights) throw new Error('pick both config.json and model.safetensors (one file dialog, select both)');
  progress(0, weights.size, weights.name);
  const bytes = new Uint8Array(await weights.arrayBuffer());
  progress(bytes.length, bytes.length, weights.name);
  await load(weights.name, await config.text(), bytes);
}

async function loadUrl() {
  const url = $('model-url').value.trim();
  if (!url) throw new Error('enter the URL of a folder holding config.json and model.safetensors');
  await loadFolder(new URL(url, location.href).href);
}

// The sampling the controls ask for: [temperature, topK, seed], or undefined (greedy).
function sampling() {
  if ($('greedy').checked) return [undefined, undefined, undefined];
  const t = Number($('temperature').value);
  if (!(t > 0)) throw new Error('the temperature must be a positive number (or tick greedy)');
  return [t, Math.max(0, Math.floor(Number($('top-k').value) || 0)), Math.max(0, Math.floor(Number($('seed').value) || 0))];
}

function syncSampling() {
  const greedy = $('greedy').checked;
  for (const id of ['temperature', 'top-k', 'seed']) $(id).disabled = greedy;
}

async function generate() {
  if (busy || !model) return;
  const [temperature, topK, seed] = sampling();
  busy = true;
  $('generate').disabled = true;
  const out = $('output');
  const n = Number($('n-tokens').value);
  out.textContent = $('prompt').value;
  out.dataset.state = 'running';
  $('ttft').textContent = '-';
  $('tps').textContent = '-';
  const t0 = performance.now();
  let first = 0;
  let count = 0;
  try {
    const ids = await model.generate($('prompt').value, n, (id, text) => {
      const now = performance.now();
      if (count === 0) {
        first = now;
        $('ttft').textContent = `${(now - t0).toFixed(0)} ms`;
      } else {
        $('tps').textContent = ((count * 1000) / (now - first)).toFixed(1);
      }
      count++;
      out.textContent += text;
    }, temperature, topK, seed);
    $('ids').dataset.ids = JSON.stringify([...ids]);
    out.dataset.state = 'done';
  } catch (err) {
    out.dataset.state = 'error';
    throw err;
  } finally {
    busy = false;
    $('generate').disabled = !model;
  }
}

// ---- minGRU training ---------------------------------------------------------------------

const TRAIN_TEXT = new URL('../assets/text/shakespeare.txt', import.meta.url).href;

// The live loss chart: one polyline vertex per step, axes rescaled as the losses come in.
const CHART = { left: 48, top: 10, width: 542, height: 210 };
function drawLosses(losses, steps) {
  const svg = $('loss-chart');
  const grid = $('loss-grid');
  grid.replaceChildren();
  svg.dataset.points = String(losses.length);
  if (losses.length === 0) {
    $('loss-line').setAttribute('points', '');
    return;
  }
  const hi = Math.max(...losses);
  const lo = Math.min(...losses);
  const span = Math.max(hi - lo, 1e-3);
  const x = (i) => CHART.left + (CHART.width * i) / Math.max(1, steps - 1);
  const y = (v) => CHART.top + CHART.height * (1 - (v - lo) / span);
  const ns = 'http://www.w3.org/2000/svg';
  const add = (tag, attrs, text) => {
    const el = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
    if (text !== undefined) el.textContent = text;
    grid.append(el);
  };
  for (let k = 0; k <= 4; k++) {
    const v = lo + (span * k) / 4;
    add('line', { x1: CHART.left, x2: CHART.left + CHART.width, y1: y(v), y2: y(v), class: 'grid' });
    add('text', { x: CHART.left - 4, y: y(v) + 4, 'text-anchor': 'end' }, v.toFixed(2));
  }
  for (const s of [0, steps - 1]) {
    add('text', { x: x(s), y: CHART.top + CHART.height + 16, 'text-anchor': 'middle' }, String(s + 1));
  }
  $('loss-line').setAttribute('points', losses.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' '));
}
let trainText = null;
let stopTraining = false;

// Trains a fresh model for the asked number of steps, one promise per step (the page repaints
// between them), then samples 200 characters. data-first-loss / data-last-loss hold the means
// of the first and last tenth of the steps' losses.
async function train() {
  if (busy) return;
  busy = true;
  stopTraining = false;
  const status = $('train-status');
  const sample = $('train-sample');
  const bar = $('train-progress');
  const steps = Math.max(1, Number($('train-steps').value) || 1);
  $('train').disabled = true;
  $('train-stop').disabled = false;
  status.dataset.state = 'running';
  sample.dataset.state = 'idle';
  sample.textContent = '';
  let trainer = null;
  try {
    if (!trainText) trainText = await fetchText(TRAIN_TEXT);
    trainer = engine.trainer(trainText, $('mixer').value, Number($('train-width').value),
      Number($('train-batch').value), 1);
    $('train-model').textContent = trainer.describe();
    const losses = [];
    const t0 = performance.now();
    bar.max = steps;
    drawLosses(losses, steps);
    for (let i = 0; i < steps && !stopTraining; i++) {
      losses.push(await trainer.step());
      drawLosses(losses, steps);
      bar.value = i + 1;
      const rate = ((i + 1) * 1000) / (performance.now() - t0);
      status.textContent = `step ${i + 1}/${steps}: loss ${losses[i].toFixed(3)} (${rate.toFixed(1)} steps/s)`;
    }
    const tenth = Math.max(1, Math.floor(losses.length / 10));
    const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const first = mean(losses.slice(0, tenth));
    const last = mean(losses.slice(-tenth));
    status.dataset.firstLoss = String(first);
    status.dataset.lastLoss = String(last);
    status.textContent += ` - mean loss ${first.toFixed(3)} over the first ${tenth} steps, ${last.toFixed(3)} over the last ${tenth}`;
    status.dataset.state = 'done';
    sample.dataset.state = 'running';
    sample.textContent = 'ROMEO:\n' + await trainer.sample('ROMEO:\n', 200, 0.8);
    sample.dataset.state = 'done';
  } catch (err) {
    status.dataset.state = 'error';
    throw err;
  } finally {
    if (trainer) trainer.free();
    busy = false;
    $('train').disabled = false;
    $('train-stop').disabled = true;
  }
}

$('run-parity').addEventListener('click', guarded('parity', runParity));
$('train').addEventListener('click', guarded('minGRU training', train));
$('train-stop').addEventListener('click', () => { stopTraining = true; });
$('load-default').addEventListener('click', guarded('GPT-2 default model', loadDefault));
$('load-url').addEventListener('click', guarded('GPT-2 from URL', loadUrl));
$('model-files').addEventListener('change', guarded('GPT-2 from files', loadFiles));
$('generate').addEventListener('click', guarded('GPT-2 generate', generate));
$('greedy').addEventListener('change', syncSampling);
$('gpt2-dtype').addEventListener('change', guarded('GPT-2 weights dtype', reloadDtype));
$('prompt').addEventListener('keydown', (e) => { if (e.key === 'Enter') $('generate').click(); });
guarded('start', start)().finally(() => { document.body.dataset.ready = '1'; });
