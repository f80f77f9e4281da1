// The views of the known agents' state folders (lib/views/spec.ts): Claude
// Code's ~/.claude (or $CLAUDE_CONFIG_DIR) and Codex's ~/.codex (or
// $CODEX_HOME). Their transcripts, history and logins are kept; what the
// agent would execute or obey in a later run outside the sandbox (settings
// with hooks, status-line and MCP commands, permissions, plugins, custom
// commands, agents and skills, instructions, Codex's config.toml with its
// notify and MCP commands, its rules and prompts) stays as it was: read-only,
// or a copy whose changes are left behind and named. Anything neither list
// knows is treated the same way, so a new kind of executable setting is not
// carried back either.
import { isAbsolute, join } from 'node:path';
import { type Dirent, lstatSync, readdirSync, statSync } from 'node:fs';
import { realPathOf } from '../util/real-path.js';
import { sha256 } from '../util/sha256.js';
import type { Merge, ViewSpec } from './spec.js';

interface Rules {
  live: string[];
  empty: string[];
  merge: Record<string, Merge>;
  quiet: RegExp;
}

/**
 * Claude Code 2.x. Live: transcripts, sessions, todos, plans, edit history,
 * telemetry. Empty: the shell snapshots and session environments its Bash
 * tool sources in a running session, IDE lock files, caches and config
 * backups (which it restores from). Carried back: the OAuth login, the prompt
 * history, and the global config (~/.claude.json, held in the view as
 * .claude.json). Left behind without a note: the managed and remote settings
 * it fetches (a copy there could hold hooks), its cleanup stamp.
 */
const CLAUDE: Rules = {
  live: ['projects', 'sessions', 'todos', 'plans', 'file-history', 'statsig', 'telemetry', 'debug', 'usage-data'],
  empty: ['shell-snapshots', 'session-env', 'ide', 'cache', 'backups', 'paste-cache', 'image-cache'],
  merge: { '.credentials.json': 'claude-login', 'history.jsonl': 'append', '.claude.json': 'claude-config' },
  quiet: /^(\.claude\.json\.(backup|lock|tmp).*|\.credentials\.json\..*|.*\.tmp\.\d+\.[0-9a-f]+|shell-snapshots|session-env|ide|cache|backups|paste-cache|image-cache|policy-limits\.json|remote-settings\.json|\.last-cleanup)$/,
};

/**
 * Codex 0.x. Live: sessions and logs. Carried back: the login and the prompt
 * history. Empty: its shell snapshots, temp folders, caches and thread locks.
 * Its caches, state databases, installation id and lock files stay in
 * the run without a note; so do the system skills it installs on a first run
 * (instructions a later codex would follow, made in the sandbox).
 */
const CODEX: Rules = {
  live: ['sessions', 'archived_sessions', 'log'],
  // thread-writer-locks: lock files a codex of your own left there (read-only, the sandbox's codex cannot start a thread).
  empty: ['shell_snapshots', 'tmp', '.tmp', 'cache', 'thread-writer-locks'],
  merge: { 'auth.json': 'codex-login', 'history.jsonl': 'append' },
  quiet: /^(version\.json|models_cache\.json|.*\.sqlite(-wal|-shm|-journal)?|internal_storage\.json|installation_id|\.sandbox_migration|\.personality_migration|thread-writer-locks|skills|shell_snapshots|tmp|\.tmp|cache|auth\.json\..*|history\.jsonl\..*)$/,
};

