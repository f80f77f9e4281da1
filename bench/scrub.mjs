// Scrubbing's cost per byte: a 16 MiB body through the Scrubber (lib/proxy/scrub.ts) in 64 KiB chunks,
// with one and with two secrets, against a string search for the raw value and its base64 forms in the same
// run (what scrubbing used before its searches whose cost does not depend on the secret's bytes:
// lib/secrets/spelling-search.ts, lib/secrets/form-search.ts).
// A host writing a byte at a time (a 256-byte value, 64 KiB in 1-byte pieces): what small pieces cost; an event
// stream of small deltas, each let go alone by the timer's release.
// No target: the figures say what the constant-time search costs (docs/benchmarks.md).
import { median } from './lib.mjs';

const { Scrubber, scrubPairs } = await import('../dist/lib/proxy/scrub.js');
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const secret = (name, real, placeholder) => ({ name, real, placeholder, hosts: ['api.test'], inQuery: false, allowPlaintext: false });
const one = scrubPairs([secret('T', 'Kq7vN2xLp9RtY4wZb8sDf3gHj6mC1aE5', 'Kq7vSBPHplaceholderPlaceholder00')]);
const two = scrubPairs([secret('T', 'Kq7vN2xLp9RtY4wZb8sDf3gHj6mC1aE5', 'Kq7vSBPHplaceholderPlaceholder00'), secret('U', 'sk-ant-api03-realRealRealRealRealRealRealRealReal0000', 'sk-ant-api03-SBPHplaceholderPlaceholderPlaceholder0000')]);
const body = Buffer.alloc(16 << 20, 'the quick brown fox {"json": 1234} ');
const CHUNK = 65536;

function scrubbed(pairs) {
  const s = new Scrubber(pairs);
  let n = 0;
  for (let o = 0; o < body.length; o += CHUNK) n += s.push(body.subarray(o, o + CHUNK)).length;
  return n + s.end().length;
}

/** The forms looked for by a string search per chunk, as before (no replacement: none is in the body). */
function searched(pairs) {
  let n = 0;
  for (let o = 0; o < body.length; o += CHUNK) {
    const text = body.subarray(o, o + CHUNK).toString('latin1');
    for (const p of pairs) if (text.indexOf(p.text) !== -1) n++;
  }
  return n;
}

// A host that writes a byte at a time (a record each): a 256-byte value, 64 KiB in 1-byte pieces.
const long = scrubPairs([secret('L', 'Kq7vN2xLp9RtY4wZb8sDf3gHj6mC1aE5'.repeat(8), `SBPH${'p'.repeat(252)}`)]);
const TRICKLE = 64 << 10;
function trickled() {
  const s = new Scrubber(long);
  let n = 0;
  for (let o = 0; o < TRICKLE; o++) n += s.push(body.subarray(o, o + 1)).length;
  return n + s.end().length;
}

// An event stream as a model's answer comes: 8 MiB of ~130-byte deltas, each pushed alone and let go by the timer's release.
const delta = (i) => `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"const x${i} = foo(bar, \\"baz\\");\\n"}}\n\n`;
let eventText = '';
for (let i = 0; eventText.length < 8 << 20; i++) eventText += delta(i);
const events = Buffer.from(eventText);
function streamed() {
  const s = new Scrubber(one);
  let n = 0;
  for (let at = 0; at < events.length; ) {
    const e = events.indexOf('\n\n', at) + 2;
    n += s.push(events.subarray(at, e)).length + s.release().length;
    at = e;
  }
  return n + s.end().length;
}

const subjects = {
  'string search, 1 secret': () => searched(one),
  'Scrubber, 1 secret': () => scrubbed(one),
  'string search, 2 secrets': () => searched(two),
  'Scrubber, 2 secrets': () => scrubbed(two),
  'Scrubber, a 256-byte secret, 64 KiB in 1-byte pieces': () => trickled(),
  'Scrubber, 1 secret, an event stream, each event let go alone': () => streamed(),
};
const times = Object.fromEntries(Object.keys(subjects).map((k) => [k, []]));
for (let r = 0; r < ROUNDS + 1; r++) {
  for (const [k, f] of Object.entries(subjects)) {
    const t0 = performance.now();
    f();
    if (r > 0) times[k].push(performance.now() - t0);
  }
}
const rows = Object.entries(times).map(([subject, t]) => {
  const ms = median(t);
  const bytes = subject.includes('1-byte pieces') ? TRICKLE : subject.includes('event stream') ? events.length : body.length;
  return { subject, median_ms: +ms.toFixed(1), mb_per_s: +(bytes / 1e6 / (ms / 1000)).toFixed(bytes === body.length ? 0 : 2) };
});
console.log(JSON.stringify({ benchmark: 'scrub', body_bytes: body.length, rows }, null, 2));
const w = Math.max(...rows.map((r) => r.subject.length));
console.log(`\n${'subject'.padEnd(w)}  median ms   MB/s`);
for (const r of rows) console.log(`${r.subject.padEnd(w)}  ${String(r.median_ms).padStart(9)}  ${String(r.mb_per_s).padStart(5)}`);
