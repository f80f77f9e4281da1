// Loads the CLI's bundle (dist/bundle/cli.cjs) with the V8 code cache made
// beside it at build time (scripts/code-cache.cjs), which saves compiling it on
// every start (~5 ms of a ~30 ms Node start). The cache is used only when it
// names the same build as the bundle and V8 accepts it (same V8, same flags);
// otherwise the bundle is compiled as `require` would. The cache is part of the
// package, as trusted as the bundle itself: it is never written at run time.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const Module = require('node:module');

const BUNDLE = path.join(__dirname, '..', 'dist', 'bundle', 'cli.cjs');
const CACHE = `${BUNDLE}.cache`;
const ID_LENGTH = 32;

/** The build id bundle.mjs appends as the bundle's last line. */
function buildId(src) {
  const m = /\n\/\/ stashbase-build ([0-9a-f]{32})\n$/.exec(src.slice(-64));
  return m ? m[1] : null;
}

function compile(src, cachedData) {
  // The bundle has no import() (scripts/bundle.mjs makes them requires), so no ES module loader is needed.
  return new vm.Script(Module.wrap(src), { filename: BUNDLE, cachedData });
}

function run(script) {
  const mod = new Module(BUNDLE, module);
  mod.filename = BUNDLE;
  mod.paths = Module._nodeModulePaths(path.dirname(BUNDLE));
  // The files bundled apart (scripts/bundle.mjs) require this one for its error classes: the same instance.
  Module._cache[BUNDLE] = mod;
  script.runInThisContext().call(mod.exports, mod.exports, Module.createRequire(BUNDLE), mod, BUNDLE, path.dirname(BUNDLE));
  mod.loaded = true;
  return mod.exports;
}

// The cache file: the build id, a checksum of the cache data, the data. V8
// itself checks versions, flags and the data's length, not its content (a
// corrupted cache could crash the CLI, or worse): the checksum does. Two
// 32-bit multiply-xor lanes over the data's words: each step is a bijection,
// so any one changed word always changes the sum. Not SHA-256: loading
// node:crypto would cost more than the cache saves (the cache is not a trust
// boundary; it is as trusted as the bundle beside it).
const DIGEST_LENGTH = 8;
function digest(data) {
  const aligned = data.byteOffset % 4 === 0 ? data : Buffer.from(data);
  const words = aligned.length >>> 3;
  const w = new Int32Array(aligned.buffer, aligned.byteOffset, words * 2);
  let a = 0x811c9dc5 | 0;
  let b = 0x5bd1e995 | 0;
  for (let i = 0; i < 2 * words; i += 2) {
    a = Math.imul(a ^ w[i], 0x01000193);
    b = Math.imul(b ^ w[i + 1], 0x5bd1e995);
    b ^= b >>> 13;
  }
  for (let i = words << 3; i < aligned.length; i++) a = Math.imul(a ^ aligned[i], 0x01000193);
  const out = Buffer.alloc(DIGEST_LENGTH);
  out.writeInt32LE(a, 0);
  out.writeInt32LE(b, 4);
  return out;
}

function readCache(id, cacheFile) {
  let file;
  try {
    file = fs.readFileSync(cacheFile);
  } catch {
    return undefined;
  }
  if (file.subarray(0, ID_LENGTH).toString('latin1') !== id) return undefined;
  const data = file.subarray(ID_LENGTH + DIGEST_LENGTH);
  return digest(data).equals(file.subarray(ID_LENGTH, ID_LENGTH + DIGEST_LENGTH)) ? data : undefined;
}

function readBundle() {
  const src = fs.readFileSync(BUNDLE, 'utf8');
  return { src, id: buildId(src) };
}

/** The bundle compiled, with the build's code cache when it matches; `cacheUsed` says whether V8 took it. */
function compileBundle(cacheFile = CACHE) {
  const { src, id } = readBundle();
  const cached = id === null ? undefined : readCache(id, cacheFile);
  const script = compile(src, cached);
  return { script, cacheUsed: cached !== undefined && !script.cachedDataRejected };
}

/** The bundle's exports. */
function load() {
  return run(compileBundle().script);
}

/** For the build: compiles and runs the bundle, then `warm(exports)`; returns the cache file's bytes. */
async function makeCache(warm) {
  const { src, id } = readBundle();
  if (id === null) throw new Error(`${BUNDLE} has no build id`);
  const script = compile(src, undefined);
  await warm(run(script));
  const data = script.createCachedData();
  return Buffer.concat([Buffer.from(id, 'latin1'), digest(data), data]);
}

module.exports = { load, compileBundle, makeCache, CACHE };
