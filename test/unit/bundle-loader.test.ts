import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO } from '../helpers.js';

interface Loader {
  compileBundle(cacheFile?: string): { cacheUsed: boolean };
  CACHE: string;
}
const loader = createRequire(import.meta.url)(join(REPO, 'bin', 'bundle-loader.cjs')) as Loader;

test('the bundle starts from the code cache made by the build', () => {
  assert.equal(loader.compileBundle().cacheUsed, true);
});

test('a code cache of another build, or none, is not used (the bundle compiles as usual)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'stashbase-cache-'));
  try {
    const data = readFileSync(loader.CACHE);
    const other = Buffer.from(data);
    other.write('0'.repeat(32), 0, 'latin1');
    writeFileSync(join(dir, 'other'), other);
    assert.equal(loader.compileBundle(join(dir, 'other')).cacheUsed, false);
    assert.equal(loader.compileBundle(join(dir, 'missing')).cacheUsed, false);
    const garbled = Buffer.from(data);
    garbled.fill(7, 64, 4096);
    writeFileSync(join(dir, 'garbled'), garbled);
    assert.equal(loader.compileBundle(join(dir, 'garbled')).cacheUsed, false);
    // One bit deep in the data: V8's own checks (versions, flags, length) let it through.
    const flipped = Buffer.from(data);
    flipped[Math.floor(data.length / 2)]! ^= 0x10;
    writeFileSync(join(dir, 'flipped'), flipped);
    assert.equal(loader.compileBundle(join(dir, 'flipped')).cacheUsed, false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the bundles load nothing from node_modules: every require names a builtin or a bundle file beside it (found in review: a package planted where Node looks first ran on the host)', () => {
  const { builtinModules } = createRequire(import.meta.url)('node:module') as typeof import('node:module');
  const dir = join(REPO, 'dist', 'bundle');
  const files = readdirSync(dir).filter((f) => f.endsWith('.cjs'));
  assert.ok(files.includes('cli.cjs') && files.length > 3, files.join(' '));
  for (const f of files) {
    const names = [...readFileSync(join(dir, f), 'utf8').matchAll(/\brequire\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1] as string);
    const foreign = names.filter((n) => !n.startsWith('node:') && !builtinModules.includes(n) && !/^\.\/[\w-]+\.cjs$/.test(n));
    assert.deepEqual(foreign, [], f);
  }
  // The check itself sees a package: the same scan of a require of one.
  assert.deepEqual([...'x = require("picocolors")'.matchAll(/\brequire\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]), ['picocolors']);
});
