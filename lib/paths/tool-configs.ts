// Configuration in the working tree that your own tools run when you next open
// it, outside any sandbox: an agent's hooks and MCP servers (.claude's
// settings, .mcp.json), an editor's tasks and run configurations (.vscode's
// tasks.json with runOn: folderOpen, .idea's run configurations, a dev
// container's commands), direnv's .envrc and the toolchain wrappers' version
// files, package managers' and commit hook runners' settings, and .gitmodules
// (which points your submodule commands at repositories of the agent's choosing). Those that
// exist are write-protected on both backends, like Anthropic's sandbox
// runtime does; one the agent creates is moved aside when the run ends, and
// named (lib/git/nested-repo-guard.ts), rather than standing in during the run
// for a file your own tools would then find to be a folder. A profile opens
// one by naming it in allow_write.
import { printable } from '../util/printable.js';
import { realPathOf } from '../util/real-path.js';
import { lstatSync } from 'node:fs';
import { linkOutOnTheWay, moveAside } from '../git/planted-repos.js';
import { join } from 'node:path';
import { inside, rulePaths } from './rules.js';
import { findRepoRoot } from '../git/repo.js';
import { restoreHint } from '../util/style.js';

export const TOOL_CONFIGS = [
  // Agents: hooks, MCP servers, commands, skills, notify commands.
  '.claude/settings.json', '.claude/settings.local.json', '.claude/commands', '.claude/agents', '.claude/hooks', '.claude/skills', '.mcp.json',
  // Claude Code's own list of what it keeps its agent from writing (review, round 29): scheduled prompts fired at your
  // next session's start, workflow scripts, routines, a preview's launch command, the loop's prompt, project plugins
  // (their hooks), a status line script. Its instructions (CLAUDE.md, rules, memory) stay the agent's, as CLAUDE.md is.
  '.claude/scheduled_tasks.json', '.claude/workflows', '.claude/routines', '.claude/launch.json', '.claude/loop.md', '.claude/plugins',
  '.claude/statusline-command.sh', '.claude/keybindings.json',
  '.codex', '.gemini', '.cursor',
  // Editors: tasks, run configurations, language-server commands, project-local init files.
  '.vscode', '.idea', '.devcontainer', '.zed', '.helix', '.nvim.lua', '.nvimrc', '.exrc', '.lazy.lua',
  // What your shell and toolchain wrappers obey on entering the folder or on any command there:
  // direnv, mise, pyenv (a version may name a path), rustup (a toolchain may be a path).
  '.envrc', 'mise.toml', '.mise.toml', 'mise.local.toml', '.mise.local.toml', '.config/mise.toml', '.mise/config.toml', '.tool-versions',
  '.python-version', 'rust-toolchain', 'rust-toolchain.toml',
  // cargo's project config (build.rustc-wrapper and the like run on your next cargo build).
  '.cargo/config.toml', '.cargo/config',
  // Package managers' project settings that run programs (yarnPath, script-shell, pnpm's install hooks) or choose where
  // packages come from (an index or registry of the agent's is its code in your next install).
  '.yarnrc', '.yarnrc.yml', '.npmrc', '.pnpmfile.cjs',
  // (Review, round 28: pnpm 10's settings file names a pnpmfile anywhere, which pnpm install and pnpm run loaded; Yarn's
  // release and plugins, which yarnPath and every yarn command load; bun's preload and registry; uv's, Poetry's and
  // PDM's indexes and interpreter; Bundler's local settings, which win over yours; NuGet's sources; Go's workspace,
  // whose replace directives fetched a module of the agent's on go build; Git LFS's endpoint, where git lfs push sends
  // your objects.)
  'pnpm-workspace.yaml', '.pnpmfile.mjs', '.yarn/releases', '.yarn/plugins', 'bunfig.toml', 'uv.toml', 'poetry.toml', 'pdm.toml', '.pdm.toml', '.pdm-python',
  '.bundle/config', 'nuget.config', 'NuGet.Config', 'NuGet.config', 'go.work', '.lfsconfig',
  // Build tools' settings that every command of theirs obeys (review, round 28: Maven's .mvn/jvm.config ran a Java agent
  // from an ignored folder on mvn -v; maven.config and extensions.xml fetched an extension of the agent's): JVM options,
  // the version or fork a launcher downloads, the launcher's own download address.
  '.mvn', 'gradle.properties', '.bazelrc', 'user.bazelrc', '.bazelversion', '.bazeliskrc', '.sbtopts', '.jvmopts', '.bsp',
  // Interpreters, debuggers and editors that read a start-up file from the folder they start in (review, round 28: pdb's
  // .pdbrc, perl -d's .perldb and Vim's .vimrc with exrc ran the agent's commands): R's .Rprofile and .Renviron, irb's
  // and pry's, gdb's and lldb's (refused by them unless you allowed it), Vim's other names.
  '.Rprofile', '.Renviron', '.irbrc', '.pryrc', '.pdbrc', '.perldb', '.vimrc', '.gvimrc', '_vimrc', '.gdbinit', '.lldbinit',
  // Mise's other places. (Other version managers' files, .nvmrc, .ruby-version and kin, are not on the list: none was
  // found to take a path, and a repository that tracks one would see its every commit by the agent lose its index.)
  '.config/mise', 'mise/config.toml', 'mise/config.local.toml', '.mise/config.local.toml', '.config/mise.local.toml',
  // RSpec's options (--require loads a file on every rspec), Android's local.properties (sdk.dir: the tools Gradle runs).
  '.rspec', '.rspec-local', 'local.properties',
  // What docker compose merges into every docker compose up (a host folder mounted, a privileged container).
  'compose.override.yaml', 'compose.override.yml', 'docker-compose.override.yaml', 'docker-compose.override.yml',
  // A dev container's file at the top (its initializeCommand runs on your machine), beside the folder above.
  '.devcontainer.json',
  // Commit-time hook runners: their config names the commands your next commit runs (every name they read: review, round
  // 28, lefthook-local.yaml ran on git commit where only .yml was listed).
  '.pre-commit-config.yaml', '.husky', '.lintstagedrc', '.lintstagedrc.json', '.lintstagedrc.yaml', '.lintstagedrc.yml',
  '.lintstagedrc.js', '.lintstagedrc.cjs', '.lintstagedrc.mjs', 'lint-staged.config.js', 'lint-staged.config.cjs', 'lint-staged.config.mjs',
  ...['lefthook', 'lefthook-local'].flatMap((n) => ['yml', 'yaml', 'toml', 'json', 'jsonc'].flatMap((e) => [`${n}.${e}`, `.${n}.${e}`, `.config/${n}.${e}`])),
  // lefthook's scripts folders, its `.husky` (review, round 34: `.lefthook/pre-commit/check.sh` ran at your commit).
  '.lefthook', '.lefthook-local',
  '.gitmodules',
];


