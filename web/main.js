// The page's logic: open the adapter (or, without WebGPU or without an adapter, the CPU
// reference), load GPT-2 (default model, local files or a URL, with a fetch progress bar) and
// stream sampled tokens with tokens/s, train a character-level minGRU model step by step with a
// live loss chart and a sample, and run the parity suite row by row behind a one-line summary.
// One job runs at a time (a model load, a generation, training or the parity suite); while it
// runs the other panels' buttons are disabled and say what is busy. Each failure is shown in
// the panel that caused it (a live region, cleared when that panel's next action starts) and
// logged under "Messages"; nothing is left to reach the console uncaught.
// The browser test (web/test/browser_test.mjs) drives this page through the element ids and
// the data-state attributes set here.

const $ = (id) => document.getElementById(id);

// Model folders tried in order for "Load default": the trained Shakespeare model when the
// repository ships it, else the untrained tiny-random one.
const DEFAULT_MODELS = ['../assets/models/shakespeare/', '../assets/models/tiny-random/']
  .map((p) => new URL(p, import.meta.url).href);

// The largest top-k the device sampler takes: wgsl_compute::generate::DEVICE_TOP_K_MAX
// (engine/generate/device.rs; the browser test checks that the two agree). Outside
// 1..=DEVICE_TOP_K_MAX (0 means every token) generation samples on a slower path.
const DEVICE_TOP_K_MAX = 128;

// The training panel's lighter settings on a CPU fallback adapter, where the page's defaults
// (index.html: MinGRU 64 x 16, 200 steps) take about 17 minutes.
const FALLBACK_TRAINING = { width: 32, batch: 4, steps: 100 };

// Fine-tune steps on the CPU reference or a CPU fallback adapter, where a step of the
// shipped model takes seconds (31-41 s on SwiftShader) instead of the GPU's milliseconds.
const FALLBACK_FINETUNE_STEPS = 4;

let wasm = null;    // the wasm-bindgen module (web/pkg/engine_web.js)
let engine = null;  // wasm.Engine that GPT-2 and training run on: gpuEngine or cpuEngine
let gpuEngine = null; // wasm.Engine on the WebGPU adapter (the parity suite's), or null
let cpuEngine = null; // wasm.Engine on the CPU reference compiled into the page
let isGpu = false;  // a WebGPU adapter is open (the parity suite can run)
let fallback = false; // that adapter is a software fallback (SwiftShader): slower than the CPU reference
let stopAsked = false; // Stop was clicked: the running job ends after its step or token
let adapterName = '';
let model = null;   // wasm.Gpt2
let source = null;  // the loaded model's { name, url, config, configJson, weights }
let job = null;     // the job running: a key of JOBS, or null

// ---- messages ---------------------------------------------------------------------------

// The panels' error regions (role="alert", aria-live="assertive").
const PANEL_ERRORS = { gpt2: 'gpt2-error', train: 'train-error', parity: 'parity-error', page: 'setup' };

function messageOf(err) {
  let text = err instanceof Error ? err.message : String(err);
  // A Rust panic surfaces as a wasm RuntimeError; the panic hook kept its message.
  const panic = wasm && wasm.lastPanic ? wasm.lastPanic() : null;
  if (err instanceof WebAssembly.RuntimeError && panic) text += ` (${panic})`;
  return text;
}

// Shows `what: message` in `panel`'s error region, moved beside `field` (the control that
// caused it: an InputError's own field, else the action's control), ties it to the field
// (aria-invalid, aria-describedby) and moves focus there; logs it under "Messages".
function report(what, err, panel, field) {
  const text = `${what}: ${messageOf(err)}`;
  const li = document.createElement('li');
  li.textContent = text;
  $('errors').append(li);
  const region = panel && $(PANEL_ERRORS[panel]);
  if (!region) return;
  region.textContent = text;
  if (panel === 'page') {
    region.dataset.state = 'error';
    return;
  }
  const at = $((err && err.field) || field);
  if (at) pinError(region, at);
}

// Places `region` right after the row (or label) holding `control`, so that the message is
// read next to its cause at any width, and ties the two together.
function pinError(region, control) {
  const details = control.closest('details');
  if (details) details.open = true;
  region.dataset.field = control.id;
  placeError(region, control);
  if (control.matches('input, select')) control.setAttribute('aria-invalid', 'true');
  control.setAttribute('aria-describedby', region.id);
  control.focus({ preventScroll: false });
}

// Under the control's row while the row is one line; once the row wraps (a phone), inside
// it, on a line of its own right under the control's label, so that a field at the top of a
// tall row is not left far above its message.
function placeError(region, control) {
  const row = control.closest('.row');
  const label = control.closest('label') || control;
  if (!row) {
    label.after(region);
    return;
  }
  row.after(region);
  const wrapped = row.getBoundingClientRect().height > 1.5 * label.getBoundingClientRect().height;
  region.classList.toggle('in-row', wrapped);
  if (wrapped) label.after(region);
}

// A resize can wrap or unwrap a row: each shown error is placed again beside its control.
window.addEventListener('resize', () => {
  for (const id of Object.values(PANEL_ERRORS)) {
    const region = $(id);
    const field = region && region.dataset.field && $(region.dataset.field);
    if (field && region.textContent) placeError(region, field);
  }
});

function clearError(panel) {
  if (panel === 'page') return;
  const region = $(PANEL_ERRORS[panel]);
  region.textContent = '';
  const field = region.dataset.field && $(region.dataset.field);
  if (field) {
    field.removeAttribute('aria-invalid');
    field.removeAttribute('aria-describedby');
  }
  delete region.dataset.field;
}

