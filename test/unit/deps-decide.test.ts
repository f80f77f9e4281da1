// The pure parts of the dependency check: edit distance and near misses,
// reading registry and OSV documents, the verdicts, and the hook's answers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decide, type DecideInput } from '../../lib/deps/decide.js';
import { editDistance } from '../../lib/deps/edit-distance.js';
import { coveringVersion, maliciousEntry, purl } from '../../lib/deps/osv.js';
import { npmFactsFrom, packumentUrl, resolveNpmVersion } from '../../lib/deps/registries/npm.js';
import { jsonApiUrl, simpleFactsFrom } from '../../lib/deps/registries/pypi.js';
import { indexPath } from '../../lib/deps/registries/crates.js';
import { escapePath } from '../../lib/deps/registries/go.js';
import { DEFAULT_DEPENDENCY_CHECK } from '../../lib/deps/settings.js';
import { nearPopular } from '../../lib/deps/typosquat.js';
import { noProxy } from '../../lib/deps/http.js';
import { answerOf, failureOutput, hookOutput, parseHookInput } from '../../lib/hooks/hook-answer.js';
import type { Decision } from '../../lib/deps/types.js';

test('edit distance: insertions, deletions, substitutions and swaps of neighbours each cost one', () => {
  const cases: Array<[string, string, number]> = [
    ['lodash', 'lodash', 0], ['lodash', 'lodahs', 1], ['requests', 'reqeusts', 1], ['express', 'expres', 1],
    ['express', 'expresss', 1], ['react', 'raect', 1], ['cross-env', 'crossenv', 1], ['colors', 'colour', 2],
    ['', 'abc', 3], ['abc', '', 3], ['kitten', 'sitting', 3], ['ab', 'ba', 1], ['abcdef', 'badcfe', 3],
  ];
  for (const [a, b, d] of cases) {
    assert.equal(editDistance(a, b), d, `${a} / ${b}`);
    assert.equal(editDistance(b, a), d, `${b} / ${a}`);
  }
  // Past the limit it stops early and says limit + 1.
  assert.equal(editDistance('completely', 'different', 2), 3);
  assert.equal(editDistance('a', 'abcdef', 2), 3);
});

test('near misses: the closest popular name, never the name itself, nothing for short names or listed ones', () => {
  const list = { names: ['react', 'lodash', 'requests', 'express', 'left-pad', 'typescript', 'preact'], source: 'test' };
  assert.deepEqual(nearPopular('npm', 'lodahs', list, 2), { name: 'lodash', rank: 2, distance: 1 });
  assert.deepEqual(nearPopular('npm', 'typescirpt', list, 2), { name: 'typescript', rank: 6, distance: 1 });
  assert.deepEqual(nearPopular('npm', 'tpyescrpt', list, 2), { name: 'typescript', rank: 6, distance: 2 });
  assert.equal(nearPopular('npm', 'tpyescrpt', list, 1), null, 'the profile distance caps it');
  assert.equal(nearPopular('npm', 'preact', list, 2), null, 'a listed name is popular itself');
  assert.deepEqual(nearPopular('npm', 'reacts', list, 2), { name: 'react', rank: 1, distance: 1 });
  assert.equal(nearPopular('npm', 'exprs', list, 2), null, 'two edits are too many for a name under 7 letters');
  assert.equal(nearPopular('npm', 'rea', list, 2), null, 'under 4 letters: nothing');
  assert.equal(nearPopular('npm', 'lodash', list, 0), null, 'distance 0 turns it off');
  // PyPI compares normalized names: Left_Pad is left-pad itself.
  assert.equal(nearPopular('pypi', 'Requests', list, 2), null);
  assert.deepEqual(nearPopular('pypi', 'Reqeusts', list, 2), { name: 'requests', rank: 3, distance: 1 });
  assert.equal(nearPopular('crates', 'serdee', null, 2), null, 'no list, no warning');
});