/**
 * Lock files, which name where each package comes from (a resolved URL of the
 * agent's is its code in your next install: review, round 28e, a
 * package-lock.json the user's .gitignore hides had npm install run the agent's
 * postinstall): the agent's to change as it adds packages, so named, not moved,
 * where git does not show them.
 */
const LOCK_FILES = ['package-lock.json', 'npm-shrinkwrap.json', 'yarn.lock', 'pnpm-lock.yaml', 'bun.lock', 'bun.lockb', 'uv.lock', 'poetry.lock', 'pdm.lock', 'Pipfile.lock', 'Gemfile.lock', 'composer.lock', 'Cargo.lock', 'pylock.toml'];

/**
 * An environment file by its name: .env and every .env.<mode>[.local] (bun,
 * Next.js, Vite load them: review, round 28f), .flaskenv. Tools load them into
 * their environment (review, round 28b: FLASK_APP in an ignored .env had your
 * flask run the agent's code; docker compose takes COMPOSE_FILE there): the
 * agent's own to write for the app it works on, so neither protected nor
 * moved, but named when the run made or changed one.
 */
export function isEnvFileName(name: string): boolean {
  return name === '.flaskenv' || /^\.env(?:\.[^/]+)?$/.test(name);
}

/** A lock file by its name (PEP 751's pylock.<name>.toml too). */
export function isLockFileName(name: string): boolean {
  return LOCK_FILES.includes(name) || /^pylock\.[^/]+\.toml$/.test(name);
}

/** Whether `relative` (a path in the tree, outside node_modules) is an environment or lock file, named when the run changed it. */
export function isNamedFile(relative: string): boolean {
  const name = relative.slice(relative.lastIndexOf('/') + 1);
  if (!isEnvFileName(name) && !isLockFileName(name)) return false;
  return !relative.split('/').includes('node_modules');
}

/** Those that exist now (what a run protects). */
export function existingToolConfigs(cwd: string, home: string, allowWrite: string[]): string[] {
  return toolConfigPaths(cwd, home, allowWrite).filter((p) => lstatSync(p, { throwIfNoEntry: false }) !== undefined);
}

/**
 * Moves aside what the agent made among `missing` (paths that did not exist
 * when the run started; for a killed run, those whose birth time is after its
 * start); returns what to tell.
 */
export function quarantineToolConfigs(missing: string[], since: number | null): string[] {
  const out: string[] = [];
  for (const p of missing) {
    // The entry itself, a link as much as a file (found in review: a link left dangling at .npmrc, to the name the
    // .gitmodules after it would be moved aside to, was passed by and then led there).
    // A folder on the way that is a file now (the agent made `.config` a file) holds nothing: the rest are still looked at
    // (review, round 33: ENOTDIR ended the check, and a .envrc the agent made stayed with a warning to look yourself).
    let st: ReturnType<typeof lstatSync> | undefined;
    try {
      st = lstatSync(p);
    } catch {
      continue;
    }
    if (since !== null && !(st.birthtimeMs > 0 && st.birthtimeMs >= since)) continue;
    out.push(setAside(p, 'made', 'when you next open the folder', 'open the folder'));
  }
  return out;
}

