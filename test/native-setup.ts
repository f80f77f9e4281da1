// A temporary home with secrets in it and a global profile that protects them,
// for attacking the real native sandbox.
import { spawn } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { cli, type CliResult, REPO, type Sandbox, tempHome, writeFile } from './helpers.js';

export interface Attack extends Sandbox {
  proj: string;
  /** Runs `sh -c script` in the sandbox under the attack profile. */
  inside(script: string, extraEnv?: NodeJS.ProcessEnv): Promise<CliResult>;
  /** The same script outside any sandbox: the control that proves the test can succeed. */
  outside(script: string): Promise<{ code: number | null; stdout: string; stderr: string }>;
}

export function attackHome(extraProfile = '', base?: string): Attack {
  const t = tempHome(base);
  const h = t.home;
  const proj = join(h, 'proj');
  writeFile(join(h, 'secret.txt'), 'TOPSECRET\n');
  writeFile(join(h, 'secretdir', 'inner.txt'), 'INNER\n');
  writeFile(join(h, 'parent', 'child', 'key'), 'KEY\n');
  writeFile(join(h, 'ro.txt'), 'RO\n');
  mkdirSync(join(h, 'rodir'));
  symlinkSync(join(h, 'secret.txt'), join(h, 'link-to-secret'));
  writeFile(join(proj, 'secrets', 'a.pem'), 'PEM-A\n');
  writeFile(join(proj, 'secrets', '.h.pem'), 'PEM-H\n');
  writeFile(join(proj, 'secrets', 'b.txt'), 'TXT-B\n');
  writeFile(join(proj, '.gitignore'), 'secrets/\n');
  writeFile(
    join(t.sbHome, 'agents', 'attack.toml'),
    `[filesystem]
deny_read = ["~/secret.txt", "~/secretdir", "~/parent/child/key", "~/missing-read", "secrets/*.pem"]
deny_write = ["~/ro.txt", "~/rodir", "~/missing-dir"]
${extraProfile}`,
  );
  const env = t.env;
  return {
    ...t,
    proj,
    inside: (script, extraEnv = {}) => cli(['agent', 'run', '--profile', 'attack', '--silent', '--', 'sh', '-c', script], { env: { ...env, ...extraEnv }, cwd: proj }),
    // Asynchronous: the services a test attacks often live in the test process itself.
    outside: (script) =>
      new Promise((resolve) => {
        const child = spawn('sh', ['-c', script], { env, cwd: proj });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
        child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      }),
  };
}

export const PTY = join(REPO, 'test', 'fixtures', 'pty-run.py');