test('npm: packument URLs, versions an install would take, scripts and take-downs', () => {
  assert.equal(packumentUrl('http://r.test/npm', '@scope/pkg'), 'http://r.test/npm/@scope%2Fpkg');
  assert.equal(packumentUrl('http://r.test/npm/', 'left-pad'), 'http://r.test/npm/left-pad');
  const versions = ['1.0.0', '1.2.0', '1.3.0-beta.1', '2.0.0', '2.1.0'];
  const tags = { latest: '2.1.0', next: '3.0.0-rc.1' };
  assert.equal(resolveNpmVersion(undefined, versions, tags), '2.1.0');
  assert.equal(resolveNpmVersion('1.0.0', versions, tags), '1.0.0');
  assert.equal(resolveNpmVersion('9.9.9', versions, tags), undefined);
  assert.equal(resolveNpmVersion('next', versions, tags), '3.0.0-rc.1');
  assert.equal(resolveNpmVersion('^1.0.0', versions, tags), '1.2.0');
  assert.equal(resolveNpmVersion('~1', versions, tags), '1.2.0');
  assert.equal(resolveNpmVersion('>=1 <3', versions, tags), '2.1.0');
  const doc = (extra: object) => JSON.stringify({ name: 'p', 'dist-tags': { latest: '1.0.0' }, time: { created: '2020-01-01T00:00:00.000Z' }, versions: { '1.0.0': { scripts: { postinstall: 'x', test: 'y' } } }, ...extra });
  assert.deepEqual(npmFactsFrom(doc({}), undefined), { exists: true, created: new Date('2020-01-01T00:00:00.000Z'), version: '1.0.0', installScripts: ['postinstall'] });
  assert.match(npmFactsFrom(JSON.stringify({ 'dist-tags': { latest: '0.0.1-security' }, versions: { '0.0.1-security': { description: 'security holding package' } } }), undefined).takenDown ?? '', /security holding package/);
  assert.deepEqual(npmFactsFrom('<html>', undefined), { exists: null, problem: 'the registry answered something that is not JSON' });
  assert.deepEqual(npmFactsFrom('[]', undefined), { exists: null, problem: 'the registry answered a document of the wrong shape' });
  assert.deepEqual(npmFactsFrom(JSON.stringify({ time: { unpublished: { time: 'x' } } }), undefined), { exists: false, problem: 'it was unpublished' });
});

test('PyPI, Cargo and Go: where each is asked', () => {
  assert.equal(jsonApiUrl('https://idx.test/simple', 'flask'), 'https://idx.test/pypi/flask/json');
  assert.equal(jsonApiUrl('https://idx.test/simple/', 'flask'), 'https://idx.test/pypi/flask/json');
  assert.equal(jsonApiUrl('https://idx.test/repo/pypi/', 'flask'), null);
  assert.deepEqual(simpleFactsFrom(JSON.stringify({ files: [{ 'upload-time': '2024-01-02T00:00:00Z' }, { 'upload-time': '2023-01-02T00:00:00Z' }] })), { exists: true, created: new Date('2023-01-02T00:00:00Z') });
  assert.match(simpleFactsFrom(JSON.stringify({ files: [], 'project-status': { status: 'quarantined' } })).takenDown ?? '', /quarantined/);
  assert.deepEqual(simpleFactsFrom('<html><a href="x">x-1.0.tar.gz</a></html>'), { exists: true });
  assert.deepEqual(['a', 'ab', 'abc', 'serde', 'Tokio'].map(indexPath), ['1/a', '2/ab', '3/a/abc', 'se/rd/serde', 'to/ki/tokio']);
  assert.equal(escapePath('github.com/BurntSushi/toml'), 'github.com/!burnt!sushi/toml');
});

