// The Docker image the real-agent tests run: the default image's Dockerfile,
// built by the CLI itself (`agent docker build --agents-from npm`) from the
// local test base, with Claude Code and Codex from npm at the versions
// scripts/test-agent-versions pins. A tag of its own, so that a developer's
// real stashbase-sandbox:latest is never replaced. test/run.mjs builds it when
// the Docker real-agent tests are among those it runs; the CLI keeps an image
// whose labels already name those versions, so a second run costs a second.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const AGENTS_IMAGE = 'stashbase-sandbox-agents-test:latest';
const REPO = new URL('..', import.meta.url).pathname;

/** The pinned versions, from scripts/test-agent-versions. */
export function agentVersions() {
  const text = readFileSync(join(REPO, 'scripts', 'test-agent-versions'), 'utf8');
  const get = (name) => new RegExp(`^${name}=(\\S+)$`, 'm').exec(text)?.[1];
  return { claude: get('claude'), codex: get('codex') };
}

/** Whether the image is there with the pinned versions (its labels, as the CLI writes them). */
export function agentsImageReady() {
  const v = agentVersions();
  const r = spawnSync('docker', ['image', 'inspect', '--format', '{{index .Config.Labels "stashbase.claude-version"}} {{index .Config.Labels "stashbase.codex-version"}}', AGENTS_IMAGE], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() === `${v.claude} ${v.codex}`;
}

/** Builds it through the CLI (bin/stashbase.cjs, so after `npm run build`); returns the exit status. */
export function buildAgentsImage() {
  const v = agentVersions();
  const home = mkdtempSync(join(tmpdir(), 'sbtest-agents-build-'));
  const env = {
    ...process.env, HOME: home, STASHBASE_HOME: join(home, '.stashbase'),
    STASHBASE_DOCKER_IMAGE: AGENTS_IMAGE, STASHBASE_SANDBOX_BASE_IMAGE: 'stashbase-test-base:latest',
  };
  // npm's own config (registry, CA file) lives in the real home's .npmrc: keep it visible to the CLI.
  if (process.env.HOME && !env.NPM_CONFIG_USERCONFIG) env.NPM_CONFIG_USERCONFIG = join(process.env.HOME, '.npmrc');
  const args = ['agent', 'docker', 'build', '--agents-from', 'npm', '--claude-version', v.claude, '--codex-version', v.codex];
  const r = spawnSync(process.execPath, [join(REPO, 'bin', 'stashbase.cjs'), ...args], { stdio: 'inherit', env });
  rmSync(home, { recursive: true, force: true });
  return r.status ?? 1;
}