// What each panel resets on a failure, so that no line describes a run that never happened.
const RESETS = {
  gpt2: () => {
    $('gen-note').textContent = '';
    for (const id of ['tps', 'ttft']) $(id).textContent = '-';
    $('run-model').textContent = '';
    $('ids').dataset.ids = '';
    const status = $('gen-status');
    if (status.dataset.phase !== 'idle') phase('error', 'ended by an error (shown beside the control that caused it)');
    const tune = $('finetune-status');
    if (tune.dataset.state === 'running') tune.dataset.state = 'error';
    if (tune.dataset.state === 'error') tune.textContent = 'fine-tuning ended by an error (shown beside the control that caused it)';
  },
  train: () => {
    const status = $('train-status');
    if (status.dataset.state !== 'idle') {
      status.dataset.state = 'error';
      status.textContent = 'ended by an error (shown beside the control that caused it)';
    }
  },
  parity: () => {},
};

// Runs an async UI action of `panel` started from control `field`, showing its failure next
// to that control instead of throwing; the panel's previous error is cleared as it starts.
function guarded(what, panel, action, field) {
  return async (...args) => {
    clearError(panel);
    try {
      await action(...args);
    } catch (err) {
      RESETS[panel]();
      report(what, err, panel, field);
    }
  };
}

// A mistake in the page's inputs, said in plain words (no engine message behind it), naming
// the control it is about (`field`: an element id) so the message is shown beside it.
class InputError extends Error {
  constructor(message, field) {
    super(message);
    this.field = field;
  }
}

window.addEventListener('error', (e) => { report('error', e.error ?? e.message, 'page'); e.preventDefault(); });
window.addEventListener('unhandledrejection', (e) => { report('unhandled', e.reason, 'page'); e.preventDefault(); });

// ---- one job at a time ------------------------------------------------------------------

const JOBS = {
  load: 'a GPT-2 model is loading',
  generate: 'GPT-2 is writing (Stop ends it)',
  finetune: 'GPT-2 is fine-tuning (Stop ends it)',
  train: 'training is running (Stop ends it)',
  parity: 'the parity suite is running',
};

// Which panel's own buttons each job leaves alone (its own panel says what it does).
const JOB_PANEL = { load: 'gpt2', generate: 'gpt2', finetune: 'gpt2', train: 'train', parity: 'parity' };

// Why a control is disabled now, or '' when it can work: what it waits for.
function whyDisabled(id) {
  if (engine === null) return 'the page is still opening the adapter';
  const stops = { 'gen-stop': 'generate', 'finetune-stop': 'finetune', 'train-stop': 'train' };
  if (id in stops) {
    if (job !== stops[id]) return `nothing to stop: ${JOBS[stops[id]].replace(/ \(.*\)$/, '').replace(/ is /, ' is not ')}`;
    return stopAsked ? 'stopping after this step' : '';
  }
  if (job !== null) return `wait: ${JOBS[job]}`;
  if (['generate', 'finetune'].includes(id) && !model) return 'load a model first';
  if (id === 'run-parity' && !isGpu) return 'the parity suite needs WebGPU (it compares the GPU with the CPU reference)';
  if (id === 'use-webgpu' && !isGpu) return 'this browser gives no WebGPU adapter';
  return '';
}

// Enables the buttons that can work now, each disabled one saying why in its title, and
// writes, in every other panel, what is busy.
function syncButtons() {
  for (const id of ['generate', 'gen-stop', 'finetune', 'finetune-stop', 'run-parity', 'train', 'train-stop',
    'load-default', 'load-url', 'model-files', 'gpt2-dtype', 'use-webgpu']) {
    const why = whyDisabled(id);
    $(id).disabled = why !== '';
    if (why) $(id).title = `Disabled: ${why}.`;
    else $(id).removeAttribute('title');
    $(id).dataset.why = why;
  }
  for (const panel of ['gpt2', 'train', 'parity']) {
    const note = $(`${panel}-busy`);
    const other = job !== null && JOB_PANEL[job] !== panel;
    note.textContent = other ? `Waiting: ${JOBS[job]}.` : '';
    note.dataset.busy = other ? job : '';
  }
}

// Runs `body` as job `kind`; refuses (in plain words) while another job runs.
async function asJob(kind, body) {
  if (job !== null) throw new InputError(`wait until ${JOBS[job].replace(/ \(.*\)$/, '')} has finished`);
  job = kind;
  stopAsked = false;
  syncButtons();
  try {
    return await body();
  } finally {
    job = null;
    syncButtons();
  }
}

// ---- adapter ----------------------------------------------------------------------------

const ENABLE_WEBGPU = 'On Linux start Chromium with --enable-unsafe-webgpu (or enable ' +
  'chrome://flags/#enable-unsafe-webgpu); Chrome and Edge 113+, Safari 26 and Firefox 141+ on ' +
  'Windows have WebGPU. GPT-2 and training still run here on the CPU reference compiled into the ' +
  'page (on a computer without a GPU the fastest path there is); the parity suite needs WebGPU.';

