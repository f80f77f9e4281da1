// Shell completion, driven by bash itself: the script `stashbase completion
// bash` prints is evaluated, the completion function called the way bash's
// programmable completion calls it (COMP_WORDS, COMP_CWORD), and COMPREPLY
// read back. The candidates come from the command table --help uses.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { BIN, needs, tempHome, writeFile } from '../helpers.js';

const t = tempHome();
after(() => t.cleanup());
const bin = join(t.dir, 'bin');
chmodSync(writeFile(join(bin, 'stashbase'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`), 0o755);
writeFile(join(t.sbHome, 'agents', 'claude.toml'), 'description = "c"\n');
writeFile(join(t.sbHome, 'agents', 'codex.toml'), 'description = "x"\n');

/** COMPREPLY for the command line `line` with the cursor at its end (a trailing space: a new, empty word). */
function complete(line: string): string[] {
  const words = line.split(' ');
  const script = `eval "$(stashbase completion bash)"; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _stashbase; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const r = spawnSync('bash', ['-c', script], { env: { ...t.env, PATH: `${bin}:${process.env.PATH}` }, cwd: t.home, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\n').filter(Boolean);
}

test('bash completes commands, subcommands, flags, listed values and profile names', () => {
  assert.deepEqual(complete('stashbase '), ['agent', 'profile', 'scan', 'help', 'completion']);
  assert.deepEqual(complete('stashbase ag'), ['agent']);
  assert.deepEqual(complete('stashbase agent wo'), ['worktrees']);
  assert.deepEqual(complete('stashbase agent docker '), ['build', 'doctor', 'status', 'cleanup', 'shell', 'help']);
  assert.deepEqual(complete('stashbase agent run --prof'), ['--profile', '--profile-source']);
  assert.deepEqual(complete('stashbase agent run --profile '), ['claude', 'codex', 'default']);
  assert.deepEqual(complete('stashbase agent run --profile co'), ['codex']);
  assert.deepEqual(complete('stashbase agent run --backend '), ['native', 'docker']);
  assert.deepEqual(complete('stashbase agent run --docker-sandbox t'), ['true']);
  assert.deepEqual(complete('stashbase agent run -- cla'), []);
  assert.deepEqual(complete('stashbase nope '), []);
  assert.deepEqual(complete('stashbase help agent v'), ['validate']);
});

test('fish completes through its own complete -C, with the script stashbase prints', needs('fish'), () => {
  const ask = (line: string) => spawnSync('fish', ['-c', `stashbase completion fish | source; complete -C ${JSON.stringify(line)}`], { env: { ...t.env, PATH: `${bin}:${process.env.PATH}` }, cwd: t.home, encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  assert.deepEqual(ask('stashbase ag'), ['agent']);
  // fish sorts what it is given.
  assert.deepEqual(ask('stashbase agent run --backend '), ['docker', 'native']);
  assert.deepEqual(ask('stashbase agent run --profile co'), ['codex']);
});

test('zsh completes through bashcompinit, with the script stashbase prints', needs('zsh'), () => {
  const ask = (words: string[]) => spawnSync('zsh', ['-c', `autoload -U +X compinit && compinit -u; eval "$(stashbase completion zsh)"; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _stashbase; print -l $COMPREPLY`], { env: { ...t.env, PATH: `${bin}:${process.env.PATH}` }, cwd: t.home, encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  assert.deepEqual(ask(['stashbase', 'agent', 'd']), ['docker']);
  assert.deepEqual(ask(['stashbase', 'agent', 'run', '--docker-sandbox', '']), ['true', 'false']);
});

test('zsh and fish scripts are printed too; another shell is a usage error', () => {
  const run = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { env: t.env, encoding: 'utf8' });
  assert.match(run(['completion', 'zsh']).stdout, /^# stashbase completion[^\n]*\nautoload -U \+X bashcompinit && bashcompinit\n/);
  assert.match(run(['completion', 'fish']).stdout, /complete -c stashbase -f -a '\(__stashbase_complete\)'\n$/);
  const bad = run(['completion', 'tcsh']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /^Usage: stashbase completion bash\|zsh\|fish/);
});
