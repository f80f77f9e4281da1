// Builds the sealed network's relay (relay/main.go, docs/docker.md) from this
// repository's source for the engines it runs on, linux amd64 and arm64:
// dist/relay/linux-<arch>/stashbase-relay, static (no cgo), stripped. Go's
// standard library only: nothing is downloaded. Rebuilt only when a source is
// newer than the binaries. Without Go (scripts/install-go.sh installs it) the
// build goes on without the relay and says so, unless CI is set: there the
// relay is required.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'relay');
const ARCHES = ['amd64', 'arm64'];
const out = (arch) => join(root, 'dist', 'relay', `linux-${arch}`, 'stashbase-relay');

const mtime = (p) => statSync(p, { throwIfNoEntry: false })?.mtimeMs ?? 0;
const newestSource = Math.max(...readdirSync(src).map((f) => mtime(join(src, f))));
const stale = ARCHES.filter((a) => mtime(out(a)) < newestSource);
if (stale.length === 0) process.exit(0);

if (spawnSync('go', ['version'], { stdio: 'ignore' }).status !== 0) {
  const msg = 'the sealed network\'s relay was not built: Go is not installed (bash scripts/install-go.sh, then npm run build)';
  if (process.env.CI === 'true') {
    process.stderr.write(`error: ${msg}\n`);
    process.exit(1);
  }
  process.stderr.write(`note: ${msg}\n`);
  process.exit(0);
}
for (const arch of stale) {
  mkdirSync(dirname(out(arch)), { recursive: true });
  const tmp = `${out(arch)}.tmp-${process.pid}`;
  execFileSync('go', ['build', '-trimpath', '-ldflags=-s -w', '-o', tmp, '.'], {
    cwd: src, stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, CGO_ENABLED: '0', GOOS: 'linux', GOARCH: arch, GOFLAGS: '-mod=mod', GOPROXY: 'off' },
  });
  renameSync(tmp, out(arch));
}
