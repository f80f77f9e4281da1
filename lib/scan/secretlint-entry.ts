// The rule set's code, in one place: scripts/bundle.mjs builds this module and
// the packages it names into dist/bundle/secretlint.cjs, loaded only when a scan
// runs (lib/scan/rule-set.ts). From dist/ (the tests) it loads them as they are.
export { lintSource } from '@secretlint/core';
export { rules as recommendedRules } from '@secretlint/secretlint-rule-preset-recommend';