async function start() {
  const gpu = ('gpu' in navigator && navigator.gpu) || null;
  const banner = $('webgpu');
  // The adapter the page will get: without one (WebGPU switched off or blocked, as Chromium
  // on Linux without --enable-unsafe-webgpu) the page runs as if there were no WebGPU.
  const adapter = gpu ? await gpu.requestAdapter({ powerPreference: 'high-performance' }).catch(() => null) : null;
  if (!gpu) {
    banner.textContent = `This browser has no WebGPU (navigator.gpu is undefined). ${ENABLE_WEBGPU}`;
    banner.classList.add('bad');
    banner.dataset.webgpu = 'missing';
  } else if (!adapter) {
    banner.textContent = 'This browser has WebGPU but gives no WebGPU adapter (navigator.gpu.requestAdapter() ' +
      `returned null): WebGPU is switched off or blocked here. ${ENABLE_WEBGPU}`;
    banner.classList.add('bad');
    banner.dataset.webgpu = 'no-adapter';
  } else {
    banner.textContent = 'WebGPU is available.';
    banner.dataset.webgpu = 'present';
  }

  try {
    wasm = await import('./pkg/engine_web.js');
    await wasm.default();
  } catch (err) {
    $('adapter').dataset.state = 'error';
    $('adapter').textContent = 'The wasm module did not load.';
    $('adapter-class').textContent = 'No adapter opened: the page did not start.';
    throw new SetupError('The wasm module (web/pkg/engine_web.js) is missing or did not load: build it with ' +
      'web/build.sh, serve the repository root with web/serve.sh, then reload this page.', err);
  }
  $('gpt2-status').textContent = wasm.gpt2Status();
  // The sampling defaults are the library's (the gpt2 example's), not restated here.
  const d = wasm.gpt2Defaults();
  $('temperature').value = d.temperature.toFixed(2).replace(/0$/, '');
  $('top-k').value = d.topK;
  $('seed').value = d.seed;

  try {
    engine = await wasm.Engine.create(!adapter);
  } catch (err) {
    $('adapter').dataset.state = 'error';
    $('adapter').textContent = 'No adapter.';
    $('adapter-class').textContent = 'No adapter opened.';
    throw err;
  }
  const info = engine.info();
  isGpu = info.isGpu;
  if (isGpu) {
    gpuEngine = engine;
    cpuEngine = wasm.Engine.cpu();
  } else {
    cpuEngine = engine;
  }
  // The engine names an adapter that reports no name "unknown adapter" (DeviceInfo::from_device);
  // the browser's own GPUAdapterInfo may still say what it is (google swiftshader).
  const reported = info.name === 'unknown adapter' ? '' : info.name;
  adapterName = reported || (adapter ? browserAdapterName(adapter) : '') || info.name || info.backend;
  $('adapter').textContent = info.summary.replace(/^adapter: *$/m, (line) => `${line}${adapterName}`);
  $('adapter').dataset.state = isGpu ? 'gpu' : 'cpu';
  $('adapter').dataset.name = adapterName;
  $('adapter').dataset.backend = info.backend;
  $('adapter-name').textContent = `${adapterName}${isGpu ? '' : ' (CPU reference)'}`;
  describeAdapter(info, adapter);
  choosePath();

  renderCases();
  if (!isGpu) $('parity-summary').textContent = 'needs WebGPU (it compares the GPU with the CPU reference)';
  $('default-url').textContent = DEFAULT_MODELS.join(' or ');
  syncButtons();
  await guarded('GPT-2 default model', 'gpt2', loadDefault, 'load-default')();
}

// The page could not start for want of a build or a server: said at the top.
class SetupError extends Error {
  constructor(message, cause) {
    super(message);
    this.cause = cause;
  }
}

// wgpu reports the GPUAdapterInfo description as the name, which browsers often leave empty;
// the vendor and architecture they do report name the adapter (e.g. google swiftshader).
function browserAdapterName(adapter) {
  const i = adapter.info;
  if (!i) return 'unknown WebGPU adapter';
  return [i.vendor, i.architecture, i.device, i.description].filter((p) => p).join(' ') || 'unnamed WebGPU adapter';
}

// The adapter's class in one sentence at the top of the adapter panel and in the banner:
// a GPU, a CPU fallback adapter (GPUAdapterInfo.isFallbackAdapter, or a software rasteriser
// by name), or the CPU reference; on a fallback adapter the training panel gets lighter
// defaults.
function describeAdapter(info, adapter) {
  const line = $('adapter-class');
  const software = /swiftshader|llvmpipe|lavapipe|softpipe|warp|basic render/i;
  fallback = isGpu && (!!(adapter && (adapter.info?.isFallbackAdapter || adapter.isFallbackAdapter))
    || software.test(adapterName) || info.deviceType === 'Cpu');
  if (!isGpu) {
    line.textContent = 'No WebGPU adapter: every op runs on the CPU reference compiled into the page, so GPT-2 ' +
      'and training run on the processor, and the parity suite (which compares the GPU with it) cannot run.';
    line.dataset.fallback = 'cpu';
  } else if (fallback) {
    line.textContent = `${adapterName} is a CPU fallback adapter: WebGPU runs on the processor instead of a ` +
      'graphics card, slower there than the CPU reference compiled into the page, so GPT-2 and training run on ' +
      'that reference by default; the parity suite runs on WebGPU.';
    line.dataset.fallback = 'yes';
    $('webgpu').textContent = `WebGPU is available, on ${adapterName}: a CPU fallback adapter, so GPT-2 and ` +
      'training run on the faster CPU reference (the GPT-2 panel has a switch).';
    lighterTraining();
  } else {
    line.textContent = `${adapterName} is a GPU adapter (not a CPU fallback): the kernels run on the graphics card, ` +
      'the fast path.';
    line.dataset.fallback = 'no';
    $('webgpu').textContent = `WebGPU is available, on ${adapterName}.`;
  }
  if (!isGpu) lighterTraining();
  if (!isGpu || fallback) lighterFinetune();
}

// Fewer fine-tune steps where a step takes seconds, said beside the control.
function lighterFinetune() {
  const gpu = $('finetune-steps').value;
  $('finetune-steps').value = FALLBACK_FINETUNE_STEPS;
  $('finetune-defaults').textContent = `${FALLBACK_FINETUNE_STEPS} fine-tune steps by default without a GPU ` +
    `(a step of the shipped model takes seconds on the processor; a GPU starts at ${gpu}).`;
}

// Where GPT-2 and training run: WebGPU on a GPU; the CPU reference without an adapter or on a
// software fallback adapter (there measured several times faster: first token 0.2-0.3 s
// against 5-8 s on SwiftShader). The switch in the GPT-2 panel overrides it.
function choosePath() {
  const box = $('use-webgpu');
  box.checked = isGpu && !fallback;
  engine = box.checked ? gpuEngine : cpuEngine;
  describePath();
}