/** Moves `p` aside; what to tell (`did`: what the agent did to it; `when`: when your tools would meet it). */
function setAside(p: string, did: string, when: string, before: string): string {
  const moved = moveAside(p);
  if (moved.to !== undefined) return `the agent ${did} ${p}, which your own tools would run or obey ${when}: it was renamed ${moved.to}; review it, then ${restoreHint(moved.to, p)} (a profile's allow_write naming it lets the agent write it: docs/profiles.md)`;
  // Reached through a link in the tree that leads out of it: the link goes aside, so the path no longer leads there.
  const link = linkOutOnTheWay(p);
  const linkMoved = link !== null ? moveAside(link) : null;
  if (link !== null && linkMoved?.to !== undefined) {
    return `the agent ${did} ${p}, which your own tools would run or obey ${when}, through ${link}, a link out of the tree (to ${printable(realPathOf(linkMoved.to) ?? 'elsewhere', true)}): the link was renamed ${linkMoved.to}; review what it leads to, then ${restoreHint(linkMoved.to, link)}`;
  }
  return `the agent ${did} ${p}, which your own tools would run or obey, and it could not be moved aside (${moved.failed}): review it before you ${before}`;
}

const PARTS = new Set(TOOL_CONFIGS.flatMap((n) => n.split('/')));
const FOLDERS = new Set(TOOL_CONFIGS.flatMap((n) => n.split('/').slice(0, -1)));
/** Whether `name` is that of a folder a tool config lies in (`.cargo` of `.cargo/config.toml`): a link there leads to one. */
export const isConfigFolderName = (name: string): boolean => FOLDERS.has(name);
/** Whether a path holds any of those names as a whole component: one test where splitting every path costs ten. */
const ANY_PART = new RegExp(`(?:^|/)(?:${[...PARTS].map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})(?:/|$)`);

/** Whether `relative` (a path in the tree, from its top) is one of them in a subfolder, outside node_modules: `pkg/.npmrc`, `app/.claude/settings.json`, … */
export function isToolConfigBelow(relative: string): boolean {
  // Called for every entry of the tree: most paths hold no config's name at all.
  if (!ANY_PART.test(relative)) return false;
  const parts = relative.split('/');
  if (parts.includes('node_modules')) return false;
  // The config itself, or a file inside a config folder (pkg/.vscode/tasks.json: a folder's time does not change when a file in it is rewritten).
  return TOOL_CONFIGS.some((name) => {
    const n = name.split('/');
    for (let at = 1; at + n.length <= parts.length; at++) if (n.every((c, i) => parts[at + i] === c)) return true;
    return false;
  });
}

/**
 * The folders of the config's own name that `relative` is in (`crate/.cargo`
 * for `crate/.cargo/config.toml`): renamed into place, such a folder brings an
 * old file under a config's name (found in review: an old `.cargo` folder
 * moved next to a crate, and cargo ran its rustc-wrapper). Folders named for a
 * whole config (`.vscode`) are judged themselves, as configs.
 */
export function configFoldersOf(relative: string): string[] {
  const parts = relative.split('/');
  const out: string[] = [];
  for (const name of TOOL_CONFIGS) {
    const n = name.split('/');
    for (let at = 1; at + n.length <= parts.length; at++) {
      if (!n.every((c, i) => parts[at + i] === c)) continue;
      for (let k = 0; k < n.length - 1; k++) out.push(parts.slice(0, at + k + 1).join('/'));
    }
  }
  return out;
}

/**
 * Moves aside those in subfolders that the run made or changed (`written`):
 * the top's are read-only or checked by name; deeper ones your tools obey in
 * their own folder (a package's .npmrc, a crate's .cargo/config.toml).
 */
export function quarantineDeeperToolConfigs(found: string[], written: (p: string) => boolean): string[] {
  // One at a time, outermost first: a folder moved aside takes the files below it along, untouched (review, round 28g:
  // .config/mise/config.toml renamed inside .config/mise, then the folder moved, left a restore line to a path gone).
  const out: string[] = [];
  const moved: string[] = [];
  for (const p of [...found].sort((a, b) => a.length - b.length)) {
    if (moved.some((m) => p.startsWith(`${m}/`)) || !written(p)) continue;
    const said = setAside(p, 'made or changed', 'in that folder', 'work in that folder');
    if (lstatSync(p, { throwIfNoEntry: false }) === undefined) moved.push(p);
    out.push(said);
  }
  return out;
}

/** Their paths in the working directory (and at the repository's top, when that is higher), but those allow_write opens. */
export function toolConfigPaths(cwd: string, home: string, allowWrite: string[]): string[] {
  const roots = new Set([cwd, findRepoRoot(cwd)?.root ?? cwd]);
  const opened = rulePaths(allowWrite, home, cwd);
  const out: string[] = [];
  for (const root of roots) for (const name of TOOL_CONFIGS) {
    const p = join(root, name);
    if (!opened.some((o) => inside(p, o))) out.push(p);
  }
  return out;
}
