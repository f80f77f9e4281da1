// Scrubbing, pure: the real value however a host spelled it (raw,
// percent-encoded, escaped, each character its own way) becomes the
// placeholder, and its base64 forms at each alignment the same form of the
// placeholder, in a whole text and in a stream cut anywhere, with bytes of any
// value around it (the search runs in Latin-1 text: a character per byte), and
// a stream holds a window of fixed length, whatever is in it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { Scrubber, scrubBuffer, scrubPairs, scrubText } from '../../lib/proxy/scrub.js';
import type { BoundSecret } from '../../lib/proxy/secrets.js';
import { ratioOf } from '../stats.js';

// A real value with bytes over 0x7f (UTF-8) and reserved characters: every form differs from the raw one.
const S: BoundSecret = { name: 'T', placeholder: 'tok-SBPHplaceholder/+é=01', real: 'tok-realRealRealV/+é=9999', hosts: ['api.test'], inQuery: true, allowPlaintext: false };
const pairs = scrubPairs([S]);
const real = Buffer.from(S.real);
const ph = Buffer.from(S.placeholder);

const noise = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

/** HTML's decoding, by Python's html.unescape. */
function unescapeHtml(text: string): string {
  const r = spawnSync('python3', ['-I', '-c', 'import sys, html; sys.stdout.write(html.unescape(sys.argv[1]))', text], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

/** Every form of the real value in one body, between bytes of every value (0x00-0xff). */
function body(): Buffer {
  const forms = [S.real, encodeURIComponent(S.real), Buffer.from(`u:${S.real}`).toString('base64'), Buffer.from(S.real).toString('base64url')];
  return Buffer.concat([...forms.flatMap((f) => [noise, Buffer.from(f)]), noise]);
}

function hasAnyForm(b: Buffer): boolean {
  return pairs.some((p) => b.includes(p.find)) || b.includes(Buffer.from(encodeURIComponent(S.real)));
}

test('each form of the real value, between bytes of every value, becomes the placeholder (base64 ones the same form of it)', () => {
  const text = body();
  assert.ok(hasAnyForm(text));
  const out = scrubBuffer(text, pairs);
  assert.equal(hasAnyForm(out), false);
  assert.equal(out.includes(real), false);
  assert.ok(out.includes(ph));
  assert.ok(out.includes(Buffer.from(Buffer.from(S.placeholder).toString('base64url').slice(0, 16))));
  // The noise around the forms is untouched: the offsets found are the bytes' own.
  assert.equal(out.subarray(0, 256).compare(noise), 0);
  assert.equal(out.subarray(out.length - 256).compare(noise), 0);
  // The percent-encoded value became the placeholder itself: the size is the upstream's less the escapes.
  assert.equal(out.length, text.length - (encodeURIComponent(S.real).length - real.length) + (ph.length - real.length));
});

test('a stream cut at every place gives what the whole text gives, and never the real value', () => {
  const text = body();
  const whole = scrubBuffer(text, pairs);
  for (const size of [1, 2, 3, 7, 25, 64, 255]) {
    const s = new Scrubber(pairs);
    const out: Buffer[] = [];
    for (let i = 0; i < text.length; i += size) out.push(s.push(text.subarray(i, i + size)));
    out.push(s.end());
    assert.equal(Buffer.concat(out).compare(whole), 0, `chunks of ${size}`);
  }
  // Cut once at each offset inside the raw value.
  const at = text.indexOf(real);
  for (let cut = at; cut <= at + real.length; cut++) {
    const s = new Scrubber(pairs);
    const got = Buffer.concat([s.push(text.subarray(0, cut)), s.push(text.subarray(cut)), s.end()]);
    assert.equal(got.compare(whole), 0, `cut at ${cut - at}`);
  }
});

test('a stream holds a window of fixed length whatever it holds: a start of the real value and any other bytes wait alike; the timer lets go only up to the last line break, so a value split by a pause never leaves half raw', () => {
  // Ten bytes a byte of the value, less one: the longest any spelling of it can be (a character written as
  // `&amp;#x2B;` or `\U0000002B`), whatever its bytes (how many of them percent-encoding escapes made the window
  // before: its length told).
  const window = 10 * real.length - 1;
  assert.ok(window > Math.max(...pairs.map((p) => p.find.length)) - 1);
  const run = (first: Buffer) => {
    const s = new Scrubber(pairs);
    const a = s.push(first);
    const held = s.held;
    return { s, a, held };
  };
  // The first 10 bytes of the raw value, and 10 bytes that begin nothing: the same bytes out, the same held.
  const guess = run(Buffer.concat([Buffer.from('x'.repeat(400)), real.subarray(0, 10)]));
  const other = run(Buffer.concat([Buffer.from('x'.repeat(400)), Buffer.from('qqqqqqqqqq')]));
  assert.equal(guess.a.length, 410 - window);
  assert.ok(410 > window);
  assert.equal(other.a.length, guess.a.length);
  assert.deepEqual([guess.held, other.held], [window, window]);
  // No line break held: the timer lets nothing go, for the guess and the other alike.
  assert.deepEqual([guess.s.release().length, other.s.release().length], [0, 0]);
  assert.deepEqual([guess.s.held, other.s.held], [window, window]);
  // The rest of the value arrives after the pause (the attack: an upstream, or an agent reading slowly, splits it): all of it comes out as the placeholder.
  const rest = Buffer.concat([guess.s.push(real.subarray(10)), guess.s.end()]);
  const all = Buffer.concat([guess.a, rest]);
  assert.equal(all.includes(real.subarray(0, 8)), false);
  assert.ok(all.toString('latin1').endsWith(ph.toString('latin1')));
  // An event stream: what precedes the last line break goes on the timer, the same for any bytes after it.
  const ev = new Scrubber(pairs);
  const first = ev.push(Buffer.from('data: {"i":1}\n\ndata: {"i"'));
  assert.equal(Buffer.concat([first, ev.release()]).toString(), 'data: {"i":1}\n\n');
  assert.equal(ev.held, 'data: {"i"'.length);
  // A whole value before the break is replaced on release too.
  const whole = new Scrubber(pairs);
  const out = Buffer.concat([whole.push(Buffer.concat([Buffer.from('ab'), real, Buffer.from('\n')])), whole.release()]);
  assert.equal(out.toString('latin1'), `ab${ph.toString('latin1')}\n`);
  assert.equal(whole.end().length, 0);
});

test('the body guard: the same window whatever the bytes; the timer lets go only up to a line break, so a value split by a pause is refused before any of it leaves', async () => {
  const { Guard, BodyRefused } = await import('../../lib/proxy/message-filter.js');
  const needles = [{ needle: real, rule: 'r', suspect: 'T' }];
  const g1 = new Guard(needles);
  const g2 = new Guard(needles);
  const a = g1.push(real.subarray(0, 12));
  const b = g2.push(Buffer.from('zzzzzzzzzzzz'));
  assert.deepEqual([a.length, g1.held], [b.length, g2.held]);
  assert.deepEqual([a.length, g1.held], [0, 12]);
  assert.deepEqual([g1.release().length, g2.release().length], [0, 0]);
  assert.throws(() => g1.push(real.subarray(12)), BodyRefused);
  assert.equal(Buffer.concat([g2.push(Buffer.from('a\nb')), g2.release(), g2.push(Buffer.from('end')), g2.end()]).toString(), 'zzzzzzzzzzzza\nbend');
  const g3 = new Guard(needles);
  assert.equal(Buffer.concat([g3.push(Buffer.from('line one\nline')), g3.release()]).toString(), 'line one\n');
  // Found by the timer's release (a timer has nobody to catch a throw): nothing goes, and the next push says so.
  const g4 = new Guard(needles);
  assert.equal(g4.push(Buffer.concat([Buffer.from('a\n'), real.subarray(0, 12)])).length, 0);
  assert.equal(g4.release().toString(), 'a\n');
  assert.equal(g4.push(Buffer.concat([real.subarray(12), Buffer.from('\n')])).length, 0);
  assert.deepEqual([g4.release().length, g4.release().length], [0, 0]);
  assert.throws(() => g4.push(Buffer.from('more')), BodyRefused);
});

test('header text (Latin-1 as the parser gives it): forms replaced, text without one returned as it is', () => {
  const latin1Real = real.toString('latin1');
  assert.equal(scrubText(`Bearer ${latin1Real}`, pairs), `Bearer ${ph.toString('latin1')}`);
  const b64 = Buffer.from(`u:${S.real}`).toString('base64');
  assert.equal(scrubText(`Basic ${b64}`, pairs).includes(b64.slice(4, 20)), false);
  const plain = 'Fri, 04 Dec 2026 16:10:51 GMT';
  assert.equal(scrubText(plain, pairs), plain);
  assert.equal(scrubText('', pairs), '');
  assert.equal(scrubText(latin1Real, []), latin1Real);
});

/** Streams `text` through a Scrubber cut at `cuts`; what goes out, whole. */
function streamed(text: Buffer, p: ReturnType<typeof scrubPairs>, cuts: number[]): Buffer {
  const s = new Scrubber(p);
  const out: Buffer[] = [];
  let at = 0;
  for (const c of [...cuts, text.length]) {
    out.push(s.push(text.subarray(at, c)));
    at = c;
  }
  out.push(s.end());
  return Buffer.concat(out);
}

test("one secret's value inside another's (a password in a connection string): the outer value goes whole, however the stream is cut", () => {
  const inner = 'Pa55w0rdXyZ123456789abcd';
  const outer = `postgres://admin:${inner}@db.internal.example:5432/prod`;
  const mk = (name: string, real: string): BoundSecret => ({ name, real, placeholder: `SBPH${name.repeat(real.length - 4)}`, hosts: ['x'], inQuery: false, allowPlaintext: false });
  const p = scrubPairs([mk('A', outer), mk('B', inner)]);
  const text = Buffer.from(`{"dsn":"${outer}","pw":"${inner}"}`);
  const whole = scrubBuffer(text, p);
  assert.equal(whole.toString(), `{"dsn":"SBPH${'A'.repeat(outer.length - 4)}","pw":"SBPH${'B'.repeat(inner.length - 4)}"}`);
  for (let cut = 0; cut <= text.length; cut++) assert.equal(streamed(text, p, [cut]).toString(), whole.toString(), `cut at ${cut}`);
});

test("two values that overlap in a text (one's end is the other's start): every byte of both is replaced, whole and streamed", () => {
  const a = 'abcdefgh-SHARED';
  const b = 'SHARED-12345678';
  const mk = (name: string, real: string): BoundSecret => ({ name, real, placeholder: `SBPH${name.repeat(real.length - 4)}`, hosts: ['x'], inQuery: false, allowPlaintext: false });
  const p = scrubPairs([mk('A', a), mk('B', b)]);
  const text = Buffer.from(`xx abcdefgh-SHARED-12345678 yy`);
  const whole = scrubBuffer(text, p).toString();
  // A first (leftmost), then the rest of B's placeholder for the bytes A did not cover.
  assert.equal(whole, `xx SBPH${'A'.repeat(a.length - 4)}${'B'.repeat(b.length - 'SHARED'.length)} yy`);
  for (let i = 0; i <= text.length; i++) {
    for (let j = i; j <= text.length; j += 3) assert.equal(streamed(text, p, [i, j]).toString(), whole, `cuts at ${i}, ${j}`);
  }
});

test('random values built from shared pieces, random texts of them, random cuts: the stream gives what the whole text gives, and no form is left', () => {
  let seed = 7;
  const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const pieces = ['key', '-9f', 'ab/', '+==', 'é', 'Zz0'];
  for (let round = 0; round < 300; round++) {
    const values = Array.from({ length: 1 + rand(3) }, () => Array.from({ length: 3 + rand(4) }, () => pieces[rand(pieces.length)]).join(''));
    const p = scrubPairs(values.map((real, i) => ({ name: `S${i}`, real, placeholder: `SBPH${String(i).repeat(Math.max(1, Buffer.byteLength(real) - 4))}`, hosts: ['x'], inQuery: false, allowPlaintext: false })));
    const text = Buffer.from(Array.from({ length: 6 + rand(10) }, () => (rand(2) ? values[rand(values.length)] : pieces[rand(pieces.length)])).join(''));
    const whole = scrubBuffer(text, p);
    const cuts = Array.from({ length: rand(5) }, () => rand(text.length + 1)).sort((x, y) => x - y);
    assert.equal(streamed(text, p, cuts).toString('latin1'), whole.toString('latin1'), `round ${round}: ${values.join(' | ')} in ${text} cut at ${cuts}`);
    for (const v of values) assert.equal(whole.includes(Buffer.from(v)), false, `round ${round}: ${v} left in ${whole}`);
  }
});

test('the shortest value a profile may bind (7 bytes): echoed inside Basic credentials at each alignment, it comes back in none', () => {
  const seven: BoundSecret = { name: 'P', placeholder: 'SBPHabcdefghijklmnopqrst', real: 'hunt3r!', hosts: ['x'], inQuery: false, allowPlaintext: false };
  const p = scrubPairs([seven]);
  for (const user of ['', 'u', 'us', 'usr']) {
    for (const alphabet of ['base64', 'base64url'] as const) {
      const echoed = Buffer.from(`Basic ${Buffer.from(`${user}:${seven.real}`).toString(alphabet)}`);
      const out = scrubBuffer(echoed, p).toString('latin1');
      const decoded = Buffer.from(out.slice(6), 'base64').toString('latin1');
      assert.equal(decoded.includes(seven.real.slice(1, -1)), false, `${alphabet}, user ${JSON.stringify(user)}: ${decoded}`);
    }
  }
});

test('(review, round 26) nothing a scrubbed answer shows depends on how many of the value\'s bytes percent-encoding escapes: its percent-encoded form becomes the placeholder as encodeURIComponent spells it, the window held is the same, and the answer goes without its Content-Length either way', async () => {
  const { planBody } = await import('../../lib/proxy/forward-response.js');
  const ph = 'AKIASBPHplaceholder00000';
  const shown = (real: string) => {
    const p = scrubPairs([{ name: 'K', placeholder: ph, real, hosts: ['api.test'], inQuery: true, allowPlaintext: false }]);
    const echoed = scrubBuffer(Buffer.from(`Location: /cb?key=${encodeURIComponent(real)}&x=1`), p).toString();
    const s = new Scrubber(p);
    s.push(Buffer.alloc(200, 'x'));
    const plan = planBody({ rawHeaders: ['Content-Length', '40', 'Content-Type', 'text/plain'] }, { pairs: p });
    return { echoed, held: s.held, headers: 'headers' in plan ? plan.headers : null };
  };
  const none = shown('AKIArealRealRealReal0000');
  const three = shown('AKIArealReal/+Real=al000');
  assert.equal(none.echoed, `Location: /cb?key=${ph}&x=1`);
  assert.deepEqual(three, none);
  assert.deepEqual(none.headers, ['Content-Type', 'text/plain']);
  // Control: without a secret the answer keeps its length.
  const plain = planBody({ rawHeaders: ['Content-Length', '40'] }, { pairs: [] });
  assert.deepEqual('headers' in plain ? plain.headers : null, ['Content-Length', '40']);
});

test('(review, round 35) the value as a bound host passes a URL on: a login redirect\'s `?next=` with the query encoded again (`%252B`), and Python\'s quote() (`/` kept), once and twice, upper and lower case: each comes back as the placeholder, in a stream cut anywhere; control: encoded a fourth time it is left (a documented limit), and four decodings give the value', () => {
  const q = (t: string) => encodeURIComponent(t).replace(/%2F/g, '/');
  const lower = (t: string) => t.replace(/%([0-9A-F]{2})/g, (_, h: string) => `%${h.toLowerCase()}`);
  const E = encodeURIComponent;
  const forms = [E(E(S.real)), q(S.real), E(q(S.real)), lower(q(S.real)), E(lower(E(S.real))), E(lower(q(S.real))), lower(E(q(S.real)))];
  for (const form of forms) {
    const text = Buffer.from(`Location: /login?next=%2Fprivate%3Fkey%3D${form}\r\n`);
    const whole = scrubBuffer(text, pairs);
    assert.ok(!whole.toString('latin1').includes(form), form);
    for (const size of [1, 5, 33]) {
      const z = new Scrubber(pairs);
      const out: Buffer[] = [];
      for (let i = 0; i < text.length; i += size) out.push(z.push(text.subarray(i, i + size)));
      out.push(z.end());
      assert.equal(Buffer.concat(out).compare(whole), 0, `${form} in chunks of ${size}`);
    }
    assert.ok(whole.includes(ph), form);
    let got = whole.toString('latin1');
    for (let i = 0; i < 3; i++) got = decodeURIComponent(got);
    assert.ok(!got.includes(S.real), got);
  }
  const third = E(E(E(S.real)));
  assert.equal(scrubBuffer(Buffer.from(third), pairs).toString(), S.placeholder);
  const fourth = E(third);
  const left = scrubBuffer(Buffer.from(fourth), pairs).toString();
  assert.equal(left, fourth);
  assert.equal(decodeURIComponent(decodeURIComponent(decodeURIComponent(decodeURIComponent(left)))), S.real);
});

test("(review of round 35) the value as real encoders write it, once and again: Python's quote (with and without '/'), quote_plus and urlencode, URLSearchParams, encodeURIComponent, a value whose only special characters are `!*'()~` and a space; each comes back as the placeholder; control: most of them differ from encodeURIComponent's form, the one looked for before", () => {
  const secret: BoundSecret = { name: 'T', placeholder: 'sk-ant-api03-SBPHplaceholder0123456789abcdefXYZ', real: "sk-ant-api03-R3al!Va1ue(Sec)'ret*0123~45 6789", hosts: ['api.test'], inQuery: true, allowPlaintext: false };
  const p = scrubPairs([secret]);
  const py = (expr: string, v: string) => {
    const r = spawnSync('python3', ['-I', '-c', `import sys, urllib.parse as u; sys.stdout.write(${expr})`, v], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout;
  };
  const encoders: Record<string, (v: string) => string> = {
    encodeURIComponent,
    quote: (v) => py('u.quote(sys.argv[1])', v),
    quoteSafeNone: (v) => py("u.quote(sys.argv[1], safe='')", v),
    quotePlus: (v) => py('u.quote_plus(sys.argv[1])', v),
    urlencode: (v) => py("u.urlencode({'k': sys.argv[1]})[2:]", v),
    URLSearchParams: (v) => new URLSearchParams({ k: v }).toString().slice(2),
    // (Third review) Go's PathEscape and URL paths keep `$&+,/:;=@`; PHP's urlencode escapes `~` and `*`; .NET's
    // UrlEncode keeps `!*()`, escapes `~`, writes lower-case hex (each written from its rules: no Go, PHP or .NET here).
    goPath: (v) => py("u.quote(sys.argv[1], safe=\"$&+,/:;=@\")", v),
    phpUrlencode: (v) => py("u.quote_plus(sys.argv[1], safe='').replace('~', '%7E')", v),
    dotnet: (v) => py("u.quote_plus(sys.argv[1], safe='!*()').replace('~', '%7E')", v).replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()),
  };
  let differ = 0;
  for (const [name, first] of Object.entries(encoders)) {
    const once = first(secret.real);
    if (once !== encodeURIComponent(secret.real)) differ++;
    for (const [name2, second] of [['', (v: string) => v] as const, ...Object.entries(encoders)]) {
      const form = second(once);
      const out = scrubBuffer(Buffer.from(`Location: /login?next=%2Fp%3Fkey%3D${form}\n`), p).toString('latin1');
      assert.ok(!out.includes(form), `${name} then ${name2 || 'nothing'}: ${form}`);
    }
  }
  assert.ok(differ >= 4, `${differ} encoders differ from encodeURIComponent`);
});

test("(review, round 36) inside JSON strings, once and twice: a value with a quote, a backslash, a slash and a letter past ASCII, as JSON.stringify, Python's ensure_ascii and PHP's json_encode write it; control: no raw value in them, and JSON's decoding gives it", () => {
  const real = 'pa"ss\\wörd/x-0123';
  const placeholder = 'SBPHplaceholder0123';
  const pairs = scrubPairs([{ name: 'P', placeholder, real, hosts: [], inQuery: false, allowPlaintext: false }]);
  const py = (v: string) => JSON.stringify(v).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const php = (v: string) => JSON.stringify(v).replaceAll('/', '\\/');
  for (const once of [JSON.stringify, py, php]) {
    for (const text of [once(real), JSON.stringify(once(real)), JSON.stringify({ content: [{ type: 'text', text: once(real) }] })]) {
      assert.doesNotMatch(scrubBuffer(Buffer.from(text), pairs).toString(), /pa|w\\?u00f6|wörd/, text);
      // Control: no raw value in it, and JSON's own decoding gives it back.
      assert.equal(text.includes(real), false);
      let v = JSON.parse(text);
      if (typeof v !== 'string') v = v.content[0].text;
      while (v.startsWith('"')) v = JSON.parse(v);
      assert.equal(v, real, text);
    }
  }
});

test("(review, round 36, third pass) the value with its special characters escaped as JSON encoders and HTML templates write them (.NET's \\u002B, Gson's \\u003d, Go's \\u0026 \\u003c, Java's uppercase \\u00E4, Go html/template's &#43;, OWASP's &#x2F;, named entities) is scrubbed; control: no raw value in them, and JSON's or HTML's decoding gives it", () => {
  const cases: Array<[string, string[]]> = [
    ['sk-ant-api03-R3al/Va1ue+Secret=0123456789abcdefXYZ', ['sk-ant-api03-R3al/Va1ue\\u002BSecret=0123456789abcdefXYZ', 'sk-ant-api03-R3al/Va1ue+Secret\\u003d0123456789abcdefXYZ', 'sk-ant-api03-R3al/Va1ue&#43;Secret=0123456789abcdefXYZ', 'sk-ant-api03-R3al&#x2F;Va1ue&#x2B;Secret&#x3D;0123456789abcdefXYZ']],
    ['pw-R3al&Secret<0123456789>abcdef', ['pw-R3al\\u0026Secret\\u003c0123456789\\u003eabcdef', 'pw-R3al&amp;Secret&lt;0123456789&gt;abcdef']],
    ['pässwörd-0123456789', ['p\\u00E4ssw\\u00F6rd-0123456789']],
  ];
  for (const [real, forms] of cases) {
    const placeholder = `SBPH${'x'.repeat(real.length - 4)}`;
    const pairs = scrubPairs([{ name: 'S', placeholder, real, hosts: [], inQuery: false, allowPlaintext: false }]);
    for (const form of forms) {
      const text = `{"error":"invalid key ${form}"}`;
      assert.equal(scrubBuffer(Buffer.from(text), pairs).toString(), `{"error":"invalid key ${placeholder}"}`, form);
      assert.equal(text.includes(real), false);
      assert.equal(form.includes('&') ? unescapeHtml(form) : JSON.parse(`"${form}"`), real, `control: ${form}`);
    }
  }
});

test("(review, round 36, fourth pass) more encoders' spellings (JavaScript's \\x2B, PHP's &#039;, XML's &apos;, a character past the BMP as a surrogate pair or one reference), a value mostly of punctuation streamed in small pieces, and a value of hundreds of letters past ASCII: scrubbed, its forms within the search's size", () => {
  const check = (real: string, forms: string[]) => {
    const placeholder = `SBPH${'x'.repeat(24)}`;
    const pairs = scrubPairs([{ name: 'S', placeholder, real, hosts: [], inQuery: false, allowPlaintext: false }]);
    for (const form of forms) assert.equal(scrubBuffer(Buffer.from(`<${form}>`), pairs).toString(), `<${placeholder}>`, form);
    return pairs;
  };
  check('key+abc/def0123==', ['key\\x2Babc\\x2Fdef0123\\x3D\\x3D', 'key\\x2babc/def0123==']);
  check("k3y'Secret0123456", ['k3y&#039;Secret0123456', 'k3y&apos;Secret0123456']);
  check('key😀abc0123456', ['key\\uD83D\\uDE00abc0123456', 'key&#128512;abc0123456', 'key&#x1F600;abc0123456']);
  // Seven bytes a byte held: a value of punctuation, its every character escaped, cut in 16-byte pieces.
  const punct = '!@#$%^&*()+=';
  const pairs = check(punct, []);
  const form = [...punct].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
  const s = new Scrubber(pairs);
  const input = Buffer.from(`x${form}y`);
  const out: Buffer[] = [];
  for (let i = 0; i < input.length; i += 16) out.push(s.push(input.subarray(i, i + 16)));
  out.push(s.end());
  assert.equal(Buffer.concat(out).toString(), `x${'SBPH'}${'x'.repeat(24)}y`);
  // Hundreds of distinct letters past ASCII: the forms stay within the search's 2,048.
  const wide = Array.from({ length: 400 }, (_, i) => String.fromCharCode(0x4e00 + i)).join('');
  assert.ok(check(wide, []).length <= 2048);
});

test('(review, round 38) a host that writes a byte at a time, with or without a pause after each: what a byte costs the scrubber and the body guard does not grow with the value\'s length (each reading went over the window again: ten bytes a byte of the value for the scrubber, one for the guard); control: a line break at every byte, let go each time, is read each time, and the measure sees it', async () => {
  const { Guard } = await import('../../lib/proxy/message-filter.js');
  type Filter = { push(b: Buffer): Buffer; release(): Buffer; end(): Buffer };
  const letters = 'Kq7vN2xLp9RtY4wZb8sDf3gHj6mC1aE5';
  const valueOf = (n: number) => letters.repeat(Math.ceil(n / letters.length)).slice(0, n);
  // Made once (what a run does before the agent starts); each stream gets its filter. The guard's window is a tenth
  // of the scrubber's for a value: its longer value makes a like window.
  const pairsOf = new Map([16, 1024].map((n) => [n, scrubPairs([{ name: 'T', placeholder: `SBPH${'p'.repeat(n - 4)}`, real: valueOf(n), hosts: ['api.test'], inQuery: false, allowPlaintext: false }])]));
  const filters: [string, (big: boolean) => Filter][] = [
    ['scrubber', (big) => new Scrubber(pairsOf.get(big ? 1024 : 16)!)],
    ['guard', (big) => new Guard([{ needle: Buffer.from(valueOf(big ? 4096 : 32)), rule: 'r', suspect: 'T' }])],
  ];
  const text = Buffer.alloc(16 << 10, 'the quick brown fox {"json": 1234} ');
  /** Bytes one at a time; `pause`: the timer's release after each (a host that waits longer than it between bytes). */
  const trickle = (f: Filter, body: Buffer, pause: boolean) => {
    let n = 0;
    for (let i = 0; i < body.length; i++) {
      n += f.push(body.subarray(i, i + 1)).length;
      if (pause) n += f.release().length;
    }
    n += f.end().length;
    assert.equal(n, body.length);
  };
  const ratio = (make: (big: boolean) => Filter, body: Buffer, pause: boolean) => {
    // Warmed first: a cold first call is slower whatever it is given.
    for (const big of [false, true]) trickle(make(big), body.subarray(0, 4096), pause);
    return ratioOf(() => trickle(make(true), body, pause), () => trickle(make(false), body, pause), 3);
  };
  for (const [name, make] of filters) {
    for (const pause of [false, true]) {
      const r = ratio(make, text, pause);
      assert.ok(r < 3, `${name}, ${pause ? 'a pause after each byte' : 'no pause'}: the longer value costs ${r.toFixed(1)} times the short one`);
    }
    // Control (the guard): a line break at every byte, let go at every byte, is read at every byte: the window's cost shows.
    if (name === 'guard') {
      const control = ratio(make, Buffer.alloc(12 << 10, '\n'), true);
      assert.ok(control > 4, `control, ${name}: ${control.toFixed(1)}`);
    }
  }
  // The scrubber's reading at a release begins after the line break before it (no form holds one): a line break at
  // every byte, let go at every byte, costs no more for the longer value either (review, round 38: ~70 µs a release).
  const breaks = ratio(filters[0]![1], Buffer.alloc(12 << 10, '\n'), true);
  assert.ok(breaks < 3, `scrubber, a line break at every byte, let go each time: the longer value costs ${breaks.toFixed(1)} times the short one`);
  // Control (the scrubber): the window read at every byte, as each piece was before, shows its cost.
  const everyByte = (n: number) => () => {
    const p = pairsOf.get(n)!;
    for (let i = 0; i < 1024; i++) scrubBuffer(text.subarray(i, i + 10 * n), p);
  };
  everyByte(16)();
  const control = ratioOf(everyByte(1024), everyByte(16), 3);
  assert.ok(control > 4, `control, scrubber: ${control.toFixed(1)}`);
});

test('(review, round 38) what a stream holds while its pieces wait costs about their bytes: 300 streams each holding a window of one-byte pieces grow the heap by under 80 kB a stream; control: the same pieces kept as they came cost over 150 kB a stream', async () => {
  const { setFlagsFromString } = await import('node:v8');
  const { runInNewContext } = await import('node:vm');
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const value = 'Kq7vN2xLp9RtY4wZb8sDf3gHj6mC1aE5'.repeat(8);
  const pairs256 = scrubPairs([{ name: 'T', placeholder: `SBPH${'p'.repeat(252)}`, real: value, hosts: ['api.test'], inQuery: false, allowPlaintext: false }]);
  const text = Buffer.alloc(2500, 'abc def ');
  const grown = (hold: () => unknown) => {
    gc();
    const before = process.memoryUsage();
    const kept = Array.from({ length: 300 }, hold);
    gc();
    const after = process.memoryUsage();
    assert.equal(kept.length, 300);
    return (after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers) / 300;
  };
  const perStream = grown(() => {
    const s = new Scrubber(pairs256);
    for (let i = 0; i < text.length; i++) assert.equal(s.push(text.subarray(i, i + 1)).length, 0);
    assert.equal(s.held, text.length);
    return s;
  });
  assert.ok(perStream < 80_000, `${Math.round(perStream)} bytes a stream`);
  const control = grown(() => Array.from({ length: text.length }, (_, i) => text.subarray(i, i + 1)));
  assert.ok(control > 150_000, `control: ${Math.round(control)} bytes a stream`);
  // One byte waiting: a small block, not a whole one (second pass: 16 KiB a stream).
  const one = grown(() => {
    const s = new Scrubber(pairs256);
    s.push(Buffer.from('a'));
    return s;
  });
  assert.ok(one < 4_000, `one byte waiting: ${Math.round(one)} bytes a stream`);
});

test('(review, round 38, second pass) a host that writes a window\'s worth ending in a line break, then pauses, again and again: what the scrubber keeps stays bounded, and four times the pieces take about four times as long (kept whole, the held text grew a piece a release and was copied each time); the answer is the text itself', () => {
  const value = 'Kq7vN2xLp9RtY4wZb8sDf3gHj6mC1aE5'.repeat(2);
  const p64 = scrubPairs([{ name: 'T', placeholder: `SBPH${'p'.repeat(60)}`, real: value, hosts: ['api.test'], inQuery: false, allowPlaintext: false }]);
  const piece = Buffer.from(`${'a'.repeat(10 * value.length - 2)}\n`);
  const run = (n: number) => {
    const s = new Scrubber(p64);
    let out = 0;
    for (let i = 0; i < n; i++) out += s.push(piece).length + s.release().length;
    assert.equal(out + s.end().length, n * piece.length);
    assert.equal(s.held, 0);
  };
  run(200);
  const ratio = ratioOf(() => run(4000), () => run(1000), 3);
  assert.ok(ratio < 7, `four times the pieces took ${ratio.toFixed(1)} times as long`);
});
