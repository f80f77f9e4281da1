// Start-up cost of the CLI against plain `node -e 0`, in the same run.
// Target: `stashbase --version` and `agent run --dry-run -- true` within 1.5x.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { measure, report, time } from './lib.mjs';

const bin = new URL('../bin/stashbase.cjs', import.meta.url).pathname;
const home = mkdtempSync(join(tmpdir(), 'sbbench-'));
const env = { PATH: process.env.PATH, HOME: home, STASHBASE_HOME: join(home, '.stashbase') };
const rounds = Number(process.env.ROUNDS ?? 30);
const results = measure(
  {
    'node -e 0': () => time(process.execPath, ['-e', '0'], { env }),
    'stashbase --version': () => time(process.execPath, [bin, '--version'], { env }),
    'stashbase agent run --dry-run -- true': () => time(process.execPath, [bin, 'agent', 'run', '--dry-run', '--', 'true'], { env }),
  },
  rounds,
);
report('startup', results, 'node -e 0', { 'stashbase --version': '<= 1.5', 'stashbase agent run --dry-run -- true': '<= 1.5' });