test('OSV: asked by package URL', () => {
  assert.equal(purl('npm', 'left-pad'), 'pkg:npm/left-pad');
  assert.equal(purl('npm', '@types/node'), 'pkg:npm/%40types/node');
  assert.equal(purl('pypi', 'flask-cors'), 'pkg:pypi/flask-cors');
  assert.equal(purl('crates', 'serde'), 'pkg:cargo/serde');
  assert.equal(purl('go', 'example.test/sb/mod'), 'pkg:golang/example.test/sb/mod');
});

test('OSV: which entries are malicious-package advisories, and which versions they cover', () => {
  const all = maliciousEntry({ id: 'MAL-2024-1', summary: 's', affected: [{ ranges: [{ type: 'SEMVER', events: [{ introduced: '0' }] }] }] });
  assert.deepEqual(all, { id: 'MAL-2024-1', summary: 's', allVersions: true, versions: [] });
  const some = maliciousEntry({ id: 'GHSA-xxxx', aliases: ['MAL-2024-2'], affected: [{ versions: ['1.0.1', '1.0.2'], ranges: [{ events: [{ introduced: '1.0.1' }, { fixed: '1.0.3' }] }] }] });
  assert.deepEqual(some, { id: 'MAL-2024-2 (GHSA-xxxx)', summary: undefined, allVersions: false, versions: ['1.0.1', '1.0.2'] });
  assert.equal(maliciousEntry({ id: 'GHSA-yyyy', summary: 'a vulnerability, not malware' }), null);
  assert.equal(maliciousEntry({ id: 'MAL-2024-3' })?.allVersions, true, 'no readable versions: taken as all');
  const list = [all, some].filter((x) => x !== null);
  assert.deepEqual(coveringVersion([some!], '1.0.2').map((a) => a.id), ['MAL-2024-2 (GHSA-xxxx)']);
  assert.deepEqual(coveringVersion([some!], '1.0.3'), []);
  assert.equal(coveringVersion([some!], undefined).length, 1, 'an unknown version is taken as covered');
  assert.equal(coveringVersion(list, '5.0.0').length, 1);
});

const now = new Date('2026-06-01T00:00:00Z');
const base: DecideInput = {
  request: { kind: 'registry', ecosystem: 'npm', spec: 'pkg', name: 'pkg' },
  registryUrl: 'http://r.test/',
  registry: { exists: true, created: new Date('2020-01-01T00:00:00Z'), version: '1.0.0', installScripts: [] },
  osv: { advisories: [] },
  settings: DEFAULT_DEPENDENCY_CHECK,
  now,
  near: null,
  inRepo: false,
};
const verdict = (o: Partial<DecideInput>) => decide({ ...base, ...o });

