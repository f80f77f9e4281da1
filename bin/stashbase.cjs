#!/usr/bin/env node
// Entry point: one pre-bundled CommonJS file (see scripts/bundle.mjs for why),
// loaded with its code cache (bin/bundle-loader.cjs).
// `--version` is answered before anything else loads.
'use strict';
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  process.stdout.write(`${require('../package.json').version}\n`);
} else {
  require('./bundle-loader.cjs')
    .load()
    .main(argv)
    .then((code) => {
      process.exitCode = code;
    });
}
