// A profile's Dockerfile build: docker never reads your folder itself. The
// Dockerfile is read once (by its real path, not through a link), and what
// its COPY and ADD instructions name is read once, each step opened from the
// folder before it and never through a link (lib/readback/beneath.ts), and
// written as it was read into a context of the build's own, with the
// Dockerfile's text beside it. Nothing a deny_read rule names is copied; a
// link among the inputs refuses the build (name its target instead); the
// whole is bounded. The digest of what was written (the text, and each
// input's path, mode and bytes, each with its length) is the image's tag: an
// edit is a new image, a worktree's copy of the same files the same one.
// Building needs that digest trusted (lib/profile/trust.ts), and during runs
// of the profile the Dockerfile, what it copies, the folders its patterns
// match in and its .dockerignore are read-only (buildRoots).
import { printable } from '../util/printable.js';
import { createHash } from 'node:crypto';
import { closeSync, constants, fchmodSync, mkdirSync, openSync, realpathSync as realpathOf, writeSync } from 'node:fs';
import { basename as basenameOf, dirname, join, relative, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { inside } from '../paths/rules.js';
import { readBack } from '../readback/file.js';
import { childKind, closeDir, listDir, NotBeneath, type OpenDir, openChildDir, openRoot, readChildFile } from '../readback/beneath.js';

/** What a build may read of your folder: beyond it, the build is refused (build the image yourself and name it in sandbox.image). */
export const MAX_CONTEXT_FILES = 20_000;
export const MAX_CONTEXT_BYTES = 512 << 20;
export const MAX_DOCKERFILE_BYTES = 1 << 20;

/** A profile's Dockerfile, read once. */
export interface DockerfileText {
  /** Its real path. */
  path: string;
  /** Its folder: the build's folder. */
  context: string;
  text: string;
}

/** Reads the Dockerfile a profile names (relative to `cwd`): a link is refused (name its target), as is a file that cannot be read. */
export function readDockerfile(named: string, cwd: string, label: string): DockerfileText {
  const given = resolve(cwd, named);
  const r = readBack(given, MAX_DOCKERFILE_BYTES);
  if (!r.ok) throw new ConfigError(`${label}: ${given} is ${r.why}${r.why === 'a symbolic link' ? ' (name the file it points at)' : ''}`);
  // Its folders may be links (a home under /data): the file itself is not.
  let path = given;
  try {
    path = join(realpathOf(dirname(given)), basenameOf(given));
  } catch {
    // said when it is read again
  }
  return { path, context: dirname(path), text: r.data.toString('utf8') };
}

/** The instructions' lines, continuations joined, comments and heredoc bodies dropped. */
function instructions(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  let heredoc: string | null = null;
  for (const raw of text.split('\n')) {
    if (heredoc !== null) {
      if (raw.trim() === heredoc) heredoc = null;
      continue;
    }
    if (cur === '' && /^\s*#/.test(raw)) continue;
    const line = raw.replace(/\r$/, '');
    if (line.endsWith('\\')) {
      cur += line.slice(0, -1) + ' ';
      continue;
    }
    cur += line;
    const h = /<<-?\s*["']?([A-Za-z_][A-Za-z0-9_]*)["']?/.exec(cur);
    if (h) heredoc = h[1] as string;
    if (cur.trim() !== '') out.push(cur.trim());
    cur = '';
  }
  if (cur.trim() !== '') out.push(cur.trim());
  return out;
}

/** The paths COPY and ADD read from the build context (not from another stage or image, not URLs). */
export function dockerfileSources(text: string): string[] {
  const out: string[] = [];
  for (const line of instructions(text)) {
    const m = /^(COPY|ADD)\s+(.*)$/i.exec(line);
    if (!m) continue;
    let args = m[2] as string;
    const flags: string[] = [];
    for (let f = /^(--\S+)\s+/.exec(args); f; f = /^(--\S+)\s+/.exec(args)) {
      flags.push(f[1] as string);
      args = args.slice(f[0].length);
    }
    if (flags.some((f) => /^--from=/i.test(f))) continue;
    let words: string[];
    if (args.startsWith('[')) {
      try {
        words = (JSON.parse(args) as unknown[]).filter((w): w is string => typeof w === 'string');
      } catch {
        continue;
      }
    } else words = args.split(/\s+/).filter(Boolean);
    if (words.some((w) => w.startsWith('<<'))) continue;
    for (const src of words.slice(0, -1)) if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(src) && !src.startsWith('git@')) out.push(src);
  }
  return out;
}

const GLOB = /[*?[]/;

function globRegex(pattern: string): RegExp {
  let re = '';
  for (const ch of pattern) re += ch === '*' ? '[^/]*' : ch === '?' ? '[^/]' : /[.+^${}()|\\]/.test(ch) ? `\\${ch}` : ch;
  return new RegExp(`^${re}$`);
}

/** ADD sources the engine downloads itself (a URL, a git repository), with its own network even in a build without one. */
export function remoteSources(text: string): string[] {
  const out: string[] = [];
  for (const line of instructions(text)) {
    const m = /^ADD\s+(.*)$/i.exec(line);
    if (!m) continue;
    const words = (m[1] as string).split(/\s+/).filter((w) => !w.startsWith('--'));
    for (const w of words.slice(0, -1)) if (/^[a-z][a-z0-9+.-]*:\/\//i.test(w) || w.startsWith('git@')) out.push(w);
  }
  return out;
}

/** A source as a path relative to the folder (COPY /x and COPY x are the same); throws for one outside it. */
function sourceRel(src: string, d: DockerfileText): string {
  const abs = resolve(d.context, src.replace(/^\/+/, ''));
  if (!inside(abs, d.context)) throw new ConfigError(`sandbox.dockerfile: ${d.path} copies ${printable(JSON.stringify(src), true)}, outside its folder ${d.context}`);
  return relative(d.context, abs);
}

/**
 * What the next build reads, kept read-only during runs: the Dockerfile, each
 * source it names (a pattern: the folder it matches in, so that a new match
 * is no way in), and the folder's .dockerignore, there or not.
 */
export function buildRoots(d: DockerfileText): string[] {
  const roots = new Set<string>([d.path, join(d.context, '.dockerignore')]);
  for (const src of dockerfileSources(d.text)) {
    const rel = sourceRel(src, d);
    const parts = rel === '' ? [] : rel.split('/');
    const at = parts.findIndex((c) => GLOB.test(c));
    roots.add(join(d.context, ...(at === -1 ? parts : parts.slice(0, at))));
  }
  return [...roots].sort();
}

export interface BuildContext {
  /** sha256 of the text and every input, each with its length: the image's tag. */
  digest: string;
  /** The inputs read, relative to the folder. */
  files: string[];
  /** Left out because a deny_read rule names them. */
  left: string[];
  /** Where the context was written (null: read and hashed only). */
  dir: string | null;
  dockerfile: string | null;
}

/**
 * Reads the Dockerfile's inputs once and, with `dir`, writes them as they
 * were read into `dir/context` (files created new, never through a link),
 * the Dockerfile's text at `dir/Dockerfile`. `denied(abs)`: a deny_read rule
 * names the path. Throws ConfigError for a link among the inputs, a source
 * outside the folder, or past the bounds.
 */
export function makeContext(d: DockerfileText, denied: (abs: string) => boolean, network: boolean, dir: string | null): BuildContext {
  const h = createHash('sha256');
  const field = (b: Buffer | string) => {
    const buf = typeof b === 'string' ? Buffer.from(b) : b;
    h.update(`${buf.length}:`).update(buf).update(';');
  };
  field('stashbase-dockerfile-build');
  field(network ? 'network' : 'no network');
  field(d.text);
  const taken = new Map<string, { mode: number; sha: string }>();
  const left: string[] = [];
  let bytes = 0;
  const context = dir === null ? null : join(dir, 'context');
  if (context !== null) mkdirSync(context, { recursive: true, mode: 0o700 });
  const root = openRoot(d.context);
  const bound = () =>
    new ConfigError(`sandbox.dockerfile: ${d.path} copies more than ${MAX_CONTEXT_FILES} files or ${MAX_CONTEXT_BYTES >> 20} MB from ${d.context}; copy less, or build the image yourself and name it in sandbox.image`);
  const link = (rel: string) => new ConfigError(`sandbox.dockerfile: ${d.path} copies ${printable(join(d.context, rel), true)}, which is or passes through a symbolic link; a build reads no link: name what it points at`);
  /** Writes one input into the context: its folders made here, the file created new. */
  const write = (rel: string, data: Buffer, mode: number) => {
    if (context === null) return;
    const to = join(context, rel);
    mkdirSync(dirname(to), { recursive: true, mode: 0o755 });
    const fd = openSync(to, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      fchmodSync(fd, mode & 0o777);
      for (let at = 0; at < data.length; ) at += writeSync(fd, data, at);
    } finally {
      closeSync(fd);
    }
  };
  /** Takes `name` in the open folder `parent` (a file, or a folder whole). */
  const take = (parent: OpenDir, name: string): void => {
    const rel = parent.rel === '' ? name : `${parent.rel}/${name}`;
    if (taken.has(rel)) return;
    if (denied(join(d.context, rel))) return void left.push(`${rel} (deny_read)`);
    const kind = childKind(parent, name);
    if (kind === 'missing') return;
    if (kind === 'link') throw link(rel);
    if (kind === 'other') return void left.push(`${rel} (not a regular file)`);
    if (kind === 'dir') {
      const sub = openChildDir(parent, name);
      try {
        for (const n of listDir(sub).sort()) take(sub, n);
      } finally {
        closeDir(sub);
      }
      return;
    }
    if (taken.size >= MAX_CONTEXT_FILES) throw bound();
    const got = readChildFile(parent, name, MAX_CONTEXT_BYTES - bytes);
    if (got === null) throw bound();
    bytes += got.data.length;
    taken.set(rel, { mode: got.st.mode & 0o777, sha: createHash('sha256').update(got.data).digest('hex') });
    write(rel, got.data, got.st.mode);
  };
  /** Opens the folders down to `parts` (none a link) and calls `at` in the last. */
  const within = (parts: string[], at: (dir: OpenDir) => void): void => {
    const opened: OpenDir[] = [root];
    try {
      for (const p of parts) opened.push(openChildDir(opened[opened.length - 1] as OpenDir, p));
      at(opened[opened.length - 1] as OpenDir);
    } catch (e) {
      if (e instanceof NotBeneath && e.why === 'missing') return;
      if (e instanceof NotBeneath && e.why === 'a symbolic link') throw link(e.rel);
      throw e;
    } finally {
      for (const o of opened.slice(1)) closeDir(o);
    }
  };
  try {
    const sources = [...dockerfileSources(d.text), '.dockerignore'];
    for (const src of sources) {
      const rel = sourceRel(src, d);
      const parts = rel === '' ? [] : rel.split('/');
      const glob = parts.findIndex((c) => GLOB.test(c));
      if (glob === -1) {
        if (parts.length === 0) {
          for (const n of listDir(root).sort()) take(root, n);
        } else within(parts.slice(0, -1), (dir) => take(dir, parts[parts.length - 1] as string));
        continue;
      }
      // A pattern: matched level by level from its fixed folder.
      const walk = (dir: OpenDir, depth: number): void => {
        const re = globRegex(parts[glob + depth] as string);
        for (const n of listDir(dir).sort()) {
          if (!re.test(n)) continue;
          if (glob + depth === parts.length - 1) take(dir, n);
          else if (childKind(dir, n) === 'dir') {
            const sub = openChildDir(dir, n);
            try {
              walk(sub, depth + 1);
            } finally {
              closeDir(sub);
            }
          }
        }
      };
      within(parts.slice(0, glob), (dir) => walk(dir, 0));
    }
  } finally {
    closeDir(root);
  }
  const files = [...taken.keys()].sort();
  for (const f of files) {
    const t = taken.get(f) as { mode: number; sha: string };
    field(f);
    field(t.mode.toString(8));
    field(t.sha);
  }
  let dockerfile: string | null = null;
  if (dir !== null) {
    dockerfile = join(dir, 'Dockerfile');
    const fd = openSync(dockerfile, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      writeSync(fd, d.text);
    } finally {
      closeSync(fd);
    }
  }
  return { digest: h.digest('hex'), files, left, dir, dockerfile };
}
