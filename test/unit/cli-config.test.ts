import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { keptSettings, remoteDockerConfig } from '../../lib/docker/cli-config.js';
import { writeFile } from '../helpers.js';

test("a remote engine's commands keep of your config.json only how the CLI reaches the engine and finds its plugins: no proxies, logins or credential helpers", () => {
  const yours = { proxies: { default: { httpProxy: 'http://u:p@h:1' } }, auths: { r: { auth: 'dTpw' } }, credsStore: 'desktop', credHelpers: { r: 'x' }, HttpHeaders: { 'X-A': '1' }, cliPluginsExtraDirs: ['/p'], aliases: { builder: 'buildx' }, features: { hooks: 'false' }, plugins: {}, currentContext: 'eng', psFormat: 'x' };
  assert.deepEqual(JSON.parse(JSON.stringify(keptSettings(JSON.stringify(yours)))), { HttpHeaders: { 'X-A': '1' }, cliPluginsExtraDirs: ['/p'], aliases: { builder: 'buildx' }, features: { hooks: 'false' }, plugins: {} });
  // What the CLI would read otherwise than strict JSON (a name in another case, a second value): nothing kept.
  for (const text of [null, 'not json', '[]', '{"httpheaders":{"X":"1"}}', '{"HttpHeaders":{}} {"auths":{}}']) assert.equal(JSON.stringify(keptSettings(text)), "{}", String(text));
});

test('the folder: config.json written whole, your contexts, plugins and buildx linked; made again, the same; a second call of the process returns it as it is', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-cli-config-'));
  try {
    const yours = join(dir, 'yours');
    writeFile(join(yours, 'config.json'), JSON.stringify({ auths: { r: { auth: 'dTpw' } }, HttpHeaders: { 'X-A': '1' } }));
    const env = { DOCKER_CONFIG: yours };
    const made = remoteDockerConfig(env, '/nonexistent', join(dir, 'sb'));
    assert.equal(readFileSync(join(made, 'config.json'), 'utf8'), '{"HttpHeaders":{"X-A":"1"}}\n');
    for (const n of ['contexts', 'cli-plugins', 'buildx']) assert.equal(readlinkSync(join(made, n)), join(yours, n));
    assert.equal(remoteDockerConfig(env, '/nonexistent', join(dir, 'sb')), made);
    assert.equal(remoteDockerConfig({ DOCKER_CONFIG: made }, '/nonexistent', join(dir, 'sb')), made);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
