// Image builds and the admin shell: docker build for the default image and for
// a profile's Dockerfile, the version probe, and `agent docker shell`.
import type { Command } from './command.js';
import { AGENT_HOME, HOME_VOLUME } from './docker-run.js';

export const DEFAULT_IMAGE = 'stashbase-sandbox:latest';
export const LABEL_BUILT = 'stashbase.built';
export const LABEL_DOCKERFILE = 'stashbase.dockerfile-sha256';
/** How the agents were installed, and (npm) the versions asked for: a build can tell whether an image already has them. */
export const LABEL_AGENTS_FROM = 'stashbase.agents-from';
export const LABEL_CLAUDE = 'stashbase.claude-version';
export const LABEL_CODEX = 'stashbase.codex-version';
/** The build context's file holding the CA npm trusts for its registry (empty when none). */
export const NPM_CA_FILE = 'npm-ca.pem';
/** Written by Dockerfile.sandbox: the agent CLI versions it installed. */
export const VERSIONS_FILE = '/etc/stashbase/agent-versions';
export const REMINDER_DAYS = 14;

export interface DefaultBuildInput {
  docker: string;
  tag: string;
  dockerfile: string;
  /** An empty directory: the image needs nothing from the host. */
  context: string;
  force: boolean;
  builtAt: string;
  dockerfileSha256: string;
  buildArgs: Record<string, string>;
  agents: AgentsBuild;
}

/** The agents from their official installers, or from npm at pinned versions (or dist-tags) and, when set, npm's registry. */
export type AgentsBuild = { from: 'installer' } | { from: 'npm'; claude: string; codex: string; registry?: string };

function agentsArgs(a: AgentsBuild): string[] {
  if (a.from === 'installer') return ['--label', `${LABEL_AGENTS_FROM}=installer`];
  return [
    '--label', `${LABEL_AGENTS_FROM}=npm`, '--label', `${LABEL_CLAUDE}=${a.claude}`, '--label', `${LABEL_CODEX}=${a.codex}`,
    '--build-arg', 'AGENTS_FROM=npm', '--build-arg', `CLAUDE_VERSION=${a.claude}`, '--build-arg', `CODEX_VERSION=${a.codex}`,
    ...(a.registry !== undefined ? ['--build-arg', `NPM_REGISTRY=${a.registry}`] : []),
  ];
}

export function defaultBuildCommand(b: DefaultBuildInput): Command {
  const args = ['build', '--tag', b.tag, '--file', b.dockerfile, '--label', `${LABEL_BUILT}=${b.builtAt}`, '--label', `${LABEL_DOCKERFILE}=${b.dockerfileSha256}`];
  // --force: a fresh base and, by a changed build argument, fresh agent CLIs.
  if (b.force) args.push('--pull', '--build-arg', `AGENTS_REFRESH=${b.builtAt}`);
  args.push(...agentsArgs(b.agents));
  for (const [k, v] of Object.entries(b.buildArgs)) args.push('--build-arg', `${k}=${v}`);
  args.push(b.context);
  return { file: b.docker, args };
}

export const LABEL_SOURCE = 'stashbase.dockerfile';

export interface DockerfileBuild {
  docker: string;
  tag: string;
  /** The copies stashbase made (lib/docker/build-context.ts). */
  dockerfile: string;
  context: string;
  pull: boolean;
  /** The engine's network for the steps; otherwise none. */
  network: boolean;
  /** The profile's Dockerfile, and the digest of it and its inputs: labels. */
  source: string;
  digest: string;
}

export function dockerfileBuildCommand(b: DockerfileBuild): Command {
  return {
    file: b.docker,
    args: [
      'build', '--tag', b.tag, '--file', b.dockerfile, '--force-rm', ...(b.network ? [] : ['--network', 'none']), ...(b.pull ? ['--pull'] : []),
      '--label', `${LABEL_SOURCE}=${b.source}`, '--label', `${LABEL_DOCKERFILE}=${b.digest}`, b.context,
    ],
  };
}

export function imageInspectCommand(docker: string, ref: string): Command {
  const labels = [LABEL_BUILT, LABEL_DOCKERFILE, LABEL_AGENTS_FROM, LABEL_CLAUDE, LABEL_CODEX].map((l) => `{{index .Config.Labels "${l}"}}`);
  return { file: docker, args: ['image', 'inspect', '--format', ['{{.Created}}', ...labels].join('|'), ref] };
}

export function versionsCommand(docker: string, image: string): Command {
  return { file: docker, args: ['run', '--rm', '--network', 'none', '--cap-drop', 'ALL', '--entrypoint', 'cat', image, VERSIONS_FILE] };
}

/** The image's own environment, one VAR=value a line. */
export function imageEnvCommand(docker: string, ref: string): Command {
  return { file: docker, args: ['image', 'inspect', '--format', '{{range .Config.Env}}{{println .}}{{end}}', ref] };
}

/**
 * The admin shell. The home volume is every run's agent's to write, so the
 * shell gets no capabilities and no new privileges (as a run's agent), and
 * `path` (the image's PATH without the home's own bin folders, where a planted
 * `nano` or `make` would wait for you, and Python without its user
 * site-packages, whose .pth files run at every start) unless it is null
 * (--trust-home).
 */
export function shellCommand(docker: string, image: string, user: string | null, tty: boolean, path: string | null = null): Command {
  return {
    file: docker,
    args: [
      'run', '--rm', tty ? '-it' : '-i', '--init',
      '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges',
      ...(user !== null ? ['--user', user] : []),
      // Nor, unless trusted, the user site-packages there (found in review: a .pth file a sealed run left ran at every python3).
      ...(path !== null ? ['--env', `PATH=${path}`, '--env', 'PYTHONNOUSERSITE=1'] : []),
      '--mount', `type=volume,source=${HOME_VOLUME},target=${AGENT_HOME}`,
      // The home volume is every run's agent's to write: the shell reads none of its startup files
      // (.bashrc, .profile, .inputrc, whose macros can rewrite what you type), since it has the network.
      '--env', `HOME=${AGENT_HOME}`, '--env', 'INPUTRC=/dev/null', '--workdir', AGENT_HOME,
      '--entrypoint', 'bash', image, '--noprofile', '--norc',
    ],
  };
}
