// Start-up cost of the CLI against plain `node -e 0`, in the same run.
// Target: `stashbase --version` and `agent run --dry-run -- true` within 1.5x.
import { measure, report, setup, time } from './lib.mjs';

const { bin, home, env, rounds } = setup(30);
const results = measure(
  {
    'node -e 0': () => time(process.execPath, ['-e', '0'], { env }),
    'stashbase --version': () => time(process.execPath, [bin, '--version'], { env }),
    'stashbase agent run --dry-run -- true': () => time(process.execPath, [bin, 'agent', 'run', '--dry-run', '--', 'true'], { env }),
  },
  rounds,
);
report('startup', results, 'node -e 0', { 'stashbase --version': '<= 1.5', 'stashbase agent run --dry-run -- true': '<= 1.5' });
