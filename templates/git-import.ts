// The git commands of the import that ends a run (lib/git/import.ts). Two
// sides: the run's own git directory, read only through a git directory of
// stashbase's own making (its config, no refs, no hooks) with the run's
// objects as the object store and yours as the alternate; and your
// repository, written only by git's own checks (index-pack --strict into a
// quarantine, moved in once all is checked; update-ref with the value each ref had). Neither side reads a
// config, a hook or an environment setting the agent could have written.
import type { Command } from './command.js';

/** Settings that would make git run a program, read a lying index of commits, or fetch; and bounds on the memory it maps and caches. */
const LOCKED = [
  '-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-c', 'core.untrackedCache=false',
  '-c', 'core.commitGraph=false', '-c', 'core.multiPackIndex=false', '-c', 'protocol.allow=never',
  '-c', 'gc.auto=0', '-c', 'maintenance.auto=false', '-c', 'fetch.writeCommitGraph=false',
  '-c', 'core.packedGitLimit=1g', '-c', 'core.packedGitWindowSize=64m', '-c', 'core.deltaBaseCacheLimit=96m',
  '-c', 'pack.windowMemory=256m', '-c', 'pack.deltaCacheSize=64m', '-c', 'pack.threads=1',
];

/**
 * The address space each git of the import may use (KiB): objects the agent
 * wrote can inflate without end (a zlib bomb) or reference each other in a
 * loop of deltas, and git would grow until the machine's memory is gone. Set
 * by the shell before git starts (where the kernel has the limit).
 */
export const GIT_MEMORY_KIB = 4 * 1024 * 1024;

/** `git …` under that bound: sh sets it, then becomes git. */
function bounded(git: string, args: string[]): { file: string; args: string[] } {
  return { file: '/bin/sh', args: ['-c', `ulimit -v ${GIT_MEMORY_KIB} 2>/dev/null; exec "$0" "$@"`, git, ...args] };
}

/** Variables of the caller's environment that would point git elsewhere or give it settings. */
export const GIT_REDIRECTS = [
  'GIT_DIR', 'GIT_COMMON_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_CONFIG', 'GIT_CONFIG_PARAMETERS', 'GIT_CONFIG_COUNT', 'GIT_NAMESPACE', 'GIT_REPLACE_REF_BASE', 'GIT_SHALLOW_FILE',
  'GIT_GRAFT_FILE', 'GIT_CEILING_DIRECTORIES', 'GIT_DISCOVERY_ACROSS_FILESYSTEM', 'GIT_QUARANTINE_PATH', 'GIT_EXTERNAL_DIFF',
  'GIT_EXEC_PATH', 'GIT_TRACE', 'GIT_TRACE2', 'GIT_TRACE2_EVENT', 'GIT_TRACE2_PERF', 'GIT_TRACE_PACKET',
];

const QUIET_ENV = { GIT_NO_LAZY_FETCH: '1', GIT_ALLOW_PROTOCOL: 'none', GIT_NO_REPLACE_OBJECTS: '1', GIT_TERMINAL_PROMPT: '0' };

export interface RunObjects {
  git: string;
  /** stashbase's own git directory for the reading side. */
  readerDir: string;
  /** The run's object store. */
  objects: string;
  /** Your repository's object store. */
  yours: string;
}

