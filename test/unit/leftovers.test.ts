// What `agent docker status` and `cleanup` read of an engine's containers and
// networks: an engine that is not this machine's is not trusted to name them
// as Docker would, so nothing it says reaches the terminal raw.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runLeftovers } from '../../lib/docker/leftovers.js';

test('(review, round 26) a hostile engine\'s container names and creation times: a name Docker could not have given is passed by, a time shown escaped; control: a well-named container of the run is listed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'leftovers-'));
  try {
    const session = 'ags_aaaaaaaaaaaaaaaa';
    const prefix = `stashbase-agent-run-${session}`;
    const rows = {
      ps: [`${prefix}-agent|${session}|1|2026-12-06 10:00:00 +0000 UTC\u001b]0;PWNED\u0007|""`, `${prefix}-x\u001b[2J|${session}|1|2026-12-06 09:00:00 +0000 UTC|""`].join('\n'),
      network: `${prefix}|2026-12-06 08:00:00\u001b[31m|${session}|1`,
    };
    const fake = join(dir, 'docker');
    writeFileSync(join(dir, 'ps.txt'), `${rows.ps}\n`);
    writeFileSync(join(dir, 'network.txt'), `${rows.network}\n`);
    writeFileSync(fake, `#!/bin/sh\ncase "$1" in ps) cat ${join(dir, 'ps.txt')};; network) cat ${join(dir, 'network.txt')};; *) ;; esac\n`);
    chmodSync(fake, 0o755);
    const runs = await runLeftovers(fake, join(dir, 'home'), true);
    assert.equal(runs.length, 1);
    const [r] = runs;
    assert.deepEqual(r?.containers, [`${prefix}-agent`]);
    assert.equal(r?.network, prefix);
    assert.equal(r?.createdAt, '2026-12-06 08:00:00\\x1b[31m');
    for (const text of [r?.network ?? '', r?.createdAt ?? '', ...(r?.containers ?? [])]) assert.equal(/[\u0000-\u001f\u007f]/.test(text), false, JSON.stringify(text));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
