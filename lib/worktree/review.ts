// Before a merge: what the agent changed that would run on the user's machine
// later, without anyone asking them (hooks, direnv, editor tasks, install
// scripts, build files and manifests with code in them, container files, CI,
// git filters, new executables and symlinks), and every config a run itself
// keeps from the agent (lib/paths/tool-configs.ts). Names are matched without
// regard to case (a case-insensitive file system takes `.VSCODE` for
// `.vscode`) or to the characters HFS+ ignores. Pure: it reads `git diff
// --raw -z` output and, for manifests, the two blobs.
import { foldedOnDisk, onDisk } from '../paths/mac-names.js';
import { TOOL_CONFIGS } from '../paths/tool-configs.js';
import { jsonOf } from '../readback/json.js';
import { firstFew, printable } from '../util/printable.js';
import { HOOK_NAMES } from '../git/named-files.js';

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
const KINDS_AS_WRITTEN: Array<[RegExp, string]> = [
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
  [/(?:^|\/)\.claude\/(?:settings(?:\.local)?\.json$|scheduled_tasks\.json$|launch\.json$|loop\.md$|keybindings\.json$|statusline-command\.sh$|commands\/|agents\/|hooks\/|skills\/|workflows\/|routines\/|plugins\/)|(?:^|\/)\.mcp\.json$/, "agent configuration: hooks, commands or MCP servers your next agent run obeys"],
  [/(?:^|\/)(?:CLAUDE|AGENTS)\.md$/, 'agent instructions your next agent run follows'],
  [/(?:^|\/)(?:CMakeLists\.txt|[^/]+\.cmake|meson\.build|build\.gradle(?:\.kts)?|settings\.gradle(?:\.kts)?|gradlew(?:\.bat)?|pom\.xml|build\.xml|BUILD(?:\.bazel)?|WORKSPACE(?:\.bazel)?|MODULE\.bazel|SConstruct|wscript)$|(?:^|\/)gradle\/wrapper\/|(?:^|\/)\.mvn\//, 'build file'],
  [/(?:^|\/)(?:Dockerfile|Containerfile)(?:\.[^/]*)?$|(?:^|\/)[^/]+\.(?:Dockerfile|Containerfile)$|(?:^|\/)\.dockerignore$/, 'container image build (your next docker build runs its steps)'],
  [/(?:^|\/)(?:docker-)?compose(?:\.[^/]+)?\.ya?ml$/, 'container composition (what docker compose runs and mounts)'],
  // Found in review (round 26): what runs on your next git commit through hooks already installed, and more files tools load as code.
  [/(?:^|\/)(?:\.lintstagedrc(?:\.(?:json|ya?ml|js|cjs|mjs|ts))?|lint-staged\.config\.(?:js|cjs|mjs|ts)|\.huskyrc(?:\.(?:json|js|cjs|ya?ml))?|husky\.config\.(?:js|cjs)|\.?simple-git-hooks\.(?:json|js|cjs|mjs)|\.commitlintrc(?:\.(?:json|ya?ml|js|cjs|mjs|ts|cts))?|commitlint\.config\.(?:js|cjs|mjs|ts|cts|mts)|\.czrc|\.cz\.(?:json|toml|ya?ml))$/, 'git commit hook runner configuration (runs on your next git commit)'],
  [/(?:^|\/)(?:Gemfile|[^/]+\.gemspec|Directory\.Build\.(?:props|targets)|Directory\.Packages\.props|hatch_build\.py|\.pdbrc(?:\.py)?|\.mocharc\.(?:js|cjs|mjs|ya?ml|json|jsonc)|karma\.conf\.(?:js|cjs|ts)|\.pythonrc(?:\.py)?|sitecustomize\.py|usercustomize\.py)$/, 'runs as code when your tools load it (install, build, test or debugger)'],
  [/(?:^|\/)(?:\.?eslintrc\.(?:js|cjs|mjs|ts)|eslint\.config\.(?:js|cjs|mjs|ts|mts|cts)|\.?prettierrc\.(?:js|cjs|mjs)|prettier\.config\.(?:js|cjs|mjs|ts)|\.?stylelintrc\.(?:js|cjs|mjs)|stylelint\.config\.(?:js|cjs|mjs)|tailwind\.config\.(?:js|cjs|mjs|ts)|postcss\.config\.(?:js|cjs|mjs|ts)|babel\.config\.(?:js|cjs|mjs|json)|\.babelrc(?:\.(?:js|cjs|mjs|json))?|(?:vite|vitest|jest|next|nuxt|svelte|astro|webpack|rollup|playwright)\.config\.(?:js|cjs|mjs|ts|mts|cts))$/, 'JavaScript config your editor or tools load and run'],
];

/** Matched without regard to case. */
const KINDS: Array<[RegExp, string]> = KINDS_AS_WRITTEN.map(([re, why]) => [new RegExp(re.source, 'i'), why]);


const CONFIG_PARTS = TOOL_CONFIGS.map((n) => n.toLowerCase().split('/'));

/** The run-time tool config `path` is, or is inside, at any depth (outside node_modules), or null. */
export function toolConfigOf(path: string): string | null {
  const parts = foldedOnDisk(path).split('/');
  if (parts.includes('node_modules')) return null;
  for (const [i, n] of CONFIG_PARTS.entries()) {
    for (let at = 0; at + n.length <= parts.length; at++) if (n.every((c, k) => parts[at + k] === c)) return TOOL_CONFIGS[i] as string;
  }
  return null;
}

/**
 * Manifests whose code runs on a build or an install, flagged when a line that
 * says so changed (or, `whole`, on any change once the file says so).
 */
const MANIFESTS: Array<{ path: RegExp; why: string; code: RegExp; whole: boolean }> = [
  { path: /(?:^|\/)pyproject\.toml$/i, why: 'Python build system (an in-tree backend or build hook runs on install)', code: /^\s*(?:\[build-system\]|requires\s*=|build-backend\s*=|backend-path\s*=|\[\s*tool\.(?:hatch\.build|poetry\.build|pdm\.build|setuptools\.cmdclass|scikit-build|maturin))/, whole: false },
  { path: /(?:^|\/)Cargo\.toml$/i, why: 'Cargo build script or proc-macro settings (run on cargo build)', code: /^\s*(?:build\s*=|links\s*=|\[build-dependencies\]|proc-macro\s*=)/, whole: false },
  { path: /(?:^|\/)tsconfig(?:\.[^/]*)?\.json$/i, why: 'TypeScript plugins your editor loads', code: /"plugins"\s*:/, whole: true },
];

function manifestChange(c: RawChange, read: (oid: string) => string | null): string | null {
  for (const m of MANIFESTS) {
    if (!m.path.test(c.path)) continue;
    const text = (oid: string) => (ZERO.test(oid) ? '' : (read(oid) ?? ''));
    const relevant = (t: string) => t.split('\n').filter((l) => m.code.test(l)).join('\n');
    const [before, after] = [text(c.oldOid), text(c.newOid)];
    if (m.whole ? after.split('\n').some((l) => m.code.test(l)) : relevant(before) !== relevant(after)) return `${m.why}; ${verb(c.status)}`;
  }
  return null;
}

/** npm's lifecycle scripts: they run on install, publish or pack without being named. */
const LIFECYCLE = new Set(['preinstall', 'install', 'postinstall', 'prepare', 'preprepare', 'postprepare', 'prepublish', 'prepublishOnly', 'prepack', 'postpack', 'dependencies']);

/** A manifest's JSON as an object, 'unreadable' (not JSON, or JSON null), or null when there is none or it is no object. */
function manifestJson(text: string | null): Record<string, unknown> | 'unreadable' | null {
  if (text === null) return null;
  try {
    const v = jsonOf(text);
    if (v === null) return 'unreadable';
    return typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return 'unreadable';
  }
}

function scripts(text: string | null, json: ReturnType<typeof manifestJson>): Record<string, unknown> {
  if (json === 'unreadable') return { '(unreadable package.json)': text };
  const s = json?.scripts;
  return s !== null && typeof s === 'object' && !Array.isArray(s) ? (s as Record<string, unknown>) : {};
}

/** package.json keys of git hook runners: what they name runs on your next commit or push (husky, lint-staged, simple-git-hooks, pre-commit, yorkie, ghooks). */
const HOOK_KEYS = ['husky', 'lint-staged', 'simple-git-hooks', 'pre-commit', 'pre-push', 'gitHooks', 'ghooks'];

function hookSettings(json: ReturnType<typeof manifestJson>): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  if (json === null || json === 'unreadable') return out;
  for (const k of HOOK_KEYS) if (Object.hasOwn(json, k)) out[k] = JSON.stringify(json[k]);
  const config = Object.hasOwn(json, 'config') ? json.config : undefined;
  if (config !== null && typeof config === 'object' && !Array.isArray(config) && Object.hasOwn(config, 'ghooks')) out['config.ghooks'] = JSON.stringify((config as Record<string, unknown>).ghooks);
  return out;
}

function scriptChanges(c: RawChange, read: (oid: string) => string | null): string | null {
  const [oldText, newText] = [ZERO.test(c.oldOid) ? null : read(c.oldOid), ZERO.test(c.newOid) ? null : read(c.newOid)];
  const [oldJson, newJson] = [manifestJson(oldText), manifestJson(newText)];
  const before = scripts(oldText, oldJson);
  const after = scripts(newText, newJson);
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((n) => JSON.stringify(before[n]) !== JSON.stringify(after[n])).sort();
  const [hooksBefore, hooksAfter] = [hookSettings(oldJson), hookSettings(newJson)];
  const hooks = [...new Set([...Object.keys(hooksBefore), ...Object.keys(hooksAfter)])].filter((k) => hooksBefore[k] !== hooksAfter[k]).sort();
  const said = [
    // Names are the branch's (any JSON key): each quoted, and a few of them (review, round 35: a name holding newlines
    // forged lines of the review and pushed its real findings off the screen).
    ...(names.length > 0 ? [`scripts changed: ${firstFew(names.map((n) => (LIFECYCLE.has(n) ? `${n} (runs on install)` : JSON.stringify(n))), 10)}`] : []),
    ...(hooks.length > 0 ? [`git hook runner settings changed: ${hooks.join(', ')} (run on your next git commit or push)`] : []),
  ];
  return said.length === 0 ? null : said.join('; ');
}

const verb = (s: string) => (s === 'A' ? 'added' : s === 'D' ? 'deleted' : 'changed');


/** What your git takes from the working tree (lib/worktree/merge.ts gitReadsFromTree): folders end in '/', the top is ''. */
export interface GitFromTree {
  /** The hooks folder core.hooksPath names, where it lies in the tree. */
  hooks: string[];
  /** Config files an include names there. */
  configs: string[];
  /** Files and folders (ending in '/') a value of your config or one of your hooks names there (lib/git/named-files.ts), and why. */
  named?: Array<{ path: string; why: string }>;
}

/**
 * Why a file at `path` can run code on your machine, by its name alone (the kinds above, the run-time tool configs a
 * run keeps from the agent, the hook folders), or null.
 */
export function runsCodeByName(path: string): string | null {
  const named = byName(path);
  return named.kinds[0] ?? (named.config === null ? null : `a config your tools run or obey in its folder (${named.config})`);
}

/** The kinds a path is of by its name as macOS takes it, and (when of none) the run-time tool config it is or is in. */
function byName(path: string): { kinds: string[]; config: string | null } {
  const name = onDisk(path);
  const kinds = KINDS.filter(([re]) => re.test(name)).map(([, why]) => why);
  return { kinds, config: kinds.length === 0 ? toolConfigOf(path) : null };
}

/** What to look at before merging, in path order; an empty list means nothing of these kinds changed. */
export function review(changes: RawChange[], read: (oid: string) => string | null, tree: GitFromTree = { hooks: [], configs: [] }): Finding[] {
  const out: Finding[] = [];
  const hooks = tree.hooks.map(foldedOnDisk);
  const configs = tree.configs.map(foldedOnDisk);
  const named = (tree.named ?? []).map((n) => ({ ...n, path: foldedOnDisk(n.path) }));
  for (const c of changes) {
    const folded = foldedOnDisk(c.path);
    // A hooks folder that is the tree's top: only its files by a hook's name are hooks there.
    if (hooks.some((h) => (h === '' ? !folded.includes('/') && HOOK_NAMES.has(folded) : folded.startsWith(h)))) out.push({ path: c.path, why: `git hook in the folder your core.hooksPath names: your git runs it, this merge's post-merge and commit hooks included; ${verb(c.status)}` });
    if (configs.includes(folded)) out.push({ path: c.path, why: `git config your repository's config includes: your next git command obeys it (hooks, fsmonitor, a pager); ${verb(c.status)}` });
    for (const n of named) if (n.path.endsWith('/') ? folded.startsWith(n.path) : folded === n.path) out.push({ path: c.path, why: `${n.why}: your git runs or reads it (this merge too); ${verb(c.status)}` });
    const { kinds, config } = byName(c.path);
    for (const why of kinds) out.push({ path: c.path, why: `${why}; ${verb(c.status)}` });
    if (config !== null) out.push({ path: c.path, why: `a config your tools run or obey in its folder (${config}), which a run keeps from the agent; ${verb(c.status)}` });
    const manifest = manifestChange(c, read);
    if (manifest !== null) out.push({ path: c.path, why: manifest });
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
    // A submodule moved to another commit (review, round 30): git submodule update checks out the agent's choice.
    else if (c.newMode === '160000' && c.oldMode === '160000' && c.oldOid !== c.newOid) out.push({ path: c.path, why: "submodule moved to another commit: git submodule update checks out the agent's" });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

export function formatReview(branch: string, findings: Finding[]): string {
  const byPath = new Map<string, string[]>();
  for (const f of findings) byPath.set(f.path, [...(byPath.get(f.path) ?? []), f.why]);
  const width = Math.min(48, Math.max(...[...byPath.keys()].map((p) => p.length)));
  // Each finding one line, whatever its words carry.
  const rows = [...byPath].map(([path, whys]) => printable(`  ${JSON.stringify(path) === `"${path}"` ? path.padEnd(width) : JSON.stringify(path)}  ${whys.join('; ')}`, true));
  return [`${branch} changes files that can run code on your machine; look at them before merging (git diff HEAD...${branch} -- <path>):`, ...rows].join('\n');
}
