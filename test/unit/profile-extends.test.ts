import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { defaultProfile } from '../../lib/profile/default.js';
import { loadProfile } from '../../lib/profile/load.js';
import { tempHome, writeFile } from '../helpers.js';

const t = tempHome();
after(() => t.cleanup());
const repo = join(t.dir, 'repo');
mkdirSync(join(repo, '.git'), { recursive: true });
const global = (name: string, text: string) => writeFile(join(t.sbHome, 'agents', `${name}.toml`), text);
const local = (name: string, text: string) => writeFile(join(repo, '.stashbase', 'agents', `${name}.toml`), text);
const load = (name: string, source: 'auto' | 'global' | 'directory' = 'auto') => loadProfile({ name, source, cwd: repo, env: { ...t.env, GH: 'ghp_0123456789abcdef' } });

test('extends: lists joined (the parent\'s first, once each), tables merged key by key, any other value the child\'s', () => {
  global('base', 'description = "base"\n[sandbox]\nmemory = "2g"\n[network]\negress_hosts = ["a.test", "b.test"]\n[secrets.GH]\nsource = "GH"\nhosts = ["a.test"]\n[config_env]\nEDITOR = "vi"\n');
  global('child', 'extends = "base"\ndescription = "child"\n[sandbox]\nmemory = "4g"\n[network]\negress_hosts = ["b.test", "c.test"]\n[config_env]\nPAGER = "less"\n');
  const p = load('child', 'global').profile;
  assert.equal(p.description, 'child');
  assert.equal(p.sandbox.memory, '4g');
  assert.deepEqual(p.network.egressHosts, ['a.test', 'b.test', 'c.test']);
  assert.deepEqual(Object.keys(p.secrets), ['GH']);
  assert.deepEqual(p.configEnv, { EDITOR: 'vi', PAGER: 'less' });
});

test('extends = "default" builds on the built-in default\'s hosts; a repository profile extends a global one, and trust pins both texts', () => {
  global('wide', 'extends = "default"\n[network]\negress_hosts = ["extra.test"]\n');
  assert.deepEqual(load('wide', 'global').profile.network.egressHosts, [...defaultProfile().network.egressHosts, 'extra.test']);
  global('team-base', '[network]\negress_hosts = ["t.test"]\n');
  local('team', 'extends = "team-base"\n');
  const a = load('team');
  assert.deepEqual(a.profile.network.egressHosts, ['t.test']);
  global('team-base', '[network]\negress_hosts = ["t.test", "evil.test"]\n');
  const b = load('team');
  assert.notEqual(b.text, a.text, 'a change in the parent changes what trust pins');
  assert.match(b.text ?? '', /evil\.test/);
  // A line moved from the end of one file to the start of the next changes it too (each file framed by its length).
  local('mv', 'extends = "mv-base"\n[config_env]\nFOO = "1"\n');
  global('mv-base', '[network]\negress_hosts = ["m.test"]\n');
  const before = load('mv').text;
  local('mv', 'extends = "mv-base"\n[config_env]\n');
  global('mv-base', 'FOO = "1"\n[network]\negress_hosts = ["m.test"]\n');
  assert.throws(() => load('mv'));
  global('mv-base', '[network]\negress_hosts = ["m.test"]\n');
  local('mv', 'extends = "mv-base"\n[config_env]\nFOO = "1"\n\n');
  assert.notEqual(load('mv').text, before);
});

test('a global profile never extends a repository\'s (a repository must not stand in for one of yours); cycles and chains too long are refused', () => {
  local('only-here', '[network]\negress_hosts = ["r.test"]\n');
  global('g', 'extends = "only-here"\n');
  const g = (n: string) => join(t.sbHome, 'agents', `${n}.toml`);
  assert.throws(() => load('g', 'global'), { name: 'ConfigError', message: `${g('g')} extends "only-here", which is not found among your global profiles (${t.sbHome}/agents)` });
  global('x', 'extends = "y"\n');
  global('y', 'extends = "x"\n');
  assert.throws(() => load('x', 'global'), { message: `${g('y')} extends "x": a cycle (${g('x')} -> ${g('y')} -> ${g('x')})` });
  for (let i = 0; i < 10; i++) global(`c${i}`, `extends = "c${i + 1}"\n`);
  global('c10', '');
  assert.throws(() => load('c0', 'global'), { message: /more than 8 profiles in one chain/ });
  global('bad', 'extends = ["a"]\n');
  assert.throws(() => load('bad', 'global'), { message: `${g('bad')} extends: ["a"] is not a profile name` });
  // A key named __proto__ in a parent is a key like any other (and an unknown one).
  global('proto-base', '[sandbox.__proto__]\npolluted = true\n');
  global('proto', 'extends = "proto-base"\n');
  assert.throws(() => load('proto', 'global'), { name: 'ConfigError' });
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test('a profile named by its path: a global one by its place, any other trusted like a repository\'s; not a .toml or not there, said', async () => {
  const { trustCommand } = await import('../../lib/profile/trust.js');
  const g = global('by-path', 'description = "g"\n');
  const viaPath = loadProfile({ name: g, source: 'auto', cwd: repo, env: t.env }).profile;
  assert.deepEqual([viaPath.name, viaPath.source, viaPath.description], ['by-path', 'global', 'g']);
  const loose = writeFile(join(t.dir, 'elsewhere', 'claude.toml'), 'description = "loose"\n');
  const rel = loadProfile({ name: '../elsewhere/claude.toml', source: 'auto', cwd: repo, env: t.env }).profile;
  assert.deepEqual([rel.name, rel.source, rel.file], ['claude', 'directory', loose]);
  assert.equal(trustCommand(rel), `stashbase agent trust --profile ${loose}`);
  assert.throws(() => loadProfile({ name: './nope.toml', source: 'auto', cwd: repo, env: t.env }), { name: 'ConfigError', message: `profile file ${join(repo, 'nope.toml')} not found` });
  // A repository's link to one of your global profiles is the repository's pick: asked for, never global (a review ran a global profile's secret that way).
  symlinkSync(g, join(repo, 'ci.toml'));
  const linked = loadProfile({ name: './ci.toml', source: 'auto', cwd: repo, env: t.env }).profile;
  assert.deepEqual([linked.source, linked.file], ['directory', g]);
  assert.throws(() => loadProfile({ name: '../elsewhere/claude.txt', source: 'auto', cwd: repo, env: t.env }), { name: 'UsageError', message: '--profile "../elsewhere/claude.txt": a profile file\'s name ends in .toml' });
});
