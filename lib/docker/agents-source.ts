// Where the default image gets Claude Code and Codex: their official installers
// (the default, as the spec says) or an npm registry (`agent docker build
// --agents-from npm`), for hosts that reach a registry but not the vendors'
// download sites (CI behind a mirror). The registry and the CA file it needs
// are npm's own settings on this host, read when the build starts, so a mirror
// configured for npm works for the image too.
import { readFileSync } from 'node:fs';
import type { AgentsBuild } from '../../templates/docker-image.js';
import { ConfigError, UsageError } from '../errors.js';
import { capture } from '../exec.js';
import { findTool } from '../util/find-tool.js';

/** The environment's equivalents of the flags (a run that builds the image when it is missing reads them too). */
export const AGENTS_FROM_VAR = 'STASHBASE_SANDBOX_AGENTS_FROM';
export const CLAUDE_VERSION_VAR = 'STASHBASE_SANDBOX_CLAUDE_VERSION';
export const CODEX_VERSION_VAR = 'STASHBASE_SANDBOX_CODEX_VERSION';

export interface AgentsFlags {
  agentsFrom?: string;
  claudeVersion?: string;
  codexVersion?: string;
}

// A version or a dist-tag: it ends up in a build argument and a package spec, so nothing else.
const VERSION = /^[0-9A-Za-z][0-9A-Za-z.+-]{0,63}$/;

function version(flag: string, value: string | undefined): string {
  if (value === undefined || value === '') return 'latest';
  if (!VERSION.test(value)) throw new UsageError(`${flag}: ${JSON.stringify(value)} is not an npm version or dist-tag (e.g. 2.1.197 or latest)`);
  return value;
}

/** The flags, else the environment; versions only go with npm. */
export function agentsSource(flags: AgentsFlags, env: NodeJS.ProcessEnv): AgentsBuild {
  const from = flags.agentsFrom ?? (env[AGENTS_FROM_VAR] || 'installer');
  const claude = flags.claudeVersion ?? env[CLAUDE_VERSION_VAR];
  const codex = flags.codexVersion ?? env[CODEX_VERSION_VAR];
  if (from === 'installer') {
    if (claude || codex) throw new UsageError('--claude-version and --codex-version pin npm packages: they need --agents-from npm');
    return { from: 'installer' };
  }
  if (from !== 'npm') throw new UsageError(`--agents-from: ${JSON.stringify(from)} is neither "installer" nor "npm"`);
  return { from: 'npm', claude: version('--claude-version', claude), codex: version('--codex-version', codex) };
}

export interface NpmSettings {
  registry?: string;
  /** The text of the CA file npm trusts for it, when npm names one. */
  caPem?: string;
}

async function npmConfig(npm: string, key: string): Promise<string | undefined> {
  const out = (await capture({ file: npm, args: ['config', 'get', key] })).trim();
  return out === '' || out === 'undefined' || out === 'null' ? undefined : out;
}

/** npm's registry and CA file on this host; nothing when npm is not installed here (the image's npm uses its defaults). */
export async function npmSettings(env: NodeJS.ProcessEnv): Promise<NpmSettings> {
  const npm = findTool('npm', env);
  if (!npm) return {};
  const [registry, cafile] = await Promise.all([npmConfig(npm, 'registry'), npmConfig(npm, 'cafile')]);
  if (cafile === undefined) return { registry };
  try {
    return { registry, caPem: readFileSync(cafile, 'utf8') };
  } catch (e) {
    throw new ConfigError(`npm's cafile setting names ${cafile}, which cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); the image's npm would not trust the registry`);
  }
}
