// Browser test of the engine's page: serves the repository root on 127.0.0.1, opens
// web/index.html in Debian's headless Chromium with WebGPU on SwiftShader (through
// playwright-core), and checks that
//   - the page leads with generation: the GPT-2 panel comes first, the parity suite is a
//     one-line summary over a collapsed table,
//   - the page reports a WebGPU adapter and says, in a sentence, that SwiftShader is a CPU
//     fallback adapter (with lighter training defaults there),
//   - every row of the in-browser parity suite passes,
//   - GPT-2 fine-tunes in the page (a few steps on the tiny checkpoint): the loss falls;
//   - GPT-2 opens on the default model and, greedy, generates the same token ids as the native
//     CPU reference (`cargo run --release --example gpt2 -- PROMPT --greedy --cpu`) for the
//     same prompt and model; sampled, the same seed repeats its text and another seed gives
//     other text; it loads a model picked as local files, as stored (F16) by default, and the
//     Weights control reloads it in bf16 with greedy ids equal to the reference's in bf16,
//   - a character-level minGRU model (GivensMinGRU, angle-fused, width 16, batches of 4 rows:
//     SwiftShader is slow) trains in the page: its loss falls over 30 steps, the live chart
//     plots a point per step, and it writes a sample,
//   - generation shows its phases (the prompt read before the first token, then tokens
//     written), Tokens -5 and 0 are refused in plain words, Tokens 1024 is capped to the
//     context minus the prompt, top-k outside 1..=DEVICE_TOP_K_MAX (the page's copy equals
//     engine/generate/device.rs) is warned; a file-loaded model is named after its config,
//   - while training runs, Generate and Run parity are disabled and say what is busy; Stop
//     says at which step it stopped; a one-point chart's axis labels differ; the steps/s
//     figure is positive; the loss to expect (ln of the vocabulary) is said,
//   - bad input (a missing model URL, a file that is not a checkpoint, picked by URL and as
//     files) gives a message in the GPT-2 panel's live region, cleared by the next success,
//     and the file picker is reset; a browser without WebGPU, and one whose WebGPU gives no
//     adapter, say so and run on the CPU reference with the buttons that can work enabled;
//     no uncaught exception,
//   - before the build (web/pkg missing) and from file:// the page says what to do at the top,
//   - at phone width (390 px) nothing overflows sideways, with the default model and with a
//     file-loaded one; the chart's labels render at 11 px or more, checkboxes are 24 px
//     targets, progress bars are named,
//   - on SwiftShader (a fallback adapter) GPT-2 and training default to the CPU reference,
//     with a switch to WebGPU, and the parity suite runs on WebGPU; the first token and 40
//     tokens on that default path are timed (printed),
//   - Stop ends generation, fine-tuning and training within one token or step of the click,
//     a fine-tune says how long is left after its first step, the chart draws a smoothed line,
//     tokens are appended to the live region (not rewritten),
//   - errors appear within 100 px of the control that caused them, at desktop and phone
//     width, tied to it (aria-invalid, aria-describedby) with the focus moved there; the
//     page's limits ("at most 512") are checked before the engine; the last run's figures and
//     notes reset on a failure; every disabled button says why.
// Saves web/test/out/page.png, and the layout at desktop and phone width to
// web/test/screenshots/{desktop,phone}.png (committed), prints one line per check and
// `N passed, M failed`, and exits non-zero on any failure.
//
//   node web/test/browser_test.mjs            (after web/build.sh; npm ci in web/test)
//
// Environment: CHROMIUM (default /usr/bin/chromium), TIMEOUT_S (default 900).

import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const outDir = path.join(here, 'out');
const shotDir = path.join(here, 'screenshots');
const timeoutMs = Number(process.env.TIMEOUT_S || 900) * 1000;
const GPT2_PROMPT = 'Alan Turing theorized that computers would one day become';
const GPT2_TOKENS = 8;

// Flags: headless Chromium on Linux exposes SwiftShader's WebGPU adapter (a fallback
// adapter, Vulkan on the CPU) with --enable-unsafe-webgpu alone; --use-webgpu-adapter asks for
// it so that a machine with a real GPU runs the same adapter as CI (unverified: no GPU here). The rest keeps the browser off
// the network and out of the user's profile.
const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--enable-unsafe-webgpu',
  '--use-webgpu-adapter=swiftshader',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

