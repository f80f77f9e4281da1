// Path rule entries as written in a profile, resolved to absolute paths or to
// patterns: "~" is home, a relative path is the working directory, an absolute
// path is as written; "*", "?", "**" and "[..]" make a glob; "re:" a regular
// expression over the absolute path, where a leading "~" means home and a
// leading relative path the working directory.
import { realPathOf } from '../util/real-path.js';
import { isAbsolute, join, resolve } from 'node:path';
import { portableRegex } from './portable-regex.js';

export type Rule =
  | { kind: 'path'; entry: string; path: string }
  | { kind: 'pattern'; entry: string; regex: RegExp; root: string; maxDepth: number | null };

export const GLOB_META = /[*?[]/;

export function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whether `path` is `dir` or lies below it (as strings: both absolute and normalized). */
export const inside = (path: string, dir: string) => path === dir || path.startsWith(dir === '/' ? '/' : dir + '/');

/** The concrete paths of the plain (non-pattern) entries of a rule list. */
export function rulePaths(entries: string[], home: string, cwd: string): string[] {
  return entries.flatMap((e) => {
    const r = resolveRule(e, home, cwd);
    return r.kind === 'path' ? [r.path] : [];
  });
}

export function expandHome(entry: string, home: string, cwd: string): string {
  if (entry === '~') return home;
  if (entry.startsWith('~/')) return join(home, entry.slice(2));
  return isAbsolute(entry) ? resolve(entry) : resolve(cwd, entry);
}

export function globToRegex(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i] as string;
    if (ch === '*') {
      if (glob[i + 1] === '*') {
        // "**/" matches zero or more directories; a trailing "**" anything below.
        if (glob[i + 2] === '/') {
          out += '(?:[^/]*/)*';
          i += 2;
        } else {
          out += '.*';
          i += 1;
        }
      } else out += '[^/]*';
    } else if (ch === '?') out += '[^/]';
    else if (ch === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end === -1) out += '\\[';
      else {
        let body = glob.slice(i + 1, end);
        if (body.startsWith('!')) body = '^' + body.slice(1);
        out += `[${body.replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else out += escapeRegex(ch);
  }
  return new RegExp(`^${out}$`);
}

function fixedPrefix(segments: string[], isMeta: (s: string) => boolean): { root: string; rest: string[] } {
  const idx = segments.findIndex(isMeta);
  const fixed = idx === -1 ? segments : segments.slice(0, idx);
  return { root: '/' + fixed.filter(Boolean).join('/'), rest: idx === -1 ? [] : segments.slice(idx) };
}

export function resolveRule(entry: string, home: string, cwd: string): Rule {
  if (entry.startsWith('re:')) return resolveRegex(entry, home, cwd);
  if (!GLOB_META.test(entry)) return { kind: 'path', entry, path: expandHome(entry, home, cwd) };
  const abs = expandHome(entry, home, cwd);
  const { root, rest } = fixedPrefix(abs.split('/'), (s) => GLOB_META.test(s));
  const maxDepth = rest.some((s) => s.includes('**')) ? null : rest.length;
  return { kind: 'pattern', entry, regex: globToRegex(abs), root, maxDepth };
}

/**
 * The same glob rule with its fixed folder (its walk's root) spelled as its real path, when a link leads there: a
 * tree reached by its real path (a Docker run's working directory, a remote run's history) is matched too (found in
 * review: `~/src/**\/*.pem` with `~/src` a link hid nothing from a Docker run started in it). None for a rule that is
 * no glob, a regex rule, or a root that is its own real path.
 */
export function realRootVariant(entry: string, rule: Rule, home: string, cwd: string): Rule | null {
  if (rule.kind !== 'pattern' || entry.startsWith('re:')) return null;
  const root = realPathOf(rule.root);
  if (root === null || root === rule.root) return null;
  const abs = expandHome(entry, home, cwd);
  if (!abs.startsWith(rule.root)) return null;
  return resolveRule(`${root === '/' ? '' : root}${abs.slice(rule.root === '/' ? 0 : rule.root.length)}`, home, cwd);
}

function resolveRegex(entry: string, home: string, cwd: string): Rule {
  // \d and \w spelled out, as Seatbelt needs them (a profile's entries were checked against the subset when it loaded).
  const portable = portableRegex(entry.slice(3));
  let src = 'source' in portable ? portable.source : entry.slice(3);
  const anchored = src.startsWith('^');
  if (anchored) src = src.slice(1);
  if (src === '~' || src.startsWith('~/') || src.startsWith('~\\/')) src = escapeRegex(home) + src.slice(1);
  else if (anchored && !src.startsWith('/') && !src.startsWith('\\/')) src = escapeRegex(cwd + '/') + src;
  const regex = new RegExp(anchored ? `^${src}` : src);
  // The literal text before the first metacharacter, cut back to a directory.
  let literal = '';
  if (anchored) {
    for (let i = 0; i < src.length; i++) {
      const ch = src[i] as string;
      if (ch === '\\' && i + 1 < src.length && !/[A-Za-z0-9]/.test(src[i + 1] as string)) {
        literal += src[++i];
      } else if (/[.*+?^${}()|[\]\\]/.test(ch)) break;
      else literal += ch;
    }
    // A quantifier applies to the character before it, which is then not fixed.
    if (/^[*?{]/.test(src.slice(escapedLength(src, literal)))) literal = literal.slice(0, -1);
  }
  const root = literal.includes('/') ? literal.slice(0, literal.lastIndexOf('/')) || '/' : '/';
  return { kind: 'pattern', entry, regex, root, maxDepth: null };
}

/** Length in the regex source of the literal prefix (escapes count twice). */
function escapedLength(src: string, literal: string): number {
  let i = 0;
  let n = 0;
  while (n < literal.length && i < src.length) {
    i += src[i] === '\\' ? 2 : 1;
    n++;
  }
  return i;
}
