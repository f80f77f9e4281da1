// The secret scan's pure parts: the rule set as configured, masking,
// placeholders, private keys, bound secrets, reading added lines out of diffs.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import { boundSecretHits, privateKeyHits } from '../../lib/scan/detectors.js';
import { parseAddedLines, unquoteGitPath } from '../../lib/scan/diff.js';
import { dedupe, formatFinding, mask, maskBound } from '../../lib/scan/findings.js';
import { parseRange } from '../../lib/scan/git-units.js';
import { loadRuleSet, ruleSetHits } from '../../lib/scan/rule-set.js';
import { makePlaceholder } from '../../lib/secrets/placeholder.js';
import type { ScanUnit } from '../../lib/scan/unit.js';
import { rankZ } from '../stats.js';

const unit = (text: string, file = 'config.env'): ScanUnit => ({ file, text, lineNumbers: null });
const rules = async (text: string, file?: string) => (await ruleSetHits(await loadRuleSet(), unit(text, file))).map((h) => [h.rule, h.masked]);

// Built at run time so this file holds no token a scanner would flag.
const AWS_ID = 'AKIA' + 'QWERTYUIOPASDFGH';
const GH = 'ghp_' + 'aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A';

test('rule set: the preset loads, AWS access key ids are looked for (off in the preset by default), rule names are short', async () => {
  assert.deepEqual(await rules(`aws_access_key_id = ${AWS_ID}\n`), [['aws/AWSAccessKeyID', 'AKIA****************']]);
  assert.deepEqual(await rules(`token: ${GH}\n`), [['github/GITHUB_TOKEN', 'ghp_************************…']]);
  assert.deepEqual(await rules('const x = 1;\n'), []);
});

test("rule set: the preset's example values and stashbase placeholders are not findings", async () => {
  assert.deepEqual(await rules('aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n'), []);
  const ph = makePlaceholder(GH);
  assert.match(ph, /^ghp_SBPH/);
  assert.equal(ph.length, GH.length);
  assert.deepEqual(await rules(`token: ${ph}\n`), []);
  assert.deepEqual(await rules(`id = ${makePlaceholder(AWS_ID)}\n`), []);
});

test('rule set: inline secretlint-disable comments are not honoured', async () => {
  assert.deepEqual(await rules(`// secretlint-disable\ntoken: ${GH}\n`), [['github/GITHUB_TOKEN', 'ghp_************************…']]);
});

test('mask: a known prefix or at most 4 characters and a quarter of the value; stars capped', () => {
  assert.equal(mask(AWS_ID), 'AKIA****************');
  assert.equal(mask('abcdefgh'), 'ab******');
  assert.equal(mask('abc'), '***');
  assert.equal(mask('x'.repeat(40)), 'xxxx' + '*'.repeat(24) + '…');
  assert.equal(maskBound('ghp_' + 'z'.repeat(10)), 'ghp_**********');
  assert.equal(maskBound('plainsecretvalue'), '****************');
  assert.equal(formatFinding({ file: 'a\u001b[31m.txt', line: 3, rule: 'r', masked: 'ab**', commit: '0123456789abcdef0123' }), 'a\\x1b[31m.txt:3 r ab** (commit 0123456789ab)');
});

test('private keys: a real PEM and OpenSSH key block, an encrypted one; a documentation header is not', () => {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256', privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  assert.deepEqual(privateKeyHits(`x\n${privateKey}`).map((h) => [h.rule, h.masked]), [['private-key', '-----BEGIN PRIVATE KEY-----']]);
  const openssh = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n';
  assert.deepEqual(privateKeyHits(openssh).map((h) => h.masked), ['-----BEGIN OPENSSH PRIVATE KEY-----']);
  assert.equal(privateKeyHits('-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n').length, 1);
  assert.equal(privateKeyHits('-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----\n').length, 0);
  assert.equal(privateKeyHits('see -----BEGIN ... PRIVATE KEY----- in the docs').length, 0);
});

test('bound secrets: every exact occurrence; too short values are not searched', () => {
  const hits = boundSecretHits('a=s3cr3t-value!\nb="s3cr3t-value!"', [{ name: 'TOKEN', value: 's3cr3t-value!' }, { name: 'PIN', value: '1234' }]);
  assert.deepEqual(hits.map((h) => [h.start, h.rule, h.masked]), [[2, 'bound-secret:TOKEN', '*************'], [19, 'bound-secret:TOKEN', '*************']]);
});

test('bound secrets in text with characters past Latin-1, several secrets, a value repeated back to back: found at their places in the text, not overlapping themselves', () => {
  const bound = [{ name: 'A', value: 'ключ-secret-1' }, { name: 'B', value: 'abcabcabc' }];
  const text = 'é€ ключ-secret-1 😀 abcabcabcabcabcabc ключ-secret-1';
  const hits = boundSecretHits(text, bound);
  const plain = (v: string) => { const out = []; for (let i = text.indexOf(v); i !== -1; i = text.indexOf(v, i + v.length)) out.push(i); return out; };
  assert.deepEqual(hits.map((h) => [h.start, h.end, h.rule]), [...plain('ключ-secret-1').map((i) => [i, i + 13, 'bound-secret:A']), ...plain('abcabcabc').map((i) => [i, i + 9, 'bound-secret:B'])].sort((a, b) => (a[0] as number) - (b[0] as number)));
  assert.equal(hits.length, 4);
  // Many hits cost no more than a pass (counted on from the last): 100,000 of them.
  assert.equal(boundSecretHits('abcabcabc.'.repeat(100_000), bound).length, 100_000);
});

