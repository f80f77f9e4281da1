// Finding secrets' values at a cost their bytes do not change
// (lib/secrets/form-search.ts): every whole form found, as a plain search finds
// it; and the time over a body of an agent's pattern the same whether its
// characters are in the secret or not, where a string search's time (the
// control) tells them apart.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FormSearch } from '../../lib/secrets/form-search.js';
import { BodyRefused, Guard } from '../../lib/proxy/message-filter.js';
import { scrubBuffer, scrubPairs } from '../../lib/proxy/scrub.js';
import { zOf } from '../stats.js';

/** Every place each form occurs, by a plain search. */
function plainly(text: Buffer, groups: Array<{ forms: Buffer[] }>, from = 0, limit = text.length): string[] {
  const out: string[] = [];
  for (let at = from; at < limit; at++) {
    for (const [g, group] of groups.entries()) for (const [f, form] of group.forms.entries()) if (at + form.length <= text.length && text.subarray(at, at + form.length).equals(form)) out.push(`${at}:${g}:${f}`);
  }
  return out;
}

test('every whole form is found where a plain search finds it: overlapping, at the edges, longer than its window, in Latin-1 text too; bounds respected', () => {
  let seed = 7;
  const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const groups = [
    { window: 3, forms: [Buffer.from('abab'), Buffer.from('abc'), Buffer.from('abaXYZ')] },
    { window: 5, forms: [Buffer.from('bbbbb')] },
    { window: 2, forms: [Buffer.from([0, 255, 0])] },
  ];
  const search = new FormSearch(groups);
  for (let round = 0; round < 200; round++) {
    // Few distinct bytes: forms and near misses everywhere.
    const alphabet = [0x61, 0x62, 0x63, 0x58, 0x59, 0x5a, 0, 255];
    const text = Buffer.from(Array.from({ length: 1 + rand(80) }, () => alphabet[rand(alphabet.length)] as number));
    const from = rand(text.length);
    const limit = from + rand(text.length - from + 1);
    const got = search.find(text, from, limit).map((h) => `${h.at}:${h.group}:${h.form}`);
    assert.deepEqual(got, plainly(text, groups, from, limit), text.toString('latin1'));
    assert.deepEqual(search.find(text.toString('latin1'), from, limit).map((h) => `${h.at}:${h.group}:${h.form}`), got);
  }
  assert.deepEqual(search.find(Buffer.from('ababab')).map((h) => h.at), [0, 2]);
  assert.equal(search.has(Buffer.from('xxabaXY')), false, 'a form past the end is not whole');
  assert.equal(new FormSearch([]).has(Buffer.from('abc')), false);
  assert.throws(() => new FormSearch([{ window: 4, forms: [Buffer.from('abc')] }]), /shorter than its group's window/);
});

test("(review, round 26) the time to look over a body of the agent's pattern does not tell whether its characters are in the secret: scrubbing and the body guard; control: a string search's time does", () => {
  // Two secrets alike but for one character: the agent's `1` stands in one (at index 28) and in the other not.
  const REAL = 'Kq7vN2xLp9RtY4wZb8sDf3gHj6mC1aE5';
  const OTHER = 'Kq7vN2xLp9RtY4wZb8sDf3gHj6mC9aE5';
  const pairsOf = (real: string) => scrubPairs([{ name: 'T', placeholder: 'Kq7vSBPHplaceholderPlaceholder00', real, hosts: ['api.test'], inQuery: false, allowPlaintext: false }]);
  const [inSecret, absent] = [pairsOf(REAL), pairsOf(OTHER)];
  const body = Buffer.from('K1#'.repeat(700_000));
  const control = zOf((real: string) => void body.includes(real), REAL, OTHER);
  assert.ok(Math.abs(control) > 3.5, `control: a string search's time tells them apart (z ${control.toFixed(2)})`);
  const scrub = zOf((p: typeof inSecret) => void scrubBuffer(body, p), inSecret, absent);
  assert.ok(Math.abs(scrub) < 3.5, `scrubbing: z ${scrub.toFixed(2)}`);
  // The same with the agent's `1` spelled as escapes the scrubber reads (each read as a character of the value or not).
  const spelled = Buffer.from('&#x31;\\x31%31&#49;'.repeat(120_000));
  const scrubSpelled = zOf((p: typeof inSecret) => void scrubBuffer(spelled, p), inSecret, absent);
  assert.ok(Math.abs(scrubSpelled) < 3.5, `scrubbing spelled text: z ${scrubSpelled.toFixed(2)}`);
  const guard = zOf((real: string) => {
    const g = new Guard([{ needle: Buffer.from(real), rule: 'r', suspect: 'T' }]);
    g.push(body);
    g.end();
  }, REAL, OTHER);
  assert.ok(Math.abs(guard) < 3.5, `the body guard: z ${guard.toFixed(2)}`);
  // And they still find it.
  const needles = [{ needle: Buffer.from(REAL), rule: 'r', suspect: 'T' }];
  assert.throws(() => new Guard(needles).push(Buffer.concat([body.subarray(0, 30), Buffer.from(REAL)])), BodyRefused);
  assert.equal(scrubBuffer(Buffer.from(`x${REAL}y`), inSecret).toString(), 'xKq7vSBPHplaceholderPlaceholder00y');
  assert.equal(scrubBuffer(Buffer.from(`x${REAL.replace('1', '&#x31;')}y`), inSecret).toString(), 'xKq7vSBPHplaceholderPlaceholder00y');
});

test('(review, round 35) forms whose windows differ only in their last byte by a few units (`keykey%2`, `keykey%C`, `keykey%c`, `keykeyÃ©`: a value percent-encoded in both cases and twice): a table is made at once and each is found; control: had the hash\'s own top bits picked the slot, three of them would share one for every multiplier, and no table would ever be made', () => {
  const forms = ['keykeyÃ©', 'keykey%C3%A9', 'keykey%25C3%25A9', 'keykey%c3%a9', 'keykey%25c3%25a9', 'keykey%1', 'keykey%3'].map((f) => Buffer.from(f, 'latin1'));
  const t0 = Date.now();
  const s = new FormSearch([{ window: 8, forms }]);
  assert.ok(Date.now() - t0 < 1000);
  const text = Buffer.concat(forms.flatMap((f) => [Buffer.from('..'), f]));
  assert.deepEqual(s.find(text).map((h) => `${h.at}:${h.group}:${h.form}`), plainly(text, [{ forms }]));
  // The control: the slot by the top six bits of the window's hash, for 1,000 random odd multipliers.
  let made = 0;
  for (let k = 0; k < 1000; k++) {
    const b = (Math.floor(Math.random() * 2 ** 32) | 1) | 0;
    const used = new Map<number, number>();
    const seen = new Set<number>();
    let ok = true;
    for (const f of forms) {
      let h = 0;
      for (let i = 0; i < 8; i++) h = (Math.imul(h, b) + f[i]! + 1) | 0;
      if (seen.has(h)) continue;
      seen.add(h);
      const slot = h >>> 26;
      used.set(slot, (used.get(slot) ?? 0) + 1);
      if (used.get(slot)! > 2) ok = false;
    }
    if (ok) made++;
  }
  assert.equal(made, 0);
});