test('decisions from registry and OSV facts', () => {
  assert.deepEqual(verdict({}), { ecosystem: 'npm', spec: 'pkg', name: 'pkg', version: '1.0.0', verdict: 'ok', reasons: [] });
  assert.deepEqual(verdict({ registry: { exists: false } }).reasons, ['does not exist in the npm registry (http://r.test/): the name may be misspelled or made up']);
  assert.equal(verdict({ registry: { exists: false } }).verdict, 'block');
  assert.equal(verdict({ request: { ...base.request, softMissing: 'the command also looks in another index' }, registry: { exists: false } }).verdict, 'unchecked');
  assert.equal(verdict({ registry: { ...base.registry, takenDown: 'gone' } }).verdict, 'block');
  const mal = { id: 'MAL-1', allVersions: true, versions: [] };
  assert.deepEqual(verdict({ osv: { advisories: [mal] } }).reasons, ['OSV lists it as malicious: MAL-1']);
  const older = { id: 'MAL-2', allVersions: false, versions: ['0.9.0'] };
  assert.equal(verdict({ osv: { advisories: [older] } }).verdict, 'warn');
  assert.match(verdict({ registry: { ...base.registry, created: new Date('2026-05-30T00:00:00Z') } }).reasons[0] ?? '', /^first published 2 days ago \(2026-05-30T00:00:00.000Z\), under the 7-day minimum age$/);
  assert.equal(verdict({ registry: { ...base.registry, created: new Date('2026-05-30T00:00:00Z') }, settings: { ...DEFAULT_DEPENDENCY_CHECK, minAgeDays: 0 } }).verdict, 'ok');
  assert.equal(verdict({ registry: { ...base.registry, created: new Date('2026-05-20T00:00:00Z') }, settings: { ...DEFAULT_DEPENDENCY_CHECK, minAgeDays: 14 } }).verdict, 'warn');
  assert.equal(verdict({ near: { name: 'lodash', distance: 1 } }).verdict, 'warn');
  assert.equal(verdict({ registry: { ...base.registry, installScripts: ['postinstall'] } }).verdict, 'warn');
  assert.equal(verdict({ registry: { ...base.registry, installScripts: ['postinstall'] }, inRepo: true }).verdict, 'ok');
  assert.deepEqual(verdict({ registry: { exists: null, problem: 'no answer in time' } }), { ecosystem: 'npm', spec: 'pkg', name: 'pkg', version: undefined, verdict: 'unchecked', reasons: ['the npm registry (http://r.test/) could not be asked: no answer in time'] });
  assert.equal(verdict({ osv: { advisories: [], problem: 'OSV answered 503' } }).verdict, 'unchecked');
  // A block wins over everything, and every reason is kept.
  const both = verdict({ registry: { exists: false }, osv: { advisories: [], problem: 'x' } });
  assert.equal(both.verdict, 'block');
  assert.equal(both.reasons.length, 2);
});

const d = (verdict: Decision['verdict'], extra: Partial<Decision> = {}): Decision => ({ ecosystem: 'npm', spec: 'p', name: 'p', verdict, reasons: [`r-${verdict}`], ...extra });

test('the hook answers: deny for a block, ask for a warning and (by default) for what could not be checked, never allow', () => {
  const s = DEFAULT_DEPENDENCY_CHECK;
  assert.equal(answerOf([d('ok'), d('block'), d('warn')], s), 'deny');
  assert.equal(answerOf([d('ok'), d('warn')], s), 'ask');
  assert.equal(answerOf([d('unchecked')], s), 'ask');
  assert.equal(answerOf([d('unchecked')], { ...s, onUnchecked: 'deny' }), 'deny');
  assert.equal(answerOf([d('unchecked')], { ...s, onUnchecked: 'allow' }), 'none');
  assert.equal(answerOf([d('warn')], { ...s, onUnchecked: 'allow' }), 'ask');
  assert.equal(answerOf([d('unchecked', { local: true })], s), 'none', 'a local path is said, not asked about');
  assert.equal(answerOf([d('ok')], s), 'none');
  assert.equal(hookOutput([d('ok')], s, 'claude'), '');
  assert.deepEqual(JSON.parse(hookOutput([d('block')], s, 'claude')), {
    hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'stashbase dependency check blocked this install. Do not retry it under another spelling; check the name, or ask the user.\n- BLOCKED: npm package "p": r-block' },
  });
  assert.equal(JSON.parse(hookOutput([d('warn')], s, 'claude')).hookSpecificOutput.permissionDecision, 'ask');
  assert.equal(JSON.parse(hookOutput([d('warn')], s, 'codex')).hookSpecificOutput.permissionDecision, 'deny', 'Codex cannot ask');
  assert.deepEqual(JSON.parse(hookOutput([d('unchecked', { spec: './x', name: undefined, local: true, reasons: ['not checked: a local path'] })], s, 'claude')), { systemMessage: '- unchecked: npm package "./x": not checked: a local path' });
  assert.equal(JSON.parse(failureOutput('boom', 'claude')).hookSpecificOutput.permissionDecision, 'ask');
  assert.equal(JSON.parse(failureOutput('boom', 'codex')).hookSpecificOutput.permissionDecision, 'deny');
});