const started = Date.now();
const results = [];
function check(name, ok, detail = '') {
  results.push({ name, ok });
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? ` - ${detail}` : ''}`);
}

// ---- static server ---------------------------------------------------------------------

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
};

// A folder that looks like a model but is not one: config.json parses, the weights do not.
const BAD_MODEL = {
  '/__test__/bad-model/config.json': '{"n_layer": 2, "n_head": 2, "n_embd": 64, "n_positions": 128, "vocab_size": 50257}',
  '/__test__/bad-model/model.safetensors': 'this is not a safetensors file, just text',
};

function serve() {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const pathname = decodeURIComponent(url.pathname);
    if (pathname in BAD_MODEL) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(BAD_MODEL[pathname]);
      return;
    }
    let file = path.join(root, pathname);
    if (!file.startsWith(root)) {
      res.writeHead(403).end();
      return;
    }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    fs.stat(file, (err, st) => {
      if (err || !st.isFile()) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      res.writeHead(200, {
        'content-type': MIME[path.extname(file)] || 'application/octet-stream',
        'content-length': st.size,
        'cache-control': 'no-store',
      });
      if (req.method === 'HEAD') res.end();
      else fs.createReadStream(file).pipe(res);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

// ---- the test --------------------------------------------------------------------------

async function openPage(context, url, pageErrors, initScript) {
  const page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') console.log(`  [console] ${m.text()}`);
  });
  if (initScript) await page.addInitScript(initScript);
  await page.goto(url);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 120_000 });
  return page;
}

async function errorsShown(page) {
  return page.$$eval('#errors li', (lis) => lis.map((li) => li.textContent));
}

async function main() {
  fs.mkdirSync(outDir, { recursive: true });
  if (!fs.existsSync(path.join(root, 'web', 'pkg', 'engine_web.js'))) {
    throw new Error('web/pkg/engine_web.js is missing: run web/build.sh first');
  }
  const server = await serve();
  const base = `http://127.0.0.1:${server.address().port}`;
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-web-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1200, height: 900 },
  });
  const pageErrors = [];
  let page;
  try {
    // 1. The page loads and reports its adapter.
    page = await openPage(context, `${base}/web/index.html`, pageErrors);
    const webgpu = await page.getAttribute('#webgpu', 'data-webgpu');
    check('navigator.gpu present', webgpu === 'present', webgpu);
    const order = await page.$$eval('main > section', (ss) => ss.map((s) => s.id));
    check('the page leads with generation, then training, then parity',
      order.indexOf('gpt2-panel') === 0 && order.indexOf('train-panel') === 1
      && order.indexOf('parity-panel') === 2, order.join(', '));
    check('the parity table starts collapsed behind a one-line summary',
      !(await page.$eval('#parity-details', (d) => d.open))
      && /cases/.test(await page.textContent('#parity-summary')), await page.textContent('#parity-summary'));
    const state = await page.getAttribute('#adapter', 'data-state');
    const name = await page.getAttribute('#adapter', 'data-name');
    const backend = await page.getAttribute('#adapter', 'data-backend');
    check('adapter reported', state === 'gpu' && !!name && backend === 'BrowserWebGpu',
      `${name} (${backend}, state ${state})`);
    console.log((await page.textContent('#adapter')).replace(/^/gm, '  '));
    const adapterClass = await page.textContent('#adapter-class');
    check('the adapter panel says SwiftShader is a CPU fallback adapter',
      (await page.getAttribute('#adapter-class', 'data-fallback')) === 'yes' && /CPU fallback/.test(adapterClass)
      && /fallback/.test(await page.textContent('#webgpu')), adapterClass);
    check('a CPU fallback adapter gets lighter training defaults',
      Number(await page.inputValue('#train-steps')) < 200 && Number(await page.inputValue('#train-width')) < 64,
      `${await page.inputValue('#train-width')} x ${await page.inputValue('#train-batch')}, `
      + `${await page.inputValue('#train-steps')} steps: ${await page.textContent('#train-defaults')}`);

    const pathNote = await page.getAttribute('#path-note', 'data-path');
    check('on a fallback adapter GPT-2 and training default to the CPU reference, with a switch to WebGPU',
      pathNote === 'cpu' && !(await page.isChecked('#use-webgpu')) && /CPU reference/.test(adapterClass),
      await page.textContent('#path-note'));
    await a11yChecks(page);

    // 2. The parity suite: every row passes.
    if (state === 'gpu') {
      const t0 = Date.now();
      await page.click('#run-parity');
      await page.waitForSelector('#parity-summary:is([data-state="passed"], [data-state="failed"], [data-state="error"])',
        { timeout: timeoutMs });
      const rows = await page.$$eval('#parity tbody tr', (trs) => trs.map((tr) => ({
        cells: [...tr.cells].map((td) => td.textContent),
        detail: tr.title,
      })));
      for (const r of rows) {
        const [i, suite, op, direction, shape, strategy, err, gate, ms, result] = r.cells;
        check(`parity #${i} ${suite} ${op} ${direction} ${shape} ${strategy}`, result === 'pass',
          `max|err| ${err}, gate ${gate}, ${ms} ms${result === 'pass' ? '' : `: ${r.detail}`}`);
      }
      const gradients = rows.filter((r) => r.cells[1] === 'gradient');
      check('the parity suite holds the tape\'s gradient checks, against finite differences and the CPU tape',
        gradients.length >= 100 && gradients.some((r) => /finite differences/.test(r.cells[5]))
        && gradients.some((r) => /CPU tape$/.test(r.cells[5]) && !/finite/.test(r.cells[5])),
        `${gradients.length} gradient rows`);
      check('the parity suite runs on WebGPU while GPT-2 runs on the CPU reference',
        /passed/.test(await page.textContent('#parity-summary')) && state === 'gpu'
        && (await page.getAttribute('#path-note', 'data-path')) === 'cpu', `${rows.length} rows`);
      check('parity suite completed', rows.length > 0 && rows.every((r) => r.cells[9] !== 'pending'),
        `${rows.length} rows in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${await page.textContent('#parity-summary')}`);
    }

    // 3. GPT-2.
    await gpt2Checks(page, base);
    await trainChecks(page);
    await page.screenshot({ path: path.join(outDir, 'page.png'), fullPage: true });
    await phoneOverflow(page, 'a file-loaded model');

    // 4. A browser without WebGPU: a message, the CPU reference, no exception.
    const noGpu = await openPage(context, `${base}/web/index.html`, pageErrors, () => {
      Object.defineProperty(Navigator.prototype, 'gpu', { get: () => undefined });
    });
    const missing = await noGpu.getAttribute('#webgpu', 'data-webgpu');
    const banner = await noGpu.textContent('#webgpu');
    check('no WebGPU is said on the page', missing === 'missing' && /no WebGPU/.test(banner), banner.slice(0, 60));
    check('no WebGPU runs on the CPU reference', (await noGpu.getAttribute('#adapter', 'data-state')) === 'cpu'
      && await noGpu.isDisabled('#run-parity') && !(await noGpu.isDisabled('#generate'))
      && !(await noGpu.isDisabled('#train')), await noGpu.textContent('#adapter-class'));
    await noGpu.screenshot({ path: path.join(outDir, 'no-webgpu.png') });
    await noGpu.close();

    // 5. WebGPU present but no adapter (Chromium on Linux without --enable-unsafe-webgpu): as
    // without WebGPU.
    const noAdapter = await openPage(context, `${base}/web/index.html`, pageErrors, () => {
      GPU.prototype.requestAdapter = async () => null;
    });
    const said = await noAdapter.textContent('#webgpu');
    check('no WebGPU adapter is said on the page', (await noAdapter.getAttribute('#webgpu', 'data-webgpu')) === 'no-adapter'
      && /no WebGPU adapter/.test(said) && /--enable-unsafe-webgpu/.test(said), said.slice(0, 100));
    check('no WebGPU adapter runs on the CPU reference, Generate and Train enabled',
      (await noAdapter.getAttribute('#adapter', 'data-state')) === 'cpu' && await noAdapter.isDisabled('#run-parity')
      && !(await noAdapter.isDisabled('#generate')) && !(await noAdapter.isDisabled('#train'))
      && (await noAdapter.getAttribute('#adapter-class', 'data-fallback')) === 'cpu',
      await noAdapter.textContent('#model-name'));
    check('no WebGPU adapter: fine-tuning is enabled on the CPU reference, the switch says why it is off',
      !(await noAdapter.isDisabled('#finetune')) && /no WebGPU adapter/.test(await noAdapter.getAttribute('#use-webgpu', 'title')),
      await noAdapter.getAttribute('#use-webgpu', 'title'));
    await noAdapter.close();

    // 6. Before the build (web/pkg missing) and from file://: what to do, at the top.
    const unbuilt = await context.newPage();
    await unbuilt.route('**/web/pkg/**', (r) => r.fulfill({ status: 404, body: 'not found' }));
    await unbuilt.goto(`${base}/web/index.html`);
    await unbuilt.waitForSelector('body[data-ready="1"]', { timeout: 60_000 });
    const setup = await unbuilt.textContent('#setup');
    check('before the build the page says to run web/build.sh, at the top',
      (await unbuilt.getAttribute('#setup', 'data-state')) === 'setup' && /web\/build\.sh/.test(setup)
      && await unbuilt.isVisible('#setup'), setup);
    await unbuilt.close();
    const fromFile = await context.newPage();
    await fromFile.goto(`file://${path.join(root, 'web', 'index.html')}`);
    await fromFile.waitForSelector('#setup[data-state="setup"]', { timeout: 30_000 }).catch(() => {});
    const fileSetup = await fromFile.textContent('#setup');
    check('from file:// the page says to serve it with web/serve.sh, at the top', /web\/serve\.sh/.test(fileSetup)
      && /file/.test(fileSetup), fileSetup);
    await fromFile.close();

    check('no uncaught exception', pageErrors.length === 0, pageErrors.join(' | '));
    const shown = await errorsShown(page);
    check('no unexpected message on the page', shown.every((m) => m.startsWith('expected:')) , shown.join(' | '));
  } finally {
    if (page) await page.screenshot({ path: path.join(outDir, 'page.png'), fullPage: true }).catch(() => {});
    await context.close();
    server.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

// minGRU training in the page: 30 steps of GivensMinGRU(k=8) lower the loss, then a sample.
async function trainChecks(page) {
  const t0 = Date.now();
  await page.selectOption('#mixer', 'givens:8');
  await page.fill('#train-width', '16');
  await page.fill('#train-batch', '4');
  await page.fill('#train-steps', '30');
  await page.click('#train');
  await page.waitForSelector('#train-sample:is([data-state="done"])', { timeout: timeoutMs })
    .catch(() => {});
  const state = await page.getAttribute('#train-status', 'data-state');
  const first = Number(await page.getAttribute('#train-status', 'data-first-loss'));
  const last = Number(await page.getAttribute('#train-status', 'data-last-loss'));
  check('minGRU trains in the page: the loss falls', state === 'done' && last < 0.9 * first,
    `${await page.textContent('#train-status')} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  const points = await page.$eval('#loss-line', (l) => l.getAttribute('points').trim().split(/\s+/).filter((p) => p).length);
  check('the loss chart plots a point per step', points === 30
    && (await page.getAttribute('#loss-chart', 'data-points')) === '30', `${points} points`);
  const sample = await page.textContent('#train-sample');
  check('minGRU writes a sample', (await page.getAttribute('#train-sample', 'data-state')) === 'done'
    && sample.length > 200, JSON.stringify(sample.slice(0, 80)));
  const status = await page.textContent('#train-status');
  const rate = Number((/\(([\d.]+) steps\/s\)/.exec(status) || [])[1]);
  check('training shows a positive steps/s', rate > 0, status);
  const smooth = await page.$eval('#loss-smooth', (l) => l.getAttribute('points').trim().split(/\s+/).length);
  check('the loss chart draws a smoothed line beside the raw points', smooth === 30, `${smooth} points`);
  await page.setViewportSize({ width: 390, height: 844 });
  const px = await page.$eval('#loss-grid text.y-label', (t) => parseFloat(getComputedStyle(t).fontSize)
    * document.getElementById('loss-chart').getBoundingClientRect().width / 600);
  check('at 390 px the chart\'s labels render at 11 px or more', px >= 11, `${px.toFixed(1)} px`);
  await page.setViewportSize({ width: 1200, height: 900 });
  const labels = await yLabels(page);
  check('the loss axis labels differ', new Set(labels).size === labels.length && labels.length === 5, labels.join(' '));
  const expect = await page.textContent('#train-expect');
  const vocab = Number((/vocabulary (\d+)/.exec(await page.textContent('#train-model')) || [])[1]);
  check('the training panel says what loss random guessing scores (ln of the vocabulary)',
    vocab > 0 && expect.includes(`ln ${vocab} = ${Math.log(vocab).toFixed(2)}`), expect);
  check('the training text downloads in the training panel, not the GPT-2 panel',
    !/shakespeare\.txt/.test(await page.textContent('#fetch-text')), await page.textContent('#fetch-text'));

  // Limits the page checks before the engine sees them, each said beside its field.
  for (const [id, value, want] of [['train-width', '100000', /at most 512/], ['train-batch', '100000', /at most 256/],
    ['train-steps', '0', /at least 1/]]) {
    const keep = await page.inputValue(`#${id}`);
    const logged = (await errorsShown(page)).length;
    await page.fill(`#${id}`, value);
    await page.click('#train');
    await page.waitForFunction(() => document.getElementById('train-error').textContent !== '', null, { timeout: 10_000 });
    const msg = await page.textContent('#train-error');
    check(`${id} ${value} is refused by the page in plain words`, want.test(msg) && !/\[/.test(msg)
      && !/step 1/.test(await page.textContent('#train-status')), msg);
    await errorBeside(page, 'train-error', id);
    await markExpected(page, logged);
    await page.fill(`#${id}`, keep);
  }

  // Busy: while training runs, Generate and Run parity are disabled and say so; Stop says
  // where it stopped (the text is cached: this run starts at once).
  await page.fill('#train-steps', '1000');
  await page.click('#train');
  await page.waitForSelector('#loss-chart:not([data-points="0"])', { timeout: 120_000 });
  const one = await yLabels(page);
  check('a one-point chart\'s loss labels differ', new Set(one).size === one.length, one.join(' '));
  const busy = await page.textContent('#gpt2-busy');
  check('while training, Generate and Run parity are disabled and say what is busy',
    await page.isDisabled('#generate') && await page.isDisabled('#run-parity')
    && (await page.getAttribute('#gpt2-busy', 'data-busy')) === 'train' && /training/.test(busy)
    && (await page.getAttribute('#parity-busy', 'data-busy')) === 'train', busy);
  const clicked = await clickStop(page, 'train-stop', () => document.getElementById('loss-chart').dataset.points);
  await page.waitForSelector('#train-sample:is([data-state="done"])', { timeout: 120_000 }).catch(() => {});
  const stopped = await page.textContent('#train-status');
  const at = await page.getAttribute('#train-status', 'data-stopped-at');
  check('Stop says at which step training stopped', (await page.getAttribute('#train-status', 'data-state')) === 'stopped'
    && new RegExp(`stopped at step ${at} of 1000`).test(stopped), stopped);
  check('Stop ends training within one step', Number(at) <= Number(clicked) + 1, `clicked at step ${clicked}, stopped at ${at}`);
  check('after training, Generate and Run parity are enabled again', !(await page.isDisabled('#generate'))
    && !(await page.isDisabled('#run-parity')) && (await page.textContent('#gpt2-busy')) === '');
}

// Clicks Stop `id` in the same task that reads the progress `now()` reports, so the count
// is the one the click saw; returns that count.
async function clickStop(page, id, now) {
  return page.evaluate(([stopId, read]) => {
    const seen = (0, eval)(`(${read})`)();
    document.getElementById(stopId).click();
    return seen;
  }, [id, now.toString()]);
}

// The error region `errorId` is within 100 px of control `fieldId`, tied to it and focused
// there, at desktop and phone width.
async function errorBeside(page, errorId, fieldId) {
  for (const width of [1200, 390]) {
    await page.setViewportSize({ width, height: width > 400 ? 900 : 844 });
    await page.waitForTimeout(50); // the page places the message again on its resize event
    const r = await page.evaluate(([e, f]) => {
      const a = document.getElementById(e).getBoundingClientRect();
      const b = document.getElementById(f).getBoundingClientRect();
      const dx = Math.max(0, a.left - b.right, b.left - a.right);
      const dy = Math.max(0, a.top - b.bottom, b.top - a.bottom);
      const field = document.getElementById(f);
      return { d: Math.hypot(dx, dy), describedby: field.getAttribute('aria-describedby'),
        invalid: field.getAttribute('aria-invalid'), focus: document.activeElement && document.activeElement.id };
    }, [errorId, fieldId]);
    check(`the error of #${fieldId} is within 100 px of it at ${width} px, tied to it, focus there`,
      r.d <= 100 && r.describedby === errorId && r.invalid === 'true' && r.focus === fieldId, `${r.d.toFixed(0)} px, aria-describedby ${r.describedby}, aria-invalid ${r.invalid}, `
      + `focus #${r.focus}`);
  }
  await page.setViewportSize({ width: 1200, height: 900 });
}

// Phone and accessibility: 24 px checkboxes, named progress bars, disabled buttons that say why.
async function a11yChecks(page) {
  const boxes = await page.$$eval('input[type="checkbox"]', (bs) => bs.map((b) => {
    const r = b.getBoundingClientRect();
    return Math.min(r.width, r.height);
  }));
  check('checkboxes are 24 px tap targets', boxes.length > 0 && boxes.every((s) => s >= 24), boxes.join(', '));
  const bars = await page.$$eval('progress', (ps) => ps.map((p) => p.getAttribute('aria-label') || ''));
  check('progress bars have accessible names', bars.every((n) => n !== ''), bars.join(', '));
  const mute = await page.$$eval('button:disabled', (bs) => bs.filter((b) => !b.title).map((b) => b.id));
  check('every disabled button says why (title)', mute.length === 0, mute.join(', ') || 'all say why');
}

async function yLabels(page) {
  return page.$$eval('#loss-grid text.y-label', (ts) => ts.map((t) => t.textContent));
}

// The layout at desktop and phone width, committed beside the test: the page as a visitor
// first sees it, once the default model has written.
async function screenshots(page) {
  fs.mkdirSync(shotDir, { recursive: true });
  await page.$eval('#model-details', (d) => { d.open = false; });
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(shotDir, 'desktop.png') });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: path.join(shotDir, 'phone.png'), fullPage: true });
  await page.setViewportSize({ width: 1200, height: 900 });
}

