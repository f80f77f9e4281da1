import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type FlagSpec, parseArgv } from '../../lib/util/argv.js';

const SPECS: FlagSpec[] = [
  { name: 'profile', kind: 'value', value: 'name', help: '' },
  { name: 'silent', kind: 'bool', help: '' },
  { name: 'worktree', kind: 'optional-bool', help: '' },
  { name: 'docker-cpus', kind: 'value', help: '' },
];

const parse = (argv: string[]) => parseArgv(argv, SPECS, 'stashbase agent run');

test('values are kept exactly as written', () => {
  const p = parse(['--docker-cpus', '1.50', '--profile=0x1', '--', 'claude', '--profile', 'x']);
  assert.equal(p.flags.get('docker-cpus'), '1.50');
  assert.equal(p.flags.get('profile'), '0x1');
  assert.deepEqual(p.rest, ['claude', '--profile', 'x']);
});

test('--worktree and --worktree=false', () => {
  assert.equal(parse(['--worktree']).flags.get('worktree'), true);
  assert.equal(parse(['--worktree=false']).flags.get('worktree'), false);
  assert.equal(parse(['--worktree=true']).flags.get('worktree'), true);
  assert.throws(() => parse(['--worktree=no']), { message: '--worktree takes true or false, not "no"' });
});

test('errors are usage errors with one-line reasons', () => {
  assert.throws(() => parse(['--bogus']), { name: 'UsageError', message: 'unknown option --bogus (see stashbase agent run --help)' });
  assert.throws(() => parse(['-x']), { message: 'unknown option -x (see stashbase agent run --help)' });
  assert.throws(() => parse(['--profile']), { message: '--profile needs a value (name)' });
  assert.throws(() => parse(['--profile', '--silent']), { message: '--profile needs a value (name)' });
  assert.throws(() => parse(['--profile', '--']), { message: '--profile needs a value (name)' });
  assert.throws(() => parse(['--silent', '--silent']), { message: '--silent given more than once' });
  assert.throws(() => parse(['--silent=maybe']), { message: '--silent takes true or false, not "maybe"' });
});

test('help and positionals', () => {
  const p = parse(['x', '--help', 'y']);
  assert.equal(p.help, true);
  assert.deepEqual(p.positionals, ['x', 'y']);
  assert.equal(p.rest, null);
});

test('a one-letter alias where a spec names one', () => {
  const specs: FlagSpec[] = [{ name: 'message', kind: 'value', value: 'text', short: 'm', help: '' }, { name: 'squash', kind: 'bool', help: '' }];
  const p = parseArgv(['x', '-m', 'fix: the thing', '--squash'], specs, 'stashbase agent worktrees merge');
  assert.equal(p.flags.get('message'), 'fix: the thing');
  assert.deepEqual(p.positionals, ['x']);
  assert.throws(() => parseArgv(['-m', 'a', '--message', 'b'], specs, 'm'), { message: '--message given more than once' });
  assert.throws(() => parseArgv(['-m'], specs, 'm'), { message: '--message needs a value (text)' });
  assert.throws(() => parseArgv(['-s'], specs, 'stashbase agent worktrees merge'), { message: 'unknown option -s (see stashbase agent worktrees merge --help)' });
});
