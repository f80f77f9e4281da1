// A shell line cut into simple commands, enough to find package installs in
// what an agent's Bash tool runs: quotes and escapes are undone; `&&`, `||`,
// `;`, `|`, `&`, newlines and parentheses separate commands; the insides of
// $(...) and backticks are commands too; redirections and heredoc bodies are
// dropped. A word holding an expansion ($X, $(...)) keeps a `$` so the caller
// can tell it is only known at run time. Not a shell: no aliases, functions,
// globbing or variable values (docs/hooks.md says what this cannot see).

/** A word whose value is only known when the shell runs it. */
export const DYNAMIC = '$';

interface Cut {
  commands: string[][];
  /** Text inside $(...) and backticks, to be cut in turn. */
  inner: string[];
}

const BLANK = /[ \t]/;
const BREAK = new Set([';', '&', '|', '\n', '(', ')']);

/** Index just past the `)` that closes a `$(` (or `(`) whose body starts at `i`; quotes respected. */
function closeParen(s: string, i: number): number {
  let depth = 1;
  while (i < s.length) {
    const c = s[i];
    if (c === '\\') i += 2;
    else if (c === "'") i = s.indexOf("'", i + 1) === -1 ? s.length : s.indexOf("'", i + 1) + 1;
    else if (c === '"') i = closeDouble(s, i + 1);
    else {
      if (c === '(') depth++;
      else if (c === ')' && --depth === 0) return i + 1;
      i++;
    }
  }
  return s.length;
}

/** Index just past the `"` that closes a double-quoted string whose body starts at `i`. */
function closeDouble(s: string, i: number): number {
  while (i < s.length) {
    const c = s[i];
    if (c === '\\') i += 2;
    else if (c === '"') return i + 1;
    else if (c === '$' && s[i + 1] === '(') i = closeParen(s, i + 2);
    else i++;
  }
  return s.length;
}

function cut(s: string): Cut {
  const commands: string[][] = [];
  const inner: string[] = [];
  let words: string[] = [];
  let word: string | null = null;
  let dropNext = false; // the word after a redirection is its target
  const heredocs: Array<{ tag: string; strip: boolean }> = [];
  const endWord = () => {
    if (word !== null) {
      if (dropNext) dropNext = false;
      else words.push(word);
    }
    word = null;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  const expansion = (body: string) => {
    inner.push(body);
    word = (word ?? '') + DYNAMIC;
  };
  let i = 0;
  while (i < s.length) {
    const c = s[i] as string;
    if (BLANK.test(c)) {
      endWord();
      i++;
    } else if (c === '\n') {
      endCommand();
      i++;
      // Heredoc bodies start on the next line: skip them up to their tags.
      for (const h of heredocs.splice(0)) {
        for (;;) {
          const eol = s.indexOf('\n', i);
          const line = s.slice(i, eol === -1 ? s.length : eol);
          i = eol === -1 ? s.length : eol + 1;
          if ((h.strip ? line.replace(/^\t+/, '') : line) === h.tag || eol === -1) break;
        }
      }
    } else if (c === '#' && word === null) {
      const eol = s.indexOf('\n', i);
      i = eol === -1 ? s.length : eol;
    } else if (c === '\\') {
      if (s[i + 1] === '\n') i += 2;
      else {
        word = (word ?? '') + (s[i + 1] ?? '');
        i += 2;
      }
    } else if (c === "'") {
      const end = s.indexOf("'", i + 1);
      word = (word ?? '') + s.slice(i + 1, end === -1 ? s.length : end);
      i = end === -1 ? s.length : end + 1;
    } else if (c === '"') {
      const end = closeDouble(s, i + 1);
      const body = s.slice(i + 1, s[end - 1] === '"' ? end - 1 : end);
      let text = '';
      for (let j = 0; j < body.length; j++) {
        const d = body[j] as string;
        if (d === '\\' && /["\\$`\n]/.test(body[j + 1] ?? '')) {
          if (body[j + 1] !== '\n') text += body[j + 1];
          j++;
        } else if (d === '$' && body[j + 1] === '(') {
          const close = closeParen(body, j + 2);
          inner.push(body.slice(j + 2, close - 1));
          text += DYNAMIC;
          j = close - 1;
        } else if (d === '`') {
          const close = body.indexOf('`', j + 1);
          inner.push(body.slice(j + 1, close === -1 ? body.length : close));
          text += DYNAMIC;
          j = close === -1 ? body.length : close;
        } else text += d;
      }
      word = (word ?? '') + text;
      i = end;
    } else if (c === '$' && s[i + 1] === '(') {
      const close = closeParen(s, i + 2);
      if (s[i + 2] === '(') word = (word ?? '') + DYNAMIC; // $(( arithmetic ))
      else expansion(s.slice(i + 2, close - 1));
      i = close;
    } else if (c === '`') {
      const close = s.indexOf('`', i + 1);
      expansion(s.slice(i + 1, close === -1 ? s.length : close));
      i = close === -1 ? s.length : close + 1;
    } else if ((c === '<' || c === '>') && !(c === '<' && s[i + 1] === '(') && !(c === '>' && s[i + 1] === '(')) {
      // A redirection: an fd number before it belongs to it; the next word is its target.
      if (word !== null && /^\d+$/.test(word)) word = null;
      endWord();
      const op = /^(<<-|<<<|<<|<>|>>|>&|<&|>\||<|>)/.exec(s.slice(i))?.[0] ?? c;
      i += op.length;
      const dup = op.endsWith('&') ? /^(\d+|-)/.exec(s.slice(i)) : null; // 2>&1, >&-
      if (dup) i += dup[0].length;
      else if (op === '<<' || op === '<<-') {
        const m = /^[ \t]*(?:'([^']*)'|"([^"]*)"|\\?([^\s;&|<>()]+))/.exec(s.slice(i));
        if (m) {
          heredocs.push({ tag: m[1] ?? m[2] ?? m[3] ?? '', strip: op === '<<-' });
          i += m[0].length;
        }
      } else dropNext = true;
    } else if (c === '&' && s[i + 1] === '>') {
      endWord();
      i += s[i + 2] === '>' ? 3 : 2;
      dropNext = true;
    } else if ((c === '<' || c === '>') && s[i + 1] === '(') {
      // Process substitution: its inside runs as a command.
      const close = closeParen(s, i + 2);
      expansion(s.slice(i + 2, close - 1));
      i = close;
    } else if (BREAK.has(c)) {
      endCommand();
      i++;
    } else {
      word = (word ?? '') + c;
      i++;
    }
  }
  endCommand();
  return { commands, inner };
}

/** Every simple command of a shell line, those inside substitutions included (to a depth of 4). */
export function simpleCommands(line: string, depth = 0): string[][] {
  const { commands, inner } = cut(line);
  if (depth >= 4) return commands;
  return [...commands, ...inner.flatMap((t) => simpleCommands(t, depth + 1))];
}