function describePath() {
  const onGpu = engine === gpuEngine && gpuEngine !== null;
  $('path-note').textContent = !isGpu ? 'No WebGPU adapter: GPT-2 and training run on the CPU reference.'
    : onGpu ? `GPT-2 and training run on ${adapterName}${fallback ? ' (slower than the CPU reference here)' : ''}.`
      : `GPT-2 and training run on the CPU reference, faster than ${adapterName} here; the parity suite runs on WebGPU.`;
  $('path-note').dataset.path = onGpu ? 'webgpu' : 'cpu';
}

// The switch: moves GPT-2 and training to the other engine, reloading the model there.
async function switchPath() {
  const box = $('use-webgpu');
  const want = box.checked && gpuEngine ? gpuEngine : cpuEngine;
  if (want === engine) return;
  const previous = engine;
  engine = want;
  describePath();
  if (!source) return;
  try {
    await asJob('load', () => load(source.name, source.url, source.configJson, source.weights));
  } catch (err) {
    engine = previous;
    box.checked = previous === gpuEngine;
    describePath();
    throw err;
  }
}

function lighterTraining() {
  const gpu = { width: $('train-width').value, batch: $('train-batch').value, steps: $('train-steps').value };
  $('train-width').value = FALLBACK_TRAINING.width;
  $('train-batch').value = FALLBACK_TRAINING.batch;
  $('train-steps').value = FALLBACK_TRAINING.steps;
  $('train-defaults').textContent = `Lighter settings on this adapter, so that training ends in a few minutes: width ` +
    `${FALLBACK_TRAINING.width}, batch ${FALLBACK_TRAINING.batch}, ${FALLBACK_TRAINING.steps} steps (on a GPU the page ` +
    `starts at ${gpu.width}, ${gpu.batch} and ${gpu.steps}).`;
}

// ---- parity -----------------------------------------------------------------------------