test('the hook input: the shell tool call of Claude Code or Codex; any other tool is none of ours', () => {
  assert.deepEqual(parseHookInput(JSON.stringify({ tool_name: 'Bash', tool_input: { command: 'npm i x' }, cwd: '/w' })), { command: 'npm i x', cwd: '/w' });
  assert.equal(parseHookInput(JSON.stringify({ tool_name: 'Write', tool_input: { file_path: '/x' } })), null);
  assert.throws(() => parseHookInput('nope'), /not JSON/);
  assert.throws(() => parseHookInput('[]'), /not a JSON object/);
  assert.throws(() => parseHookInput('{"tool_name":"Bash","tool_input":{}}'), /no tool_input.command/);
});

test('NO_PROXY: names, suffixes, ports and *', () => {
  const env = { NO_PROXY: 'localhost,127.0.0.1,.internal.test,example.test:8080' };
  assert.equal(noProxy(env, '127.0.0.1', '80'), true);
  assert.equal(noProxy(env, 'a.internal.test', '443'), true);
  assert.equal(noProxy(env, 'internal.test', '443'), true);
  assert.equal(noProxy(env, 'example.test', '443'), false);
  assert.equal(noProxy(env, 'example.test', '8080'), true);
  assert.equal(noProxy(env, 'registry.test', '443'), false);
  assert.equal(noProxy({ no_proxy: '*' }, 'anything', '1'), true);
  assert.equal(noProxy({}, 'anything', '1'), false);
});

test('past 32 packages in one command, the rest are unchecked without a look-up', async () => {
  const { checkPackages, MAX_PACKAGES } = await import('../../lib/deps/check.js');
  const requests = Array.from({ length: MAX_PACKAGES + 2 }, (_, i) => ({ kind: 'registry' as const, ecosystem: 'npm' as const, spec: `p${i}`, name: `p${i}`, registry: 'http://127.0.0.1:9/' }));
  const out = await checkPackages({ requests, cwd: '/', env: { STASHBASE_OSV_URL: 'http://127.0.0.1:9' }, settings: DEFAULT_DEPENDENCY_CHECK });
  assert.equal(out.length, MAX_PACKAGES + 2);
  assert.deepEqual(out.slice(-2).map((d) => d.reasons), [['not checked: more than 32 packages in one command'], ['not checked: more than 32 packages in one command']]);
  assert.ok(out.every((d) => d.verdict === 'unchecked'), 'nothing answers on port 9: unchecked, never ok');
});

test("(review, round 35) a registry's version and an advisory's id and summary in a reason (a hostile mirror a repository's .npmrc names, or hostile OSV data): the check's table and the hook's answer show them on one line, escaped; control: the reason itself holds the raw bytes", async () => {
  const { formatDecisions } = await import('../../lib/deps/format.js');
  const version = '1.0.0\x1b]52;c;ZXZpbA==\x07\x1b[2J\u202e\nFORGED';
  const mal = { id: 'MAL-1\x1b]8;;http://evil/\x07', summary: 'Malicious \x1b[8m hidden \u202e code\nok  npm left-pad', allVersions: true, versions: [] };
  const v = verdict({ registry: { ...base.registry, version, installScripts: ['postinstall'] }, osv: { advisories: [mal] } });
  assert.ok(v.reasons.some((r) => r.includes('\x1b]52;')) && v.reasons.some((r) => r.includes('\x1b]8;')), 'the control: raw in the reasons');
  for (const shown of [formatDecisions([v]), JSON.parse(hookOutput([v], DEFAULT_DEPENDENCY_CHECK, 'claude')).hookSpecificOutput.permissionDecisionReason as string]) {
    assert.doesNotMatch(shown, /[\x1b\x07\u202e]/);
    assert.ok(!shown.includes('\nFORGED') && !shown.includes('\nok  npm'), shown);
    assert.ok(shown.includes('\\x1b]52;c;ZXZpbA==\\x07\\x1b[2J\\u{202e}\\x0aFORGED'), shown);
  }
});