function spec(id: string, label: string, named: string, rules: Rules, hostPaths: Record<string, string>, store: string | null): ViewSpec {
  const { at, linkedAs } = folderOf(named);
  const s: ViewSpec = { id, label, at, ...(linkedAs !== undefined ? { linkedAs } : {}), live: [], readOnly: [], copies: [], empty: [], merge: rules.merge, hostPaths, adoptDirs: store === null ? rules.live : [], quiet: rules.quiet };
  // The sessions from stashbase's store: every live folder, yours not looked at (nor shown, nor written).
  if (store !== null) Object.assign(s, { live: [...rules.live], liveFrom: store });
  let list: Dirent[] = [];
  try {
    list = readdirSync(at, { withFileTypes: true });
  } catch {
    // missing: made empty before the run
  }
  for (const e of list) {
    if (e.name in hostPaths) continue; // copied from its own host path
    if (store !== null && rules.live.includes(e.name)) continue; // bound from the store
    if (e.isDirectory()) {
      if (rules.live.includes(e.name)) s.live.push(e.name);
      else if (rules.empty.includes(e.name)) s.empty.push(e.name);
      else s.readOnly.push(e.name);
    } else if (e.isFile() || e.isSymbolicLink()) s.copies.push(e.name);
  }
  // Every empty folder is there from the start, yours or not: made during the run, directly in the view (a folder
  // on the way to the live ones), the Landlock step would give it no links (templates/landlock.ts; Codex links its
  // helpers in tmp/).
  const present = new Set(list.map((e) => e.name));
  for (const name of rules.empty) if (!present.has(name)) s.empty.push(name);
  for (const name of Object.keys(hostPaths)) s.copies.push(name);
  for (const k of ['live', 'readOnly', 'copies', 'empty'] as const) s[k].sort();
  return s;
}

const absolute = (v: string | undefined) => (v !== undefined && isAbsolute(v) ? v : null);

/**
 * A state folder that is a link to a folder (GNU stow links ~/.claude into
 * your dotfiles): the view stands at the folder it leads to. Mounted at the
 * link's name, bubblewrap would follow an absolute link from its own root
 * and find nothing, and no native run could start.
 */
function folderOf(at: string): { at: string; linkedAs?: string } {
  if (!lstatSync(at, { throwIfNoEntry: false })?.isSymbolicLink()) return { at };
  const real = realPathOf(at);
  return real !== null && statSync(real, { throwIfNoEntry: false })?.isDirectory() ? { at: real, linkedAs: at } : { at };
}

/**
 * Where a run's sessions come from: `[sandbox] agent_sessions = "sandbox"` (the default), a store of stashbase's
 * that sandboxed runs share and your own agents never read (as the Docker backend's home volume); "shared" (weaker),
 * your own folders, live. Found in review (round 27): a transcript is more than words to your own claude. Its
 * checkpoints name any file and a backup for it in file-history, and rewinding the session (Esc Esc, restore code)
 * writes each backup there, or deletes the file where the backup is null: an agent's session, or a line it appended
 * to one of yours, had your claude overwrite ~/.bashrc, copy ~/.ssh's key into the tree and delete files. Codex's
 * rollouts carry the policies a resumed session runs under.
 */
export type SessionStore = { stashbaseHome: string; key: string } | null;

/**
 * One store per profile and working tree (review, round 27b): shared by all, it was a channel from a run of one
 * profile, or in one project, to every other: a memory file planted for another project is read by its next
 * sandboxed claude as your instructions, with that profile's reach.
 */
export function sessionStoreKey(profile: { source: string; name: string; file?: string | null }, tree: string): string {
  return sha256(JSON.stringify([profile.source, profile.file ?? profile.name, tree])).slice(0, 24);
}

const storeOf = (id: string, sessions: SessionStore) => (sessions === null ? null : join(sessions.stashbaseHome, 'agent-state', sessions.key, id));

/** Claude Code keeps ~/.claude.json beside ~/.claude; the sandbox's points CLAUDE_CONFIG_DIR at the view, where a copy of it sits. */
export function claudeView(home: string, env: NodeJS.ProcessEnv, sessions: SessionStore = null): { spec: ViewSpec; env: Record<string, string> } {
  const configured = absolute(env.CLAUDE_CONFIG_DIR);
  const at = configured ?? join(home, '.claude');
  const hostPaths: Record<string, string> = configured ? {} : { '.claude.json': join(home, '.claude.json') };
  return { spec: spec('claude', configured ? at : '~/.claude', at, CLAUDE, hostPaths, storeOf('claude', sessions)), env: configured ? {} : { CLAUDE_CONFIG_DIR: at } };
}

export function codexView(home: string, env: NodeJS.ProcessEnv, sessions: SessionStore = null): { spec: ViewSpec; env: Record<string, string> } {
  const configured = absolute(env.CODEX_HOME);
  const at = configured ?? join(home, '.codex');
  return { spec: spec('codex', configured ? at : '~/.codex', at, CODEX, {}, storeOf('codex', sessions)), env: {} };
}
