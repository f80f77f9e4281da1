// Golden files live in test/golden/; UPDATE_GOLDEN=1 rewrites them (review the diff).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './helpers.js';

export function golden(name: string, actual: string): void {
  const file = join(REPO, 'test', 'golden', name);
  if (process.env.UPDATE_GOLDEN === '1' || !existsSync(file)) {
    if (process.env.CI === 'true') assert.fail(`golden file ${name} is missing`);
    writeFileSync(file, actual);
  }
  assert.equal(actual, readFileSync(file, 'utf8'));
}
