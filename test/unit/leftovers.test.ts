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
      ps: [`${prefix}-agent\t"${session}"\t"1"\t2026-12-06 10:00:00 +0000 UTC\u001b]0;PWNED\u0007\t""`, `${prefix}-x\u001b[2J\t"${session}"\t"1"\t2026-12-06 09:00:00 +0000 UTC\t""`].join('\n'),
      network: `${prefix}\t2026-12-06 08:00:00\u001b[31m\t"${session}"\t"1"`,
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

/** A fake docker printing `ps` and `volume ls` rows as the templates ask for them. */
function fakeDocker(dir: string, ps: string, volumes = ''): string {
  const fake = join(dir, 'docker');
  writeFileSync(join(dir, 'ps.txt'), ps === '' ? '' : `${ps}\n`);
  writeFileSync(join(dir, 'vol.txt'), volumes === '' ? '' : `${volumes}\n`);
  writeFileSync(fake, `#!/bin/sh\ncase "$1" in ps) cat ${join(dir, 'ps.txt')};; volume) cat ${join(dir, 'vol.txt')};; *) ;; esac\n`);
  chmodSync(fake, 0o755);
  return fake;
}

test("(review, round 35) a remote engine's run started from this machine is live while its process is, whatever STASHBASE_HOME started it (cleanup removed one mid-run); a co-tenant's pid label holding `|` or a tab shifts no column; control: the same run's process gone, it is orphaned, and one of another machine with this pid is not live", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'leftovers-'));
  try {
    const { hostname } = await import('node:os');
    const here = JSON.stringify(hostname());
    const [a, b, c, d] = ['ags_aaaaaaaaaaaaaaaa', 'ags_bbbbbbbbbbbbbbbb', 'ags_cccccccccccccccc', 'ags_dddddddddddddddd'];
    const row = (session: string, pid: string, origin: string, created = '2026-12-07 06:00:00 +0000 UTC') => `stashbase-agent-run-${session}-agent\t"${session}"\t${JSON.stringify(pid)}\t${created}\t${origin}`;
    const ps = [
      row(a, String(process.pid), here),
      row(b, '2147483646', here),
      row(c, String(process.pid), '"another-machine"'),
      // A co-tenant's labels: a pid with `|` and a tab (escaped by JSON), its creation time the engine's.
      row(d, '1|2026-01-01 FORGED|x\ty', '"another-machine"', '2026-12-07 05:00:00 +0000 UTC'),
    ].join('\n');
    const runs = await runLeftovers(fakeDocker(dir, ps), join(dir, 'home'), true);
    const by = Object.fromEntries(runs.map((r) => [r.session, r]));
    assert.deepEqual([by[a]?.live, by[a]?.orphaned], [true, false]);
    assert.deepEqual([by[b]?.live, by[b]?.orphaned], [false, true]);
    // Another machine's run: its pid label is that machine's, never taken for live here (shown with its origin).
    assert.deepEqual([by[c]?.live, by[c]?.origin], [false, 'another-machine']);
    assert.equal(by[d]?.createdAt, '2026-12-07 05:00:00 +0000 UTC');
    assert.deepEqual(by[d]?.containers, [`stashbase-agent-run-${d}-agent`]);
    // (Second pass) Before its containers are made, a run's tools volume alone: live while its process is.
    const e = 'ags_eeeeeeeeeeeeeeee';
    const f = 'ags_ffffffffffffffff';
    const vols = [`stashbase-agent-run-${e}-tools\t"${e}"\t${here}\t"${process.pid}"`, `stashbase-agent-run-${f}-tools\t"${f}"\t${here}\t"2147483646"`].join('\n');
    const only = Object.fromEntries((await runLeftovers(fakeDocker(dir, '', vols), join(dir, 'home'), true)).map((x) => [x.session, x]));
    assert.deepEqual([only[e]?.live, only[f]?.live], [true, false]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