// At phone width, with the model panel open and shut, no element wider than the screen.
async function phoneOverflow(page, what) {
  await page.setViewportSize({ width: 390, height: 844 });
  let worst = 0;
  for (const open of [true, false]) {
    await page.$eval('#model-details', (d, o) => { d.open = o; }, open);
    worst = Math.max(worst, await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth));
  }
  check(`phone width, ${what}: nothing overflows sideways`, worst <= 1, `${worst} px wider than the screen`);
  await page.setViewportSize({ width: 1200, height: 900 });
}

// The ids the native CPU reference generates greedily for `prompt` on the model in `dir`
// (the GPT-2 example with --cpu: every op on the CPU context), parsed from its output.
function referenceIds(dir, prompt, n, dtype) {
  const args = ['run', '--release', '--quiet', '--example', 'gpt2', '--', prompt, '--tokens', String(n), '--greedy',
    '--cpu', '--model', dir, ...(dtype ? ['--dtype', dtype] : [])];
  const out = execFileSync('cargo', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const line = out.split('\n').find((l) => l.startsWith('generated ids: '));
  if (!line) throw new Error(`no "generated ids:" line in the output of cargo ${args.join(' ')}`);
  return JSON.parse(line.slice('generated ids: '.length));
}

// GPT-2 in the page: the default model loads, generation equals the native reference's ids,
// and bad input gives messages.
async function gpt2Checks(page, base) {
  await page.waitForFunction(() => !document.getElementById('generate').disabled
    || document.querySelectorAll('#errors li').length > 0, null, { timeout: 300_000 });
  const modelUrl = (await page.getAttribute('#model-name', 'data-url')) || '';
  check('GPT-2 default model loaded', !(await page.isDisabled('#generate')), await page.textContent('#model-name'));

  // The page's default: the Shakespeare model when shipped, else tiny-random.
  const name = fs.existsSync(path.join(root, 'assets/models/shakespeare/config.json')) ? 'shakespeare' : 'tiny-random';
  check(`GPT-2 page opened on the default model (${name})`, modelUrl.endsWith(`/assets/models/${name}/`)
    && (await page.getAttribute('#model-name', 'data-name')) === name, modelUrl);
  const about = await page.textContent('#model-about');
  check('the GPT-2 panel says in a sentence what the model is', name !== 'shakespeare'
    || /12M-parameter GPT-2 trained on Shakespeare/.test(about), about);
  await phoneOverflow(page, 'the default model');
  const decode = fs.readFileSync(path.join(root, 'engine/generate/device.rs'), 'utf8');
  const kmax = Number((/pub const DEVICE_TOP_K_MAX: usize = (\d+);/.exec(decode) || [])[1]);
  check('the page\'s top-k limit is the library\'s DEVICE_TOP_K_MAX',
    kmax > 0 && Number(await page.getAttribute('#top-k', 'data-device-max')) === kmax, `${kmax}`);
  const want = referenceIds(`assets/models/${name}`, GPT2_PROMPT, GPT2_TOKENS);
  check('GPT-2 samples by default', !(await page.isChecked('#greedy'))
    && Number(await page.inputValue('#temperature')) > 0, `temperature ${await page.inputValue('#temperature')}`);
  await page.check('#greedy');
  const generate = async () => {
    await page.click('#generate');
    await page.waitForSelector('#output:is([data-state="done"], [data-state="error"])', { timeout: timeoutMs });
    return {
      ids: JSON.parse((await page.getAttribute('#ids', 'data-ids')) || '[]'),
      text: await page.textContent('#output'),
    };
  };
  await page.fill('#prompt', GPT2_PROMPT);
  await page.fill('#n-tokens', String(GPT2_TOKENS));
  const got = (await generate()).ids;
  check(`GPT-2 ${GPT2_TOKENS} greedy tokens equal the native CPU reference`,
    got.length === GPT2_TOKENS && JSON.stringify(got) === JSON.stringify(want),
    `got ${JSON.stringify(got)} want ${JSON.stringify(want)}`);
  console.log(`  output: ${JSON.stringify(await page.textContent('#output'))}`);
  console.log(`  time to first token ${await page.textContent('#ttft')}, ${await page.textContent('#tps')} tokens/s`);
  check('GPT-2 shows tokens/s', Number(await page.textContent('#tps')) > 0, await page.textContent('#tps'));
  const phases = await page.getAttribute('#gen-status', 'data-phases');
  check('GPT-2 shows progress before the first token, then tokens written', phases === 'prefill,decode,done',
    `${phases}: ${await page.textContent('#gen-status')}`);
  check('the last run\'s figures are shown next to the model', /tokens\/s, first token after\s+\d+ ms: 8 tokens from /
    .test(await page.textContent('#last-run')), await page.textContent('#last-run'));

  // Sampling: a seed repeats its text, another seed gives other text.
  await page.uncheck('#greedy');
  await page.fill('#prompt', 'ROMEO:');
  await page.fill('#n-tokens', '12');
  await page.fill('#seed', '1');
  const one = await generate();
  const again = await generate();
  await page.fill('#seed', '2');
  const two = await generate();
  check('GPT-2 sampling: the same seed repeats its text', one.text === again.text && one.ids.length === 12,
    JSON.stringify(one.text));
  check('GPT-2 sampling: different seeds give different text', one.text !== two.text,
    `${JSON.stringify(one.text)} vs ${JSON.stringify(two.text)}`);
  await screenshots(page);

  // The default path's speed on this machine: the first token and 40 tokens (ROMEO:, sampled).
  await page.fill('#n-tokens', '40');
  const forty = await generate();
  const secs = Number((/in ([\d.]+) s/.exec(await page.textContent('#gen-status')) || [])[1]);
  console.log(`  default path (${await page.getAttribute('#path-note', 'data-path')}): first token after `
    + `${await page.textContent('#ttft')}, 40 tokens in ${secs} s`);
  check('40 tokens written on the default path', forty.ids.length === 40, `${secs} s`);
  // Issue 47's target on CI's browser (SwiftShader): 40 tokens within 8 s, the first within
  // 1 s (measured 0.8 s and 19 ms on a 2-core machine once the CPU product stopped copying).
  const ttft = Number((/([\d.]+) ms/.exec(await page.textContent('#ttft')) || [])[1]);
  check('the default path writes 40 tokens within 8 s, the first within 1 s', secs <= 8 && ttft <= 1000,
    `${secs} s, first after ${ttft} ms`);
  const nodes = await page.$eval('#output', (o) => o.childNodes.length);
  check('tokens are appended to the live region, not rewritten', nodes > 20
    && (await page.getAttribute('#output', 'aria-relevant')) === 'additions', `${nodes} text nodes`);

  // Stop: generation ends within one token of the click.
  await page.fill('#n-tokens', '200');
  await page.click('#generate');
  await page.waitForFunction(() => /writing: [3-9]\d*\//.test(document.getElementById('gen-status').textContent),
    null, { timeout: 120_000 });
  check('while GPT-2 writes, its Stop is enabled', !(await page.isDisabled('#gen-stop')));
  const seen = await clickStop(page, 'gen-stop',
    () => Number((/writing: (\d+)\//.exec(document.getElementById('gen-status').textContent) || [])[1]));
  await page.waitForSelector('#output:is([data-state="stopped"], [data-state="done"], [data-state="error"])',
    { timeout: 120_000 });
  const stoppedAt = Number(await page.getAttribute('#output', 'data-stopped-at'));
  check('Stop ends generation within one token', (await page.getAttribute('#output', 'data-state')) === 'stopped'
    && stoppedAt <= seen + 1 && !(await page.isDisabled('#generate')),
    `clicked at ${seen} tokens, stopped at ${stoppedAt}: ${await page.textContent('#gen-status')}`);
  await page.fill('#n-tokens', '12');

  // Tokens: negative and 0 refused in plain words, no engine message.
  const logged = (await errorsShown(page)).length;
  for (const bad of ['-5', '0']) {
    await page.fill('#n-tokens', bad);
    await page.click('#generate');
    await page.waitForFunction(() => document.getElementById('gpt2-error').textContent !== '', null, { timeout: 10_000 });
    const msg = await page.textContent('#gpt2-error');
    check(`Tokens ${bad} is refused in plain words`, /whole number of at least 1/.test(msg) && !/4294967/.test(msg), msg);
    check(`after Tokens ${bad}, no figure of a run that did not happen`, (await page.textContent('#tps')) === '-'
      && (await page.textContent('#gen-note')) === '', await page.textContent('#last-run'));
  }
  await errorBeside(page, 'gpt2-error', 'n-tokens');
  await markExpected(page, logged);
  // Top-k outside what the device sampler takes: a warning.
  await page.uncheck('#greedy');
  for (const [k, warn] of [['0', true], ['200', true], ['40', false]]) {
    await page.fill('#top-k', k);
    const w = (await page.getAttribute('#topk-note', 'data-warn')) === 'top-k';
    check(`top-k ${k} ${warn ? 'is warned' : 'gives no warning'}`, w === warn, await page.textContent('#topk-note'));
  }

  // A model picked as local files (the tiny-random checkpoint), in the collapsed model panel.
  await page.$eval('#model-details', (d) => { d.open = true; });
  const tiny = path.join(root, 'assets/models/tiny-random');
  let logs = (await errorsShown(page)).length;
  await page.setInputFiles('#model-files', [path.join(tiny, 'config.json'), path.join(tiny, 'model.safetensors')]);
  await page.waitForFunction((n) => document.getElementById('model-name').dataset.url === ''
    || document.querySelectorAll('#errors li').length > n, logs, { timeout: 120_000 });
  let picked = await page.textContent('#model-name');
  const pickedName = await page.getAttribute('#model-name', 'data-name');
  check('GPT-2 loads a model from local files, named after its config', (await page.getAttribute('#model-name', 'data-url')) === ''
    && /2-layer 32-wide/.test(pickedName) && !(await page.isDisabled('#generate')), picked);
  check('GPT-2 weights load as stored by default (F16)', (await page.inputValue('#gpt2-dtype')) === ''
    && /weights F16 \(as stored\)/.test(picked), picked);

  // Fine-tuning in the page (the autograd tape, Adam): a few steps on the tiny checkpoint, the
  // loss falls, and the model Generate uses is the tuned one (the dtype reload below restores
  // the file's weights).
  await page.fill('#finetune-steps', '6');
  await page.click('#finetune');
  await page.waitForFunction(() => ['done', 'error'].includes(document.getElementById('finetune-status').dataset.state),
    null, { timeout: 300_000 });
  const ftFirst = Number(await page.getAttribute('#finetune-status', 'data-first-loss'));
  const ftLast = Number(await page.getAttribute('#finetune-status', 'data-last-loss'));
  check('GPT-2 fine-tunes in the page through the tape: the loss falls',
    (await page.getAttribute('#finetune-status', 'data-state')) === 'done' && ftLast < ftFirst,
    `${ftFirst} -> ${ftLast}: ${await page.textContent('#finetune-status')}`);
  check('after fine-tuning, the model is named as tuned and Generate is enabled',
    /fine-tuned 6 steps/.test(await page.textContent('#model-name')) && !(await page.isDisabled('#generate')),
    await page.textContent('#model-name'));
  check('a fine-tune says how long is left after its first step', /smoothed/.test(await page.textContent('#finetune-status'))
    && (await page.getAttribute('#finetune-status', 'data-estimate')) !== null, await page.textContent('#finetune-status'));
  // Stop: fine-tuning ends within one step of the click.
  await page.fill('#finetune-steps', '1000');
  await page.click('#finetune');
  await page.waitForFunction(() => /step [2-9]\d*\/1000/.test(document.getElementById('finetune-status').textContent),
    null, { timeout: 300_000 });
  check('while fine-tuning, its Stop is enabled and it says how long is left', !(await page.isDisabled('#finetune-stop'))
    && /left/.test(await page.textContent('#finetune-status')), await page.textContent('#finetune-status'));
  const tuneSeen = await clickStop(page, 'finetune-stop',
    () => Number((/step (\d+)\//.exec(document.getElementById('finetune-status').textContent) || [])[1]));
  await page.waitForFunction(() => ['stopped', 'done', 'error'].includes(document.getElementById('finetune-status').dataset.state),
    null, { timeout: 300_000 });
  const tuneAt = Number(await page.getAttribute('#finetune-status', 'data-stopped-at'));
  check('Stop ends fine-tuning within one step', (await page.getAttribute('#finetune-status', 'data-state')) === 'stopped'
    && tuneAt <= tuneSeen + 1, `clicked at step ${tuneSeen}, stopped at ${tuneAt}`);

  // The Weights control reloads the model in another dtype (the gpt2 example's --dtype): bf16
  // on the tiny checkpoint, greedy ids equal to the native CPU reference with the same dtype.
  logs = (await errorsShown(page)).length;
  await page.selectOption('#gpt2-dtype', 'bf16');
  await page.waitForFunction((n) => document.getElementById('model-name').dataset.dtype === 'bf16'
    || document.querySelectorAll('#errors li').length > n, logs, { timeout: 120_000 });
  picked = await page.textContent('#model-name');
  check('GPT-2 Weights bf16 reloads the model in BF16', /weights BF16 \(stored F16, converted on the device\)/.test(picked),
    picked);
  await page.check('#greedy');
  await page.fill('#prompt', GPT2_PROMPT);
  await page.fill('#n-tokens', '8');
  const bf16 = (await generate()).ids;
  const bf16Want = referenceIds('assets/models/tiny-random', GPT2_PROMPT, 8, 'bf16');
  check('GPT-2 bf16 greedy tokens equal the native CPU reference in bf16',
    JSON.stringify(bf16) === JSON.stringify(bf16Want), `got ${JSON.stringify(bf16)} want ${JSON.stringify(bf16Want)}`);

  // Bad input: a URL with no model, and a folder whose weights are not a checkpoint.
  for (const [what, url, pattern] of [
    ['a missing model URL', `${base}/__test__/no-such-model/`, /404/],
    ['a file that is not a checkpoint', `${base}/__test__/bad-model/`, /safetensors|header|model\.safetensors/i],
  ]) {
    const before = (await errorsShown(page)).length;
    await page.fill('#model-url', url);
    await page.click('#load-url');
    await page.waitForFunction((n) => document.querySelectorAll('#errors li').length > n, before, { timeout: 60_000 });
    const msg = (await errorsShown(page)).slice(before).join(' | ');
    const inPanel = await page.textContent('#gpt2-error');
    check(`${what} gives a message on the page, in the GPT-2 panel's live region`, pattern.test(msg)
      && pattern.test(inPanel) && (await page.getAttribute('#gpt2-error', 'aria-live')) === 'assertive', inPanel.slice(0, 160));
    await errorBeside(page, 'gpt2-error', 'model-url');
    await markExpected(page, before);
  }
  check('a failed load keeps the loaded model', !(await page.isDisabled('#generate'))
    && (await page.textContent('#model-name')) === picked, await page.textContent('#model-name'));

  // A bad file picked as local files: a message in the panel, the picker reset, the model kept.
  const before = (await errorsShown(page)).length;
  const badFile = path.join(outDir, 'model.safetensors');
  fs.writeFileSync(badFile, BAD_MODEL['/__test__/bad-model/model.safetensors']);
  await page.setInputFiles('#model-files', [path.join(tiny, 'config.json'), badFile]);
  await page.waitForFunction((n) => document.querySelectorAll('#errors li').length > n, before, { timeout: 60_000 });
  const fileMsg = await page.textContent('#gpt2-error');
  check('a bad model file gives a message in the GPT-2 panel and resets the file picker',
    /safetensors|header/i.test(fileMsg) && (await page.$eval('#model-files', (i) => i.files.length)) === 0
    && (await page.textContent('#model-name')) === picked, fileMsg.slice(0, 160));
  check('a rejected file leaves no progress figure', !/0\.0 \/ 0\.0/.test(await page.textContent('#fetch-text')),
    await page.textContent('#fetch-text'));
  await errorBeside(page, 'gpt2-error', 'model-files');
  await markExpected(page, before);

  // Tokens beyond the context: capped to the context minus the prompt (" the" is one token:
  // a prompt of 120 leaves 8 of the tiny model's 128 positions), said in a note. It is also
  // the success that clears the panel's message.
  await page.fill('#prompt', ' the'.repeat(120));
  await page.fill('#n-tokens', '1024');
  const capped = await generate();
  const cap = Number(await page.inputValue('#n-tokens'));
  const note = await page.textContent('#gen-note');
  check('Tokens 1024 is capped to the context minus the prompt', cap === 8 && capped.ids.length === cap
    && /capped at 8: the prompt takes 120 of the model's 128 positions/.test(note), `${capped.ids.length} tokens: ${note}`);
  check('a success clears the GPT-2 panel\'s message', (await page.textContent('#gpt2-error')) === '',
    await page.textContent('#gpt2-error'));

  // The switch: GPT-2 on WebGPU (the model reloads there), the same greedy ids as the CPU
  // reference's, then back to the default.
  for (const onGpu of [true, false]) {
    const n = (await errorsShown(page)).length;
    await page.setChecked('#use-webgpu', onGpu);
    await page.waitForFunction(([want, logged]) => (!document.getElementById('generate').disabled
      && document.getElementById('path-note').dataset.path === want)
      || document.querySelectorAll('#errors li').length > logged, [onGpu ? 'webgpu' : 'cpu', n], { timeout: 120_000 });
    await page.check('#greedy');
    await page.fill('#prompt', GPT2_PROMPT);
    await page.fill('#n-tokens', '8');
    const ids = (await generate()).ids;
    check(`the switch runs GPT-2 on ${onGpu ? 'WebGPU' : 'the CPU reference'}, with the reference's greedy ids`,
      JSON.stringify(ids) === JSON.stringify(bf16Want) && new RegExp(onGpu ? 'on (?!the CPU)' : 'on the CPU reference')
        .test(await page.textContent('#run-model')), await page.textContent('#run-model'));
  }
}

// Marks the messages logged from index `from` on as expected, so the final check ignores them.
async function markExpected(page, from) {
  await page.$$eval('#errors li', (lis, n) => lis.slice(n).forEach((li) => {
    if (!li.textContent.startsWith('expected:')) li.textContent = `expected: ${li.textContent}`;
  }), from);
}

try {
  await main();
} catch (err) {
  check('browser test ran to the end', false, err.stack || String(err));
}
const failed = results.filter((r) => !r.ok).length;
console.log(`browser test: ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;