function renderCases() {
  const body = $('parity').tBodies[0];
  body.replaceChildren();
  const cases = (gpuEngine || engine).parityCases();
  // The gradient rows hold the tape to finite differences and the CPU tape, not to the f64
  // reference, so the summary counts them apart.
  const gradients = cases.filter((c) => c.suite === 'gradient').length;
  $('parity-summary').textContent = `${cases.length - gradients} cases against the f64 CPU reference and `
    + `${gradients} gradient checks: not run yet`;
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
  await asJob('parity', async () => {
    const summary = $('parity-summary');
    summary.dataset.state = 'running';
    const rows = $('parity').tBodies[0].rows;
    let passed = 0;
    let failed = 0;
    try {
      renderCases();
      for (let i = 0; i < rows.length; i++) {
        const t0 = performance.now();
        const r = await gpuEngine.runParityCase(i);
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
    }
  });
}

// ---- fetching ---------------------------------------------------------------------------

// A byte count a reader can tell from zero: bytes, KiB or MiB.
function size(n) {
  if (n < 1024) return `${n} bytes`;
  if (n < 1048576) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1048576).toFixed(1)} MiB`;
}

// A progress reporter onto `bar` and `text`: (loaded, total bytes, label).
function progressTo(bar, text) {
  return (loaded, total, label) => {
    bar.max = total || 1;
    bar.value = total ? loaded : 0;
    text.textContent = total ? `${label}: ${size(loaded)} of ${size(total)}` : `${label}: ${size(loaded)}`;
  };
}

// Empties the GPT-2 panel's progress line: after a rejected file it would describe a load
// that did not happen.
function clearProgress() {
  $('fetch-progress').value = 0;
  $('fetch-text').textContent = '';
}
const gpt2Progress = progressTo($('fetch-progress'), $('fetch-text'));

// The body of `url` as bytes, reporting progress to `onProgress` as chunks arrive.
async function fetchBytes(url, onProgress = gpt2Progress) {
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
    onProgress(loaded, total, url.split('/').pop());
  }
  const bytes = new Uint8Array(loaded);
  let at = 0;
  for (const c of chunks) { bytes.set(c, at); at += c.length; }
  return bytes;
}

async function fetchText(url, onProgress) {
  return new TextDecoder().decode(await fetchBytes(url, onProgress));
}

// ---- GPT-2 ------------------------------------------------------------------------------

// A GPT-2 config.json's fields the page uses, or an InputError naming the file.
function parseConfig(configJson) {
  let c;
  try {
    c = JSON.parse(configJson);
  } catch (err) {
    throw new InputError(`config.json is not JSON: ${err.message}`);
  }
  if (!c || typeof c !== 'object') throw new InputError('config.json does not hold a JSON object');
  return c;
}

// Parameters of a GPT-2 of `config`: embeddings, blocks (attention 4C^2 + 4C, MLP 8C^2 + 5C,
// two layer norms 4C), final layer norm, and an output matrix unless tied to wte.
function parameterCount(c) {
  const C = c.n_embd; const L = c.n_layer; const V = c.vocab_size; const P = c.n_positions ?? c.n_ctx;
  const inner = c.n_inner || 4 * C;
  const block = 4 * C * C + 4 * C + 2 * C * inner + inner + C + 4 * C;
  return V * C + P * C + L * block + 2 * C + (c.tie_word_embeddings === false ? V * C : 0);
}

function formatCount(n) {
  if (!Number.isFinite(n) || n <= 0) return '';
  const [d, unit] = n >= 1e9 ? [1e9, 'B'] : n >= 1e6 ? [1e6, 'M'] : [1e3, 'K'];
  const v = n / d;
  return `${v < 10 ? v.toFixed(1).replace(/\.0$/, '') : Math.round(v)}${unit}`;
}

// The model in one sentence: its name, size and (from the config's _comment, when it says)
// what it was trained on.
function aboutModel(name, c) {
  const params = formatCount(parameterCount(c));
  const comment = String(c._comment || '');
  const trained = /trained on ([^(;.]+)/i.exec(comment);
  let what = '';
  if (trained) what = ` trained on ${trained[1].trim()}`;
  else if (/untrained|random weights/i.test(comment)) what = ' with random weights (a test model: it writes noise)';
  return `The model, ${name}, is a ${params ? `${params}-parameter ` : ''}GPT-2${what}: it continues your prompt ` +
    'one token (a word or a piece of one) at a time.';
}

// The positions of the model's context.
function contextOf(c) {
  return Number(c.n_positions ?? c.n_ctx ?? 1024);
}

// Loads a model with its weights in the dtype the Weights control picks ('' = as stored); on
// failure the previous model (if any) stays loaded and usable. The source is kept so that a
// change of dtype reloads it.
async function load(name, url, configJson, weights) {
  const config = parseConfig(configJson);
  const label = $('model-name');
  const previous = label.textContent;
  const dtype = $('gpt2-dtype').value;
  label.textContent = `${name} (loading...)`;
  let loaded;
  try {
    loaded = await engine.loadGpt2(configJson, weights, dtype);
  } catch (err) {
    label.textContent = previous;
    clearProgress();
    throw err;
  }
  // A page streams per token, latency first: one decode step a submission, each token shown
  // as it is read back (the library's default batches 8 steps a submission, for throughput).
  if (typeof loaded.setChunk === 'function') loaded.setChunk(1);
  if (model) model.free();
  model = loaded;
  source = { name, url, config, configJson, weights };
  label.textContent = `${name}: ${model.describe()}`;
  label.dataset.url = url;
  label.dataset.name = name;
  label.dataset.dtype = dtype;
  $('model-about').textContent = aboutModel(name, config);
  $('n-tokens').max = String(contextOf(config) - 1);
  checkTopK();
}

// The Weights control: reloads the current model in the chosen dtype.
async function reloadDtype() {
  if (!source) return;
  try {
    await asJob('load', () => load(source.name, source.url, source.configJson, source.weights));
  } catch (err) {
    $('gpt2-dtype').value = $('model-name').dataset.dtype || '';
    throw err;
  }
}

// The last folder name of a URL (`.../models/shakespeare/` -> shakespeare).
function folderName(url) {
  return new URL(url).pathname.split('/').filter((p) => p).pop() || url;
}

async function loadFolder(url) {
  const base = url.endsWith('/') ? url : `${url}/`;
  await asJob('load', async () => {
    const config = await fetchText(`${base}config.json`);
    const weights = await fetchBytes(`${base}model.safetensors`);
    await load(folderName(base), base, config, weights);
  });
}

async function loadDefault() {
  for (const url of DEFAULT_MODELS) {
    const head = await fetch(`${url}config.json`, { method: 'HEAD' }).catch(() => null);
    if (head && head.ok) return loadFolder(url);
  }
  throw new Error(`no default model found at ${DEFAULT_MODELS.join(' or ')}`);
}

// A file-loaded model's name: the config's _name_or_path, else the folder the files were
// picked from, else its shape (never "model.safetensors").
function filesName(configFile, config) {
  const named = String(config._name_or_path || '').split('/').filter((p) => p).pop();
  if (named) return named;
  const folder = (configFile.webkitRelativePath || '').split('/').slice(-2, -1)[0];
  if (folder) return folder;
  return `gpt2 ${config.n_layer}-layer ${config.n_embd}-wide (from files)`;
}

async function loadFiles() {
  const input = $('model-files');
  try {
    const files = [...input.files];
    const configFile = files.find((f) => f.name.endsWith('.json'));
    const weights = files.find((f) => f.name.endsWith('.safetensors'));
    if (!configFile || !weights) {
      throw new InputError('pick both config.json and model.safetensors (one file dialog, select both)', 'model-files');
    }
    await asJob('load', async () => {
      gpt2Progress(0, weights.size, weights.name);
      const bytes = new Uint8Array(await weights.arrayBuffer());
      gpt2Progress(bytes.length, bytes.length, weights.name);
      const configJson = await configFile.text();
      await load(filesName(configFile, parseConfig(configJson)), '', configJson, bytes);
    });
  } catch (err) {
    // The picker must not name files that are not the loaded model.
    input.value = '';
    throw err;
  }
}

async function loadUrl() {
  const url = $('model-url').value.trim();
  if (!url) throw new InputError('enter the URL of a folder holding config.json and model.safetensors', 'model-url');
  try {
    await loadFolder(new URL(url, location.href).href);
  } catch (err) {
    clearProgress();
    throw err;
  }
}

// A whole number read from input `id`, or an InputError naming `what`, the range it takes
// and the value it got. The range is the input's own min and max attributes (index.html), so
// the page and its controls state it once; `max` overrides the attribute.
function wholeNumber(id, what, max) {
  const input = $(id);
  const raw = input.value.trim();
  const v = Number(raw);
  const min = Number(input.min || 0);
  const top = max ?? (input.max === '' ? Infinity : Number(input.max));
  const got = raw === '' ? ' (it is empty)' : ` (it is ${raw})`;
  if (raw === '' || !Number.isInteger(v) || v < min) {
    throw new InputError(`${what} must be a whole number of at least ${min}${got}`, id);
  }
  if (v > top) throw new InputError(`${what} must be at most ${top}${got}`, id);
  return v;
}

// The sampling the controls ask for: [temperature, topK, seed], or undefined (greedy).
function sampling() {
  if ($('greedy').checked) return [undefined, undefined, undefined];
  const raw = $('temperature').value.trim();
  const t = Number(raw);
  const [lo, hi] = [Number($('temperature').min), Number($('temperature').max)];
  if (raw === '' || !(t >= lo && t <= hi)) {
    throw new InputError(`Temperature must be a number from ${lo} to ${hi} (it is ${raw || 'empty'}; or tick greedy)`,
      'temperature');
  }
  const k = wholeNumber('top-k', 'Top-k');
  const seed = wholeNumber('seed', 'Seed');
  return [t, k, seed];
}

// Warns, beside the controls, when top-k is outside what the device sampler takes.
function checkTopK() {
  const note = $('topk-note');
  const k = Number($('top-k').value);
  const vocab = source ? source.config.vocab_size : 50257;
  const outside = !$('greedy').checked && Number.isInteger(k) && k >= 0 && (k < 1 || k > DEVICE_TOP_K_MAX);
  note.dataset.warn = outside ? 'top-k' : '';
  note.textContent = outside
    ? `Top-k ${k}${k === 0 ? ` means all ${vocab.toLocaleString('en')} tokens; it` : ''} is outside 1 to ` +
      `${DEVICE_TOP_K_MAX}, which the fast sampler on the device takes: generation uses a slower path (about 10x).`
    : '';
}

function syncSampling() {
  const greedy = $('greedy').checked;
  for (const id of ['temperature', 'top-k', 'seed']) $(id).disabled = greedy;
  checkTopK();
}

// The generation's phase under the prompt: what runs before the first token, then tokens
// written, then done; data-phases lists the phases this run went through.
function phase(name, text) {
  const el = $('gen-status');
  el.dataset.phase = name;
  el.dataset.phases = el.dataset.phases ? `${el.dataset.phases},${name}` : name;
  el.textContent = text;
}

// The engine's length error gives the prompt's token count: `prompt + tokens` is P + N.
function promptLengthFrom(err) {
  const m = /`prompt \+ tokens` is (\d+) \+ (\d+), expected 1..=(\d+)/.exec(messageOf(err));
  return m ? { prompt: Number(m[1]), limit: Number(m[3]) } : null;
}

async function generate() {
  if (!model) throw new InputError('load a model first');
  const note = $('gen-note');
  note.textContent = '';
  const [temperature, topK, seed] = sampling();
  // Beyond the context the count is capped below (said in a note), not refused.
  let n = wholeNumber('n-tokens', 'Tokens (how many new tokens to write)', Infinity);
  const context = contextOf(source.config);
  // The prompt takes at least one of the context's positions.
  if (n > context - 1) {
    n = context - 1;
    $('n-tokens').value = n;
    note.textContent = `Tokens capped at ${n}: the model's context holds ${context} tokens, prompt included.`;
  }
  await asJob('generate', async () => {
    try {
      for (;;) {
        try {
          return await generateOnce(n, temperature, topK, seed);
        } catch (err) {
          const len = promptLengthFrom(err);
          if (!len) throw err;
          if (len.prompt >= len.limit) {
            throw new InputError(`the prompt is ${len.prompt} tokens long and the model's context holds ` +
              `${len.limit}: shorten it`, 'prompt');
          }
          if (n <= len.limit - len.prompt) throw err;
          // The engine counted the prompt's tokens: run again with what fits.
          n = len.limit - len.prompt;
          $('n-tokens').value = n;
          note.textContent = `Tokens capped at ${n}: the prompt takes ${len.prompt} of the model's ${len.limit} positions.`;
        }
      }
    } catch (err) {
      $('output').dataset.state = 'error';
      throw err;
    }
  });
}

