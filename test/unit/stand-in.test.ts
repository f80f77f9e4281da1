// The Docker stand-in's text and the host side's strict reading of what it
// sends: the request body, the arguments that may run, the answer's shape.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { HOOK_PATH, HOOK_TOKEN_VAR, HOOK_URL_VAR } from '../../lib/hooks/hook-env.js';
import { encodeHookResponse, hookArgsProblem, parseHookReport, parseHookRequest } from '../../lib/hooks/host-agent-hooks.js';
import { standInScript, STAND_IN_PATH } from '../../templates/stand-in.js';
import { homeFileReadCommand, homeFileWriteCommand } from '../../templates/docker-home-file.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const script = standInScript({ urlVar: HOOK_URL_VAR, tokenVar: HOOK_TOKEN_VAR, path: HOOK_PATH });

test('the stand-in: a POSIX sh script that posts to the hook endpoint with the bearer token and refuses other commands', () => {
  assert.equal(STAND_IN_PATH, '/usr/local/bin/stashbase');
  assert.ok(script.startsWith('#!/bin/sh\n'));
  for (const part of [
    'if [ "${1-}" != agent ] || [ "${2-}" != hooks ]; then',
    'if [ -z "${STASHBASE_HOOK_URL-}" ] || [ -z "${STASHBASE_HOOK_TOKEN-}" ]; then',
    `status=$(curl -sS --noproxy '*' --max-time 60 -X POST \\`,
    // (Review) the token in a file curl reads, never on its command line.
    `(umask 077 && printf 'Authorization: Bearer %s\\n' "\${STASHBASE_HOOK_TOKEN}" > "$tmp.h") || exit 2`,
    '-H @"$tmp.h" -H \'Content-Type: application/json\' \\',
    `--data-binary @"$tmp" -o "$tmp.out" -w '%{http_code}' "\${STASHBASE_HOOK_URL}/agent-hooks") || {`,
    'exit "$code"',
  ]) assert.ok(script.includes(part), part);
  assert.doesNotMatch(script, /-H "Authorization/);
  for (const shell of ['sh', 'bash']) assert.equal(spawnSync(shell, ['-n'], { input: script }).status, 0, `${shell} -n`);
});

test('the request: exactly args_b64 and stdin_b64, base64 of UTF-8, within limits', () => {
  const body = JSON.stringify({ args_b64: ['agent', 'hooks', 'deps', 'check'].map(b64), stdin_b64: b64('{"tool_name":"Bash"} é') });
  assert.deepEqual(parseHookRequest(body), { args: ['agent', 'hooks', 'deps', 'check'], stdin: '{"tool_name":"Bash"} é' });
  assert.deepEqual(parseHookRequest('{"args_b64":[],"stdin_b64":""}'), { args: [], stdin: '' });
  const bad: Array<[string, RegExp]> = [
    ['nope', /not JSON/],
    ['[]', /not a JSON object/],
    ['{"args_b64":[]}', /exactly args_b64 and stdin_b64/],
    ['{"args_b64":[],"stdin_b64":"","x":1}', /exactly args_b64 and stdin_b64/],
    ['{"args_b64":"a","stdin_b64":""}', /args_b64 must be a list/],
    ['{"args_b64":["a b"],"stdin_b64":""}', /args_b64\[0\] is not base64/],
    ['{"args_b64":[1],"stdin_b64":""}', /args_b64\[0\] is not base64/],
    ['{"args_b64":[],"stdin_b64":"QQ"}', /stdin_b64 is not base64/],
    [`{"args_b64":[],"stdin_b64":"${Buffer.from([0xff, 0xfe]).toString('base64')}"}`, /stdin_b64 is not UTF-8/],
    [JSON.stringify({ args_b64: Array(41).fill('YQ=='), stdin_b64: '' }), /at most 40/],
    [JSON.stringify({ args_b64: [], stdin_b64: 'A'.repeat(1024 * 1024 + 4) }), /larger than/],
  ];
  for (const [text, re] of bad) assert.throws(() => parseHookRequest(text), re, text.slice(0, 60));
});

test('the answer: one line, keys in a fixed order, values base64', () => {
  assert.equal(encodeHookResponse({ exit: 0, stdout: '{"a":1}\n', stderr: '' }), `{"exit":0,"stdout_b64":"${b64('{"a":1}\n')}","stderr_b64":""}`);
  assert.equal(encodeHookResponse({ exit: 300, stdout: '', stderr: 'x' }), `{"exit":2,"stdout_b64":"","stderr_b64":"eA=="}`);
});

test('only the check, with its known flags, runs on the host', () => {
  const ok = (args: string) => hookArgsProblem(['agent', 'hooks', 'deps', 'check', ...args.split(' ').filter(Boolean)]);
  assert.equal(ok(''), null);
  assert.equal(ok('--agent codex'), null);
  assert.equal(ok('--agent=claude'), null);
  assert.equal(ok('--ecosystem npm left-pad @scope/x@^1 --json'), null);
  assert.equal(ok('--ecosystem=pypi Django>=4'), null);
  assert.equal(hookArgsProblem(['agent', 'run', '--', 'sh']), 'only "stashbase agent hooks deps check" runs on the host from the sandbox');
  assert.equal(hookArgsProblem(['agent', 'hooks', 'deps', 'install', 'claude']), 'only "stashbase agent hooks deps check" runs on the host from the sandbox');
  assert.equal(ok('--profile evil'), '"--profile" is not allowed from the sandbox');
  assert.equal(ok('--profile-source=directory'), '"--profile-source=directory" is not allowed from the sandbox');
  assert.equal(ok('--agent gemini'), '--agent takes claude, codex');
  assert.equal(ok('--agent'), '--agent takes claude, codex');
  assert.equal(ok('--ecosystem rubygems x'), '--ecosystem takes npm, pypi, crates, go');
  assert.equal(ok('left-pad'), 'package names need --ecosystem');
  assert.equal(ok('--json --json'), '--json given more than once');
  assert.equal(hookArgsProblem(['agent', 'hooks', 'deps', 'check', '--ecosystem', 'npm', 'a\nb']), '"a\\nb" is not a package name');
  assert.equal(ok(`--ecosystem npm ${Array.from({ length: 33 }, (_, i) => `p${i}`).join(' ')}`), 'at most 32 packages at once');
});

test("a native run's report: dependency events only, field by field", () => {
  const e = { type: 'dependency', agent: 'claude', ecosystem: 'npm', package: 'x', spec: 'x@1', version: '1.0.0', decision: 'block', answer: 'deny', reasons: ['gone'] };
  assert.deepEqual(parseHookReport(JSON.stringify({ events: [e] })), [e]);
  assert.throws(() => parseHookReport(JSON.stringify({ events: [{ ...e, decision: 'fine' }] })), /events\[0\] is not a dependency event/);
  assert.throws(() => parseHookReport(JSON.stringify({ events: [{ ...e, extra: 1 }] })), /events\[0\]/);
  assert.throws(() => parseHookReport(JSON.stringify({ events: [e], more: 1 })), /must be \{"events"/);
  assert.throws(() => parseHookReport('x'), /not JSON/);
});

test('reading and writing a file in the home volume: a container with the volume and nothing else', () => {
  const io = { docker: 'docker', image: 'stashbase-sandbox:latest', volume: 'stashbase-agent-home', home: '/home/agent', user: '1000:1000', path: '/home/agent/.claude/settings.json' };
  const head = ['run', '--rm', '--network', 'none', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges', '--user', '1000:1000', '--mount', 'type=volume,source=stashbase-agent-home,target=/home/agent', '--entrypoint', 'sh', 'stashbase-sandbox:latest'];
  assert.deepEqual(homeFileReadCommand(io), { file: 'docker', args: [...head, '-c', '[ -e "$1" ] || exit 3; exec cat -- "$1"', 'sh', '/home/agent/.claude/settings.json'] });
  const w = [...head];
  w.splice(2, 0, '-i');
  assert.deepEqual(homeFileWriteCommand(io), { file: 'docker', args: [...w, '-c', 'mkdir -p -- "$(dirname -- "$1")" && cat > "$1.stashbase-new" && mv -f -- "$1.stashbase-new" "$1"', 'sh', '/home/agent/.claude/settings.json'] });
});
