// What of an agent's names reaches your terminal (lib/util/printable.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { asciiJson, printable } from '../../lib/util/printable.js';

test('printable: control characters, bidirectional overrides and characters that show as nothing are escaped; ordinary text, tabs and other scripts stay', () => {
  assert.equal(printable('\x1b]0;owned\x07main\r'), '\\x1b]0;owned\\x07main\\x0d');
  assert.equal(printable('ma\u200bin'), 'ma\\u{200b}in');
  assert.equal(printable('main\u2060\ufeff\u00ad'), 'main\\u{2060}\\u{feff}\\xad');
  assert.equal(printable('evil\u202egnp.exe'), 'evil\\u{202e}gnp.exe');
  assert.equal(printable('tag\u{e0041}'), 'tag\\u{e0041}');
  assert.equal(printable('a\tb\nc'), 'a\tb\nc');
  // (Review, round 29) A newline followed by two spaces no longer stays in one line: a name forged an indented line.
  assert.equal(printable('a\nb\n  c', true), 'a\\x0ab\\x0a  c');
  // (Review, round 29) Members of the classes the list missed: a musical format character, the line separator, a
  // private-use character, a lone surrogate, an Egyptian format control, an Arabic number sign.
  assert.equal(printable('ma\u{1d173}in\u2028x\ue000\ud800\u{13430}\u0600'), 'ma\\u{1d173}in\\u{2028}x\\u{e000}\\u{d800}\\u{13430}\\u{600}');
  assert.equal(printable('naïve-Zweig-ブランチ 🙂'), 'naïve-Zweig-ブランチ 🙂');
});

test('asciiJson: what JSON.parse reads back is the value; nothing past printable ASCII is written raw (review, round 29: agent audit --json wrote C1 controls and bidirectional overrides)', () => {
  const value = { p: 'left\u009b2J\u202eevil\u2028fake 🙂 ブ', n: 1, none: null };
  const out = asciiJson(value);
  assert.deepEqual(JSON.parse(out), value);
  assert.match(out, /^[\x09\x0a\x20-\x7e]*$/);
  // The control: JSON.stringify writes them raw.
  assert.match(JSON.stringify(value), /\u009b/);
});