// Where GPT-2 and training run now, in words.
function pathName() {
  return engine === gpuEngine && gpuEngine !== null ? adapterName : 'the CPU reference';
}

// The next macrotask: between the steps of a loop whose promises settle at once (the CPU
// reference) the page repaints and hears a Stop click.
const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

async function generateOnce(n, temperature, topK, seed) {
  const out = $('output');
  const prompt = $('prompt').value;
  const status = $('gen-status');
  out.textContent = prompt;
  out.dataset.state = 'running';
  delete out.dataset.stoppedAt;
  status.dataset.phases = '';
  $('ttft').textContent = '-';
  $('tps').textContent = '-';
  $('run-model').textContent = `: ${n} tokens from ${source.name} on ${pathName()}`;
  const t0 = performance.now();
  // Before the first token each run builds its plans (compiling the shaders a new model or
  // prompt length needs) and reads the whole prompt: 8-32 s on a CPU fallback adapter.
  const before = 'preparing the shaders and reading the prompt';
  phase('prefill', `${before}...`);
  const tick = setInterval(() => {
    if (status.dataset.phase === 'prefill') {
      status.textContent = `${before}... ${((performance.now() - t0) / 1000).toFixed(0)} s`;
    }
  }, 500);
  let first = 0;
  let last = 0;
  let count = 0;
  const rate = () => ((count - 1) * 1000) / (last - first);
  try {
    const ids = await model.generate(prompt, n, (id, text) => {
      last = performance.now();
      if (count === 0) {
        first = last;
        $('ttft').textContent = `${(first - t0).toFixed(0)} ms`;
        phase('decode', `writing: 1/${n} tokens`);
      }
      count++;
      if (count > 1) $('tps').textContent = rate().toFixed(1);
      status.textContent = `writing: ${count}/${n} tokens`;
      // Appended, not rewritten: a screen reader hears the new token only (aria-relevant).
      if (text) out.append(text);
    }, temperature, topK, seed);
    $('ids').dataset.ids = JSON.stringify([...ids]);
    const secs = ((performance.now() - t0) / 1000).toFixed(1);
    if (ids.length < n) {
      out.dataset.stoppedAt = String(ids.length);
      out.dataset.state = 'stopped';
      phase('stopped', `stopped after ${ids.length} of ${n} tokens, in ${secs} s`);
      $('run-model').textContent = `: ${ids.length} of ${n} tokens (stopped) from ${source.name} on ${pathName()}`;
    } else {
      out.dataset.state = 'done';
      phase('done', `done: ${count} tokens in ${secs} s`);
    }
  } finally {
    clearInterval(tick);
  }
}

// ---- GPT-2 fine-tuning -------------------------------------------------------------------

