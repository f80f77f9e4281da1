// Before a merge: what the agent changed that would run on the user's machine
// later, without anyone asking them (hooks, direnv, editor tasks, install
// scripts, build files, CI, git filters, new executables and symlinks). Pure:
// it reads `git diff --raw -z` output and, for manifests, the two blobs.
import { jsonOf } from '../readback/json.js';

export interface RawChange {
  oldMode: string;
  newMode: string;
  oldOid: string;
  newOid: string;
  status: string;
  path: string;
}

export interface Finding {
  path: string;
  why: string;
}

const ZERO = /^0+$/;

/** `git diff --raw -z --no-renames --no-abbrev` output. */
export function parseRaw(out: string): RawChange[] {
  const parts = out.split('\0');
  const changes: RawChange[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const m = /^:(\d{6}) (\d{6}) ([0-9a-f]+) ([0-9a-f]+) ([A-Z])\d*$/.exec(parts[i] as string);
    if (!m) break;
    changes.push({ oldMode: m[1] as string, newMode: m[2] as string, oldOid: m[3] as string, newOid: m[4] as string, status: m[5] as string, path: parts[i + 1] as string });
  }
  return changes;
}

const base = (p: string) => p.slice(p.lastIndexOf('/') + 1);
const HOOK_DIRS = /^(?:\.githooks|\.husky|\.git-hooks|\.hooks)\//;
const KINDS: Array<[RegExp, string]> = [
  [HOOK_DIRS, 'git hook (runs when a hooks path points here)'],
  [/(?:^|\/)\.pre-commit-config\.ya?ml$|(?:^|\/)\.?lefthook(?:-local)?\.(?:ya?ml|json|toml)$|(?:^|\/)\.overcommit\.yml$/, 'git hook manager configuration'],
  [/(?:^|\/)\.envrc$|(?:^|\/)\.env(?:rc)?\.local$/, 'direnv: runs when you enter the folder'],
  [/(?:^|\/)\.?mise(?:\.local)?\.toml$|(?:^|\/)\.tool-versions$|(?:^|\/)\.mise\//, 'mise: tasks and hooks run when you enter the folder'],
  [/^\.vscode\/(?:tasks|launch|settings)\.json$|(?:^|\/)[^/]+\.code-workspace$/, 'editor tasks, launch or settings (may run on open)'],
  [/^\.idea\/(?:runConfigurations\/|workspace\.xml$|tasks\.xml$)/, 'IDE run configuration'],
  [/(?:^|\/)(?:setup\.py|setup\.cfg|build\.rs|conftest\.py|noxfile\.py|tox\.ini)$|(?:^|\/)\.cargo\/config(?:\.toml)?$/, 'runs on build, install or test'],
  [/(?:^|\/)(?:GNUmakefile|[Mm]akefile|[^/]+\.mk|[Jj]ustfile|\.justfile|Taskfile\.ya?ml|Rakefile|Gruntfile\.js|gulpfile\.js)$/, 'build file'],
  [/^\.github\/(?:workflows|actions)\/|^\.gitlab-ci\.yml$|^\.circleci\/|(?:^|\/)Jenkinsfile$|^\.buildkite\/|^azure-pipelines\.yml$|^\.travis\.yml$|^\.drone\.yml$/, 'CI configuration'],
  [/(?:^|\/)\.gitattributes$/, 'git attributes (filters and diff drivers run git config commands)'],
  [/^\.gitmodules$/, 'submodules'],
  [/(?:^|\/)(?:\.npmrc|\.yarnrc|\.yarnrc\.yml|\.pnpmfile\.cjs|\.pnpmfile\.mjs|bunfig\.toml)$|^\.yarn\/plugins\//, 'package manager configuration'],
  [/^\.devcontainer\/|(?:^|\/)\.devcontainer\.json$/, 'dev container configuration'],
  [/(?:^|\/)\.claude\/(?:settings(?:\.local)?\.json$|commands\/|agents\/|hooks\/|skills\/)|(?:^|\/)\.mcp\.json$/, "agent configuration: hooks, commands or MCP servers your next agent run obeys"],
  [/(?:^|\/)(?:CLAUDE|AGENTS)\.md$/, 'agent instructions your next agent run follows'],
];

/** npm's lifecycle scripts: they run on install, publish or pack without being named. */
const LIFECYCLE = new Set(['preinstall', 'install', 'postinstall', 'prepare', 'preprepare', 'postprepare', 'prepublish', 'prepublishOnly', 'prepack', 'postpack', 'dependencies']);

function scripts(text: string | null): Record<string, unknown> {
  if (text === null) return {};
  try {
    const s = (jsonOf(text) as { scripts?: unknown }).scripts;
    return s !== null && typeof s === 'object' && !Array.isArray(s) ? (s as Record<string, unknown>) : {};
  } catch {
    return { '(unreadable package.json)': text };
  }
}

function scriptChanges(c: RawChange, read: (oid: string) => string | null): string | null {
  const before = scripts(ZERO.test(c.oldOid) ? null : read(c.oldOid));
  const after = scripts(ZERO.test(c.newOid) ? null : read(c.newOid));
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((n) => JSON.stringify(before[n]) !== JSON.stringify(after[n])).sort();
  if (names.length === 0) return null;
  return `scripts changed: ${names.map((n) => (LIFECYCLE.has(n) ? `${n} (runs on install)` : n)).join(', ')}`;
}

const verb = (s: string) => (s === 'A' ? 'added' : s === 'D' ? 'deleted' : 'changed');

/** What to look at before merging, in path order; an empty list means nothing of these kinds changed. */
export function review(changes: RawChange[], read: (oid: string) => string | null): Finding[] {
  const out: Finding[] = [];
  for (const c of changes) {
    for (const [re, why] of KINDS) if (re.test(c.path)) out.push({ path: c.path, why: `${why}; ${verb(c.status)}` });
    if (base(c.path) === 'package.json' || base(c.path) === 'composer.json') {
      const s = scriptChanges(c, read);
      if (s) out.push({ path: c.path, why: s });
    }
    if (c.newMode === '100755' && c.oldMode !== '100755') out.push({ path: c.path, why: c.status === 'A' ? 'new executable file' : 'made executable' });
    if (c.newMode === '120000') {
      const target = read(c.newOid) ?? '?';
      out.push({ path: c.path, why: `symbolic link to ${JSON.stringify(target)}${c.status === 'A' ? ' (new)' : ''}` });
    }
    if (c.newMode === '160000' && c.oldMode !== '160000') out.push({ path: c.path, why: 'new submodule commit entry' });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

export function formatReview(branch: string, findings: Finding[]): string {
  const byPath = new Map<string, string[]>();
  for (const f of findings) byPath.set(f.path, [...(byPath.get(f.path) ?? []), f.why]);
  const width = Math.min(48, Math.max(...[...byPath.keys()].map((p) => p.length)));
  const rows = [...byPath].map(([path, whys]) => `  ${JSON.stringify(path) === `"${path}"` ? path.padEnd(width) : JSON.stringify(path)}  ${whys.join('; ')}`);
  return [`${branch} changes files that can run code on your machine; look at them before merging (git diff HEAD...${branch} -- <path>):`, ...rows].join('\n');
}
