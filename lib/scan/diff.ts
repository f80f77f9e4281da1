// Reads the added lines out of `git diff -U0` and `git log -p -U0` output, as
// scan units: per commit and file, the added lines and their line numbers.
// Pure text in, units out (tested on diffs with odd names and hunks).
import type { ScanUnit } from './unit.js';

/** What `git log --format=%x01%H` prints before each commit's diff. */
export const COMMIT_MARK = '\u0001'; // templates/git-scan-format.ts

interface Open {
  file: string | null;
  lines: string[];
  numbers: number[];
  binary: boolean;
}

/** A C-quoted path as git writes names with unusual characters ("b/a\tb"). */
export function unquoteGitPath(s: string): string {
  if (!s.startsWith('"')) return s;
  const bytes: number[] = [];
  for (let i = 1; i < s.length - 1; i++) {
    const c = s[i] as string;
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const n = s[++i] as string;
    if (/[0-7]/.test(n)) {
      bytes.push(parseInt(s.slice(i, i + 3), 8));
      i += 2;
    } else bytes.push(({ a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13 } as Record<string, number>)[n] ?? n.charCodeAt(0));
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * Units from a unified diff with zero context. A file section starts at
 * "diff --git"; its name comes from "+++ b/…" (a deleted file has none and
 * adds nothing). Inside a hunk the header's counts say how many lines follow,
 * so an added line that itself starts with "+++" or "diff" is read as content.
 * Files whose added text holds a NUL byte are binary and skipped; a file's
 * added text past `maxBytes` is cut there (`onSkip` is told either way).
 */
export function parseAddedLines(diff: string, maxBytes: number, onSkip: (file: string, why: string) => void = () => {}): ScanUnit[] {
  const units: ScanUnit[] = [];
  let commit: string | undefined;
  let cur: Open | null = null;
  let size = 0;
  let cut = false;
  const close = () => {
    if (cur?.file && cur.lines.length > 0) {
      if (cur.binary) onSkip(cur.file, 'binary');
      else units.push({ file: cur.file, text: cur.lines.join('\n'), lineNumbers: cur.numbers, ...(commit ? { commit } : {}) });
    }
    if (cur?.file && cut) onSkip(cur.file, `added text past ${maxBytes} bytes not scanned`);
    cur = null;
    size = 0;
    cut = false;
  };
  const lines = diff.split('\n');
  let addLeft = 0;
  let delLeft = 0;
  let next = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (addLeft > 0 || delLeft > 0) {
      if (line.startsWith('+') && addLeft > 0) {
        addLeft--;
        const text = line.slice(1);
        if (cur && !cur.binary && !cut) {
          if (text.includes('\0')) cur.binary = true;
          else if (size + text.length + 1 > maxBytes) cut = true;
          else {
            cur.lines.push(text);
            cur.numbers.push(next);
            size += text.length + 1;
          }
        }
        next++;
        continue;
      }
      if (line.startsWith('-') && delLeft > 0) {
        delLeft--;
        continue;
      }
      if (line.startsWith('\\')) continue; // "\ No newline at end of file"
      addLeft = delLeft = 0; // a malformed hunk: read on as headers
    }
    if (line.startsWith(COMMIT_MARK)) {
      close();
      commit = line.slice(1).trim() || undefined;
    } else if (line.startsWith('diff --git ') || line.startsWith('diff --cc ') || line.startsWith('diff --combined ')) {
      close();
      cur = { file: null, lines: [], numbers: [], binary: false };
    } else if (cur && line.startsWith('+++ ')) {
      const name = unquoteGitPath(line.slice(4).replace(/\t$/, ''));
      cur.file = name === '/dev/null' ? null : name.replace(/^b\//, '');
    } else if (cur && line.startsWith('@@ ')) {
      const m = /^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
      if (!m) continue;
      delLeft = m[1] === undefined ? 1 : Number(m[1]);
      next = Number(m[2]);
      addLeft = m[3] === undefined ? 1 : Number(m[3]);
    } else if (line.startsWith('\\')) {
      continue;
    } else if (line.startsWith('Binary files ') && cur) {
      cur.binary = true;
    }
  }
  close();
  return units;
}