// Fine-tunes the loaded checkpoint (its file, as loaded) on the first tokens of the shipped
// text through the library's autograd tape (Gpt2Tuner: forward, backward, Adam, one promise a
// step), then makes the tuned weights the model Generate uses. data-first-loss /
// data-last-loss hold the first and the last step's loss.
const FINETUNE_CORPUS = 4096;

// The weight of the past in the losses' exponential moving average (the chart's bold line,
// the fine-tune's "smoothed"): batch-to-batch jumps average out over about ten steps.
const SMOOTHING = 0.9;

function formatSeconds(s) {
  return s < 90 ? `${Math.max(1, Math.round(s))} s` : `${Math.round(s / 60)} min`;
}
async function finetune() {
  if (!model || !source) throw new InputError('load a model first', 'finetune');
  const steps = wholeNumber('finetune-steps', 'Fine-tune steps');
  const status = $('finetune-status');
  await asJob('finetune', async () => {
    status.dataset.state = 'running';
    delete status.dataset.stoppedAt;
    status.textContent = 'reading the training text...';
    if (trainText === null) trainText = await fetchText(TRAIN_TEXT, gpt2Progress);
    status.textContent = 'preparing the parameters (f32) and the text...';
    await nextTask();
    const tuner = engine.gpt2Tuner(source.configJson, source.weights, trainText, FINETUNE_CORPUS);
    try {
      const losses = [];
      const t0 = performance.now();
      let smooth = 0;
      for (let i = 0; i < steps && !stopAsked; i++) {
        losses.push(await tuner.step());
        smooth = i === 0 ? losses[0] : SMOOTHING * smooth + (1 - SMOOTHING) * losses[i];
        const ms = (performance.now() - t0) / (i + 1);
        const left = i + 1 < steps ? `, about ${formatSeconds((ms * (steps - i - 1)) / 1000)} left` : '';
        status.textContent = `step ${i + 1}/${steps}: loss ${losses[i].toFixed(3)}, smoothed ${smooth.toFixed(3)} ` +
          `(first ${losses[0].toFixed(3)}), ${ms.toFixed(0)} ms a step${left}; ${tuner.describe()}`;
        status.dataset.estimate = left ? String(Math.round((ms * (steps - i - 1)) / 1000)) : '0';
        await nextTask();
      }
      if (losses.length < steps) {
        status.dataset.stoppedAt = String(losses.length);
        status.textContent = `stopped at step ${losses.length} of ${steps}` +
          (losses.length ? `: loss ${losses[losses.length - 1].toFixed(3)}` : '');
      }
      if (losses.length === 0) {
        status.dataset.state = 'stopped';
        return;
      }
      const tuned = await tuner.model();
      if (typeof tuned.setChunk === 'function') tuned.setChunk(1);
      if (model) model.free();
      model = tuned;
      $('model-name').textContent = `${source.name}, fine-tuned ${losses.length} steps: ${model.describe()}`;
      status.dataset.firstLoss = String(losses[0]);
      status.dataset.lastLoss = String(losses[losses.length - 1]);
      status.dataset.state = losses.length < steps ? 'stopped' : 'done';
      status.textContent += ' - Generate now writes with the tuned weights (Load default restores them).';
    } catch (err) {
      status.dataset.state = 'error';
      throw err;
    } finally {
      tuner.free();
    }
  });
}

// ---- minGRU training ---------------------------------------------------------------------

const TRAIN_TEXT = new URL('../assets/text/shakespeare.txt', import.meta.url).href;

// The live loss chart: one polyline vertex per step, axes rescaled as the losses come in. The
// loss axis spans at least 0.1 so that its five labels differ (one point, a flat stretch).
const CHART = { left: 48, top: 10, width: 542, height: 210 };
function drawLosses(losses, steps) {
  const svg = $('loss-chart');
  const grid = $('loss-grid');
  grid.replaceChildren();
  svg.dataset.points = String(losses.length);
  if (losses.length === 0) {
    $('loss-line').setAttribute('points', '');
    $('loss-smooth').setAttribute('points', '');
    return;
  }
  let hi = Math.max(...losses);
  let lo = Math.min(...losses);
  if (hi - lo < 0.1) {
    const mid = (hi + lo) / 2;
    [lo, hi] = [mid - 0.05, mid + 0.05];
  }
  const span = hi - lo;
  const digits = Math.max(2, Math.ceil(-Math.log10(span / 4)));
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
    add('text', { x: CHART.left - 4, y: y(v) + 4, 'text-anchor': 'end', class: 'y-label' }, v.toFixed(digits));
  }
  for (const s of new Set([0, steps - 1])) {
    add('text', { x: x(s), y: CHART.top + CHART.height + 16, 'text-anchor': 'middle', class: 'x-label' }, String(s + 1));
  }
  const line = (vs) => vs.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  $('loss-line').setAttribute('points', line(losses));
  $('loss-smooth').setAttribute('points', line(movingAverage(losses)));
}

// The exponential moving average of `xs` (SMOOTHING), started at the first value.
function movingAverage(xs) {
  const out = [];
  for (const v of xs) out.push(out.length === 0 ? v : SMOOTHING * out[out.length - 1] + (1 - SMOOTHING) * v);
  return out;
}

let trainText = null;

// What loss to expect, from the text: random guessing over its characters, and guessing by
// how often each occurs (its character entropy), both in nats per character.
function lossExpectation(text, vocab) {
  const counts = new Map();
  let n = 0;
  for (const ch of text) { counts.set(ch, (counts.get(ch) || 0) + 1); n++; }
  let entropy = 0;
  for (const c of counts.values()) entropy -= (c / n) * Math.log(c / n);
  const v = vocab || counts.size;
  return `The loss is the cross-entropy in nats per character: random guessing over the text's ${v} characters ` +
    `scores ln ${v} = ${Math.log(v).toFixed(2)}, guessing by how often each character occurs ${entropy.toFixed(2)}; ` +
    'lower than that, the model has learned which characters follow which.';
}