test("(review, round 34) the scan's time over the agent's text does not tell where a character of a bound secret is: control: a string search's time does", () => {
  const REAL = 'Kq7vN2xLp9RtY4wZb8sDf3gHj6mC1aE5';
  const bound = [{ name: 'T', value: REAL }];
  // The secret's first character, then one of it (last at index 28), against a character it does not hold.
  const inSecret = 'K1#'.repeat(700_000);
  const absent = 'K@#'.repeat(700_000);
  const timedZ = (fn: (t: string) => void): number => {
    fn(inSecret);
    fn(absent);
    const ta: number[] = [];
    const tb: number[] = [];
    const once = (t: string) => {
      const t0 = process.hrtime.bigint();
      fn(t);
      return Number(process.hrtime.bigint() - t0) / 1e6;
    };
    // In turns, each first every other round: what the one before leaves (a collection due, a cache) falls on both alike.
    for (let i = 0; i < 15; i++) {
      if (i % 2 === 0) {
        ta.push(once(inSecret));
        tb.push(once(absent));
      } else {
        tb.push(once(absent));
        ta.push(once(inSecret));
      }
    }
    return rankZ(ta, tb);
  };
  const control = timedZ((t) => void t.indexOf(REAL));
  assert.ok(Math.abs(control) > 3.5, `control: a string search's time tells them apart (z ${control.toFixed(2)})`);
  const scan = timedZ((t) => void boundSecretHits(t, bound));
  assert.ok(Math.abs(scan) < 3.5, `the scan: z ${scan.toFixed(2)}`);
  assert.equal(boundSecretHits(`x${inSecret.slice(0, 9)}${REAL}`, bound).length, 1);
});

test('diff: added lines with their line numbers; content that looks like headers; quoted names; deletions; binary', () => {
  const diff = [
    'diff --git a/a.txt b/a.txt',
    '--- a/a.txt',
    '+++ b/a.txt',
    '@@ -1,0 +2,3 @@',
    '+one',
    '++++ not a header',
    '+diff --git x y',
    '@@ -9 +12 @@',
    '-old',
    '+new',
    '\\ No newline at end of file',
    'diff --git "a/t\\tab" "b/t\\tab"',
    'new file mode 100644',
    '--- /dev/null',
    '+++ "b/t\\tab \\303\\251"',
    '@@ -0,0 +1 @@',
    '+x',
    'diff --git a/gone b/gone',
    'deleted file mode 100644',
    '--- a/gone',
    '+++ /dev/null',
    '@@ -1 +0,0 @@',
    '-bye',
    'diff --git a/bin b/bin',
    '--- a/bin',
    '+++ b/bin',
    '@@ -0,0 +1,2 @@',
    '+ok',
    '+a\0b',
    '',
  ].join('\n');
  const skipped: string[] = [];
  const units = parseAddedLines(diff, 1000, (f, why) => skipped.push(`${f}: ${why}`));
  assert.deepEqual(units, [
    { file: 'a.txt', text: 'one\n+++ not a header\ndiff --git x y\nnew', lineNumbers: [2, 3, 4, 12] },
    { file: 't\tab é', text: 'x', lineNumbers: [1] },
  ]);
  assert.deepEqual(skipped, ['bin: binary']);
});

test('diff: commit marks of git log; the size cap cuts a file', () => {
  const log = '\u0001aaaa\ndiff --git a/f b/f\n+++ b/f\n@@ -0,0 +1,2 @@\n+12345\n+67890\n\u0001bbbb\ndiff --git a/f b/f\n+++ b/f\n@@ -2,0 +3 @@\n+x\n';
  const skipped: string[] = [];
  assert.deepEqual(parseAddedLines(log, 8, (f, why) => skipped.push(`${f}: ${why}`)), [
    { file: 'f', text: '12345', lineNumbers: [1], commit: 'aaaa' },
    { file: 'f', text: 'x', lineNumbers: [3], commit: 'bbbb' },
  ]);
  assert.deepEqual(skipped, ['f: added text past 8 bytes not scanned']);
  assert.equal(unquoteGitPath('"a\\"b\\\\c"'), 'a"b\\c');
});

test('range: a new branch (remote side all zeros), a deletion, refused forms', () => {
  const z = '0'.repeat(40);
  assert.deepEqual(parseRange(`${z}..abcd1234`), { base: null, head: 'abcd1234' });
  assert.deepEqual(parseRange(`abcd..ef01`), { base: 'abcd', head: 'ef01' });
  assert.equal(parseRange(`abcd..${z}`), null);
  for (const bad of ['HEAD..main', 'abcd...ef01', 'abcd..', '--all', 'ABCD..ef01', `abcd..ef01 x`]) {
    assert.throws(() => parseRange(bad), (e: Error & { exitCode?: number }) => e.exitCode === 2, bad);
  }
});

test('dedupe: the same line, rule and match once (a range can add it twice)', () => {
  const f = { file: 'a', line: 1, rule: 'r', masked: 'x**' };
  assert.deepEqual(dedupe([{ ...f, commit: 'c1' }, { ...f, commit: 'c2' }, { ...f, line: 2 }]), [{ ...f, commit: 'c1' }, { ...f, line: 2 }]);
});
