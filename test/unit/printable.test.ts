// What of an agent's names reaches your terminal (lib/util/printable.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { printable } from '../../lib/util/printable.js';

test('printable: control characters, bidirectional overrides and characters that show as nothing are escaped; ordinary text, tabs and other scripts stay', () => {
  assert.equal(printable('\x1b]0;owned\x07main\r'), '\\x1b]0;owned\\x07main\\x0d');
  assert.equal(printable('ma\u200bin'), 'ma\\u{200b}in');
  assert.equal(printable('main\u2060\ufeff\u00ad'), 'main\\u{2060}\\u{feff}\\xad');
  assert.equal(printable('evil\u202egnp.exe'), 'evil\\u{202e}gnp.exe');
  assert.equal(printable('tag\u{e0041}'), 'tag\\u{e0041}');
  assert.equal(printable('a\tb\nc'), 'a\tb\nc');
  assert.equal(printable('a\nb\n  c', true), 'a\\x0ab\n  c');
  assert.equal(printable('naïve-Zweig-ブランチ 🙂'), 'naïve-Zweig-ブランチ 🙂');
});