// Trains a fresh model for the asked number of steps, one promise per step (the page repaints
// between them), then samples 200 characters; Stop ends it early, and the sample is still
// written. data-first-loss / data-last-loss hold the means of the first and last tenth of the
// steps' losses.
async function train() {
  const steps = wholeNumber('train-steps', 'Steps');
  const width = wholeNumber('train-width', 'Width');
  const batch = wholeNumber('train-batch', 'Batch');
  const planes = Number((/^givens:(\d+)$/.exec($('mixer').value) || [])[1]);
  if (planes && width % planes !== 0) {
    throw new InputError(`Width must be a multiple of ${planes} for GivensMinGRU k = ${planes} (it is ${width})`,
      'train-width');
  }
  await asJob('train', async () => {
    const status = $('train-status');
    const sample = $('train-sample');
    const bar = $('train-progress');
    status.dataset.state = 'running';
    delete status.dataset.stoppedAt;
    sample.dataset.state = 'idle';
    sample.textContent = '';
    let trainer = null;
    try {
      if (!trainText) {
        trainText = await fetchText(TRAIN_TEXT, progressTo(bar, status));
        status.textContent = `the training text: ${trainText.length.toLocaleString('en')} characters`;
      }
      trainer = engine.trainer(trainText, $('mixer').value, width, batch, 1);
      const about = trainer.describe();
      $('train-model').textContent = about;
      const vocab = Number((/vocabulary (\d+)/.exec(about) || [])[1]) || 0;
      $('train-expect').textContent = lossExpectation(trainText, vocab);
      const losses = [];
      bar.max = steps;
      bar.value = 0;
      drawLosses(losses, steps);
      status.textContent = 'step 1 (the first step compiles the shaders)...';
      // The rate counts from the end of the first step: that one compiles the shaders.
      let t1 = 0;
      for (let i = 0; i < steps && !stopAsked; i++) {
        if (i > 0) await nextTask();
        losses.push(await trainer.step());
        drawLosses(losses, steps);
        bar.value = i + 1;
        const now = performance.now();
        if (i === 0) t1 = now;
        const rate = i === 0 ? 'the first step compiles the shaders' : `${((i * 1000) / (now - t1)).toFixed(1)} steps/s`;
        status.textContent = `step ${i + 1}/${steps}: loss ${losses[i].toFixed(3)} (${rate})`;
      }
      const tenth = Math.max(1, Math.floor(losses.length / 10));
      const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
      const first = mean(losses.slice(0, tenth));
      const last = mean(losses.slice(-tenth));
      status.dataset.firstLoss = String(first);
      status.dataset.lastLoss = String(last);
      if (losses.length < steps) {
        status.textContent = `stopped at step ${losses.length} of ${steps}: loss ${losses[losses.length - 1].toFixed(3)}`;
        status.dataset.stoppedAt = String(losses.length);
        status.dataset.state = 'stopped';
      } else {
        status.textContent += ` - mean loss ${first.toFixed(3)} over the first ${tenth} steps, ${last.toFixed(3)} over the last ${tenth}`;
        status.dataset.state = 'done';
      }
      sample.dataset.state = 'running';
      sample.textContent = 'writing a 200-character sample...';
      status.dataset.sampling = '1';
      await nextTask();
      sample.textContent = 'ROMEO:\n' + await trainer.sample('ROMEO:\n', 200, 0.8);
      delete status.dataset.sampling;
      sample.dataset.state = 'done';
    } catch (err) {
      status.dataset.state = 'error';
      throw err;
    } finally {
      if (trainer) trainer.free();
    }
  });
}

// Stop: the running job ends after its step (training, fine-tuning) or token (generation).
function stop() {
  stopAsked = true;
  if (job === 'generate' && model) model.stop();
  const status = { train: 'train-status', finetune: 'finetune-status', generate: 'gen-status' }[job];
  if (status) $(status).textContent += ' - stopping after this step...';
  syncButtons();
}

$('run-parity').addEventListener('click', guarded('parity', 'parity', runParity, 'run-parity'));
$('train').addEventListener('click', guarded('minGRU training', 'train', train, 'train'));
for (const id of ['train-stop', 'gen-stop', 'finetune-stop']) $(id).addEventListener('click', stop);
$('load-default').addEventListener('click', guarded('GPT-2 default model', 'gpt2', loadDefault, 'load-default'));
$('load-url').addEventListener('click', guarded('GPT-2 from URL', 'gpt2', loadUrl, 'model-url'));
$('model-files').addEventListener('change', guarded('GPT-2 from files', 'gpt2', loadFiles, 'model-files'));
$('generate').addEventListener('click', guarded('GPT-2 generate', 'gpt2', generate, 'generate'));
$('finetune').addEventListener('click', guarded('GPT-2 fine-tune', 'gpt2', finetune, 'finetune'));
$('use-webgpu').addEventListener('change', guarded('GPT-2 on WebGPU', 'gpt2', switchPath, 'use-webgpu'));
$('greedy').addEventListener('change', syncSampling);
$('top-k').addEventListener('input', checkTopK);
$('gpt2-dtype').addEventListener('change', guarded('GPT-2 weights dtype', 'gpt2', reloadDtype, 'gpt2-dtype'));
$('prompt').addEventListener('keydown', (e) => { if (e.key === 'Enter') $('generate').click(); });
$('top-k').dataset.deviceMax = String(DEVICE_TOP_K_MAX);

// A failure to start is said at the top: what to build or serve, or what went wrong.
async function started() {
  try {
    await start();
  } catch (err) {
    if (err instanceof SetupError) {
      report('start', err.cause ?? err, null);
      $('setup').textContent = err.message;
      $('setup').dataset.state = 'setup';
    } else {
      report('start', err, 'page');
    }
  }
}
started().finally(() => { document.body.dataset.ready = '1'; });
