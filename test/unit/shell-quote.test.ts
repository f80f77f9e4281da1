import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { formatCommand } from '../../templates/command.js';
import { shellQuote } from '../../templates/shell-quote.js';

const TABLE: Array<[string, string]> = [
  ['', "''"],
  ['plain', 'plain'],
  ['/usr/bin/env', '/usr/bin/env'],
  ['a b', "'a b'"],
  ["it's", "'it'\\''s'"],
  ["'", "\\'"],
  ['"q"', `'"q"'`],
  ['$HOME', "'$HOME'"],
  ['`id`', "'`id`'"],
  ['a\nb', "'a\nb'"],
  ['tab\there', `'tab'"$(printf '\\011')"'here'`],
  ['\u001b[31m', `"$(printf '\\033')"'[31m'`],
  ['naïve ✓', "'naïve ✓'"],
  ['*', "'*'"],
  ['a;b|c&d', "'a;b|c&d'"],
  ['--flag=x', '--flag=x'],
  ['~', "'~'"],
];

test('shellQuote: the quoting table', () => {
  for (const [input, expected] of TABLE) assert.equal(shellQuote(input), expected, JSON.stringify(input));
});

test('shellQuote: sh reads every quoted value back exactly', () => {
  for (const [input] of TABLE) {
    const r = spawnSync('sh', ['-c', `printf '%s' ${shellQuote(input)}`], { encoding: 'utf8' });
    assert.equal(r.stdout, input, JSON.stringify(input));
  }
});

test('formatCommand: env removal, variables, cwd and descriptors', () => {
  const line = formatCommand({
    file: '/usr/bin/env',
    args: ['a b', ''],
    env: { K: 'v w' },
    unsetEnv: ['TOKEN'],
    cwd: '/tmp/x y',
    fds: [{ fd: 3, path: '/tmp/f' }],
    pipes: [{ fd: 4, direction: 'from-child' }, { fd: 5, direction: 'to-child' }],
  });
  assert.equal(line, "cd '/tmp/x y' && env -u TOKEN K='v w' /usr/bin/env 'a b' '' 3</tmp/f 4>/dev/null 5</dev/null");
});

test('formatCommand: a pasted command runs the same argv', () => {
  const args = ['', 'sp ace', "q'uote", '$x', 'l\nf', 'ü'];
  const line = formatCommand({ file: 'node', args: ['-e', 'console.log(JSON.stringify(process.argv.slice(1)))', ...args] });
  const r = spawnSync('sh', ['-c', line], { encoding: 'utf8' });
  assert.deepEqual(JSON.parse(r.stdout), args);
});