/** A command over the run's objects (with yours as the alternate): no config but stashbase's, none of the agent's. */
export function runObjectsCommand(o: RunObjects, args: string[]): Command {
  return {
    ...bounded(o.git, [...LOCKED, ...args]),
    env: {
      ...QUIET_ENV, GIT_DIR: o.readerDir, GIT_OBJECT_DIRECTORY: o.objects, GIT_ALTERNATE_OBJECT_DIRECTORIES: o.yours,
      GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: o.readerDir,
    },
    unsetEnv: GIT_REDIRECTS.filter((v) => !['GIT_DIR', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES'].includes(v)),
  };
}

/** The reading side's config: the object format of yours, nothing else. */
export function readerConfig(objectFormat: 'sha1' | 'sha256'): string {
  return objectFormat === 'sha256'
    ? '[core]\n\trepositoryformatversion = 1\n\tbare = true\n[extensions]\n\tobjectformat = sha256\n'
    : '[core]\n\trepositoryformatversion = 0\n\tbare = true\n';
}

export const isAncestorArgs = (old: string, now: string) => ['merge-base', '--is-ancestor', old, now];

/** Every object the tips on standard input reach (and the `^` ones do not), one a line, a tree with its path. */
export const OBJECTS_ARGS = ['rev-list', '--objects', '--stdin'];

/** Your remotes' settings, names only, NUL-separated. */
export const REMOTES_ARGS = ['config', '--null', '--name-only', '--get-regexp', '^remote\\..*\\.(url|pushurl|fetch)$'];

/** The objects reachable from the tips on standard input and not from the `--not` ones, from the run's store only, as a pack on standard output. */
export const PACK_ARGS = ['pack-objects', '--revs', '--local', '--stdout', '-q'];

/** A command in your repository: your config applies, but no hook, fsmonitor or fetch runs. */
export function yoursCommand(git: string, gitDir: string, args: string[]): Command {
  return { ...bounded(git, ['--git-dir', gitDir, ...LOCKED, ...args]), env: { ...QUIET_ENV }, unsetEnv: GIT_REDIRECTS };
}

/** Indexes a pack of the run's store afresh (its own .idx is the agent's, and may lie): a pack whose deltas do not resolve fails. */
export const indexPackArgs = (pack: string, idx: string) => ['index-pack', '--no-rev-index', '-o', idx, pack];

/**
 * Writes a pack on standard input as it is (never as loose objects: a delta of a few bytes can stand for a gigabyte),
 * each object checked (fsck) and its links too, into the object folder the command names (a quarantine, below);
 * a pack past `maxBytes` fails as it comes, with what it wrote so far in the quarantine.
 */
export const indexPackStdinArgs = (maxBytes: number) => ['index-pack', '--stdin', '--strict', `--max-input-size=${maxBytes}`];

/** The size of every object in the command's object folder, written out, one a line (in no order). */
export const SIZES_ARGS = ['cat-file', '--batch-all-objects', '--unordered', '--batch-check=%(objectsize)'];

/**
 * A command in your repository whose objects go into `quarantine`, a folder
 * of stashbase's inside your object store, with your store as its alternate
 * (what git's receive-pack does with a push): nothing of it is in your store
 * until stashbase moves its pack in, once every check has passed, and a
 * refusal, a timeout or Ctrl+C leaves nothing behind. `alternate: false`: the
 * quarantine alone, for what is asked of its own objects.
 */
export function quarantinedCommand(git: string, gitDir: string, quarantine: string, args: string[], alternate = true): Command {
  const c = yoursCommand(git, gitDir, args);
  return { ...c, env: { ...c.env, GIT_OBJECT_DIRECTORY: quarantine, GIT_QUARANTINE_PATH: quarantine, ...(alternate ? { GIT_ALTERNATE_OBJECT_DIRECTORIES: `${gitDir}/objects` } : {}) } };
}

/** Each line of standard input a ref change with the value the ref must still have ("-z" form). */
export const updateRefsArgs = (message: string) => ['update-ref', '--stdin', '-z', '-m', message];

export const catFileCheckArgs = ['cat-file', '--batch-check=%(objectname) %(objecttype)'];

export const symbolicRefArgs = (message: string, target: string) => ['symbolic-ref', '-m', message, 'HEAD', target];

export const detachHeadArgs = (message: string, oid: string) => ['update-ref', '--no-deref', '-m', message, 'HEAD', oid];

export const logArgs = (old: string, now: string) => ['log', '--no-decorate', '--no-show-signature', '--format=%h %<(100,trunc)%s', '-n', '11', `${old}..${now}`];

/** The run's own git directory as a plan shows it (lib/git/run-git-dir.ts). */
export interface PlannedGitDir {
  dir: string;
  at: string;
  copies: string[];
  readOnly: string[];
  admin: string | null;
  otherWorktrees: string[];
  /** Where your object store is bound read-only. */
  shared: string;
}

export function gitDirStepText(g: PlannedGitDir): string {
  const list = (what: string, names: string[]) => (names.length > 0 ? [`  ${what}: ${names.join(', ')}`] : []);
  return [
    `create ${g.dir}, mounted at ${g.at} (the run's own git directory; the agent's git writes here, never into yours):`,
    ...list('copied in', [...g.copies, ...(g.admin !== null ? [`worktrees/${g.admin}`] : [])]),
    `  objects/: empty, its alternate ${g.shared} (your object store, bound read-only)`,
    ...list('bound read-only from yours', [...g.readOnly, ...g.otherWorktrees.map((n) => `worktrees/${n}`)]),
    `  after the run: its links, special files and setuid bits removed and named; the objects that the refs taken reach are packed by git pack-objects and written by git index-pack --strict into a quarantine in your object store, moved in only when every check passes and they come to at most the import's size bound written out; refs by git update-ref, ref by ref; HEAD and the index only when they check out; nothing else`,
  ].join('\n');
}
