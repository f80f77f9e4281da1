// A profile's Dockerfile build: docker never reads your folder itself. What the
// Dockerfile's COPY and ADD instructions name is read by stashbase (no link
// followed out of the folder, nothing a deny_read rule names, within a bound),
// hashed with the Dockerfile's own text (the image's tag: the image is shared
// by content, a changed input is a new image), and copied into a context of
// the build's own. Those inputs are read-only during runs (lib/run/run-agent.ts),
// and the Dockerfile's text is part of the profile's trust.
import { createHash } from 'node:crypto';
import { chmodSync, type Dirent, existsSync, lstatSync, mkdirSync, readdirSync, readlinkSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { inside } from '../paths/rules.js';
import { readBack } from '../readback/file.js';

/** What a build may read of your folder: beyond it, the build is refused (build the image yourself and name it in sandbox.image). */
export const MAX_CONTEXT_FILES = 20_000;
export const MAX_CONTEXT_BYTES = 512 << 20;
export const MAX_DOCKERFILE_BYTES = 1 << 20;

export interface ContextFile {
  rel: string;
  abs: string;
  /** A symbolic link inside the context (copied as one), or null for a file. */
  link: string | null;
  mode: number;
  /** sha256 of the content read (a link: of its target's text). */
  sha256: string;
}

export interface BuildInputs {
  dockerfile: string;
  text: string;
  context: string;
  files: ContextFile[];
  /** What the Dockerfile names (the file or folder each COPY source or pattern match is): read-only during runs. */
  roots: string[];
  /** Left out because a deny_read rule names them, or they lead out of the folder. */
  left: string[];
  /** sha256 of the Dockerfile's text and every input's path, mode and content. */
  digest: string;
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
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

function globRegex(pattern: string): RegExp {
  let re = '';
  for (const ch of pattern) re += ch === '*' ? '[^/]*' : ch === '?' ? '[^/]' : /[.+^${}()|\\]/.test(ch) ? `\\${ch}` : ch;
  return new RegExp(`^${re}$`);
}

/**
 * Reads a Dockerfile's inputs from `context` (its folder). `denied(abs)`: a
 * deny_read rule names the path. Throws ConfigError past the bounds, for a
 * source outside the folder, or for a Dockerfile that cannot be read.
 */
export function buildInputs(dockerfile: string, context: string, denied: (abs: string) => boolean): BuildInputs {
  const r = readBack(dockerfile, MAX_DOCKERFILE_BYTES);
  if (!r.ok) throw new ConfigError(`sandbox.dockerfile: ${dockerfile} is ${r.why}`);
  const text = r.data.toString('utf8');
  const real = realpathSync(context);
  const files = new Map<string, ContextFile>();
  const roots = new Set<string>();
  const left: string[] = [];
  let bytes = 0;
  const bound = () =>
    new ConfigError(`sandbox.dockerfile: ${dockerfile} copies more than ${MAX_CONTEXT_FILES} files or ${MAX_CONTEXT_BYTES >> 20} MB from ${context}; copy less, or build the image yourself and name it in sandbox.image`);
  const add = (abs: string): void => {
    const rel = relative(context, abs);
    if (files.has(rel)) return;
    if (denied(abs)) return void left.push(`${rel} (deny_read)`);
    // A link among its folders would lead the read out of the folder.
    if (abs !== context) {
      let parent: string;
      try {
        parent = realpathSync(dirname(abs));
      } catch {
        return;
      }
      if (parent !== join(real, relative(context, dirname(abs)))) return void left.push(`${rel} (behind a link)`);
    }
    const st = lstatSync(abs, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) {
      let entries: Dirent[] = [];
      try {
        entries = readdirSync(abs, { withFileTypes: true });
      } catch {
        return void left.push(`${rel} (unreadable)`);
      }
      for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) add(join(abs, e.name));
      return;
    }
    if (files.size >= MAX_CONTEXT_FILES) throw bound();
    if (st.isSymbolicLink()) {
      const target = readlinkSync(abs);
      if (!inside(resolve(dirname(abs), target), context)) return void left.push(`${rel} (a link out of the folder)`);
      files.set(rel, { rel, abs, link: target, mode: 0o777, sha256: sha(target) });
    } else if (st.isFile()) {
      const got = readBack(abs, MAX_CONTEXT_BYTES - bytes);
      if (!got.ok) {
        if (got.why === 'too large') throw bound();
        return void left.push(`${rel} (${got.why})`);
      }
      bytes += got.data.length;
      files.set(rel, { rel, abs, link: null, mode: st.mode & 0o777, sha256: sha(got.data) });
    } else left.push(`${rel} (not a regular file)`);
  };
  const take = (abs: string) => {
    roots.add(abs);
    add(abs);
  };
  for (const src of dockerfileSources(text)) {
    const abs = resolve(context, src.replace(/^\/+/, ''));
    if (!inside(abs, context)) throw new ConfigError(`sandbox.dockerfile: ${dockerfile} copies ${JSON.stringify(src)}, outside its folder ${context}`);
    if (!GLOB.test(src)) {
      take(abs);
      continue;
    }
    // A pattern: matched in its folder (the part before the first pattern character).
    const parts = relative(context, abs).split('/');
    const at = parts.findIndex((c) => GLOB.test(c));
    const depth = parts.length - at;
    const re = globRegex(parts.slice(at).join('/'));
    const walk = (dir: string, prefix: string) => {
      let entries: Dirent[] = [];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        const r2 = prefix === '' ? e.name : `${prefix}/${e.name}`;
        if (re.test(r2)) take(join(dir, e.name));
        else if (e.isDirectory() && r2.split('/').length < depth) walk(join(dir, e.name), r2);
      }
    };
    walk(join(context, ...parts.slice(0, at)), '');
  }
  // Docker reads the folder's ignore file itself: it travels with the inputs.
  if (existsSync(join(context, '.dockerignore'))) take(join(context, '.dockerignore'));
  const list = [...files.values()].sort((a, b) => (a.rel < b.rel ? -1 : 1));
  const h = createHash('sha256').update('dockerfile\0').update(text).update('\0');
  for (const f of list) h.update(`${f.rel}\0${f.mode.toString(8)}\0${f.link !== null ? 'link' : 'file'}\0${f.sha256}\0`);
  return { dockerfile, text, context, files: list, roots: [...roots].sort(), left, digest: h.digest('hex') };
}

/**
 * The build's own context in `dir`: each input read again without following
 * links and checked against what was hashed (a file changed since: the build
 * is refused), links copied as links; the Dockerfile beside it. Returns the
 * context folder and the Dockerfile's path.
 */
export function writeBuildContext(inputs: BuildInputs, dir: string): { context: string; dockerfile: string } {
  const context = join(dir, 'context');
  mkdirSync(context, { recursive: true, mode: 0o700 });
  for (const f of inputs.files) {
    const to = join(context, f.rel);
    mkdirSync(dirname(to), { recursive: true });
    if (f.link !== null) {
      symlinkSync(f.link, to);
      continue;
    }
    const got = readBack(f.abs, MAX_CONTEXT_BYTES);
    if (!got.ok || sha(got.data) !== f.sha256) throw new ConfigError(`sandbox.dockerfile: ${f.abs} changed while the build was prepared; nothing was built`);
    writeFileSync(to, got.data);
    chmodSync(to, f.mode);
  }
  const dockerfile = join(dir, 'Dockerfile');
  writeFileSync(dockerfile, inputs.text);
  return { context, dockerfile };
}
