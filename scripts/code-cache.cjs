// Writes dist/bundle/cli.cjs.cache: V8's code cache of the bundle, made after
// the bundle has run a dry run (so the functions a run calls are in it, not
// only the top level). Run by scripts/bundle.mjs, in a temporary home and
// working directory, its output discarded; its exit code does not matter.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { makeCache, CACHE } = require('../bin/bundle-loader.cjs');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stashbase-code-cache-'));
process.env.HOME = tmp;
delete process.env.STASHBASE_HOME;
process.chdir(tmp);
process.stdout.write = () => true;
process.stderr.write = () => true;
makeCache((cli) => cli.main(['agent', 'run', '--dry-run', '--', 'true']))
  .then((data) => {
    fs.writeFileSync(`${CACHE}.tmp`, data);
    fs.renameSync(`${CACHE}.tmp`, CACHE);
  })
  .finally(() => fs.rmSync(tmp, { recursive: true, force: true }));
