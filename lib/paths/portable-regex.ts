// The regular expressions a profile's `re:` entries may use: the subset that
// both the Linux walk (JavaScript's RegExp) and Seatbelt's matcher implement
// alike. `\d` and `\w` are spelled out as classes (Seatbelt has neither);
// everything else outside the subset is refused when the profile loads, on
// every platform, so a profile never means one thing on Linux and another on
// a Mac.

const PUNCT = /[^A-Za-z0-9]/;

/** The pattern rewritten into the subset, or why it cannot be. */
export function portableRegex(src: string): { source: string } | { problem: string } {
  let out = '';
  let inClass = false;
  for (let i = 0; i < src.length; i++) {
    const ch = src[i] as string;
    const next = src[i + 1];
    if (ch === '\\') {
      if (next === undefined) return { problem: 'ends with a lone backslash' };
      // In a class, a backslash is an escape to JavaScript and itself to POSIX's regexes (Seatbelt's): only \d and \w, spelled out.
      if (inClass && next !== 'd' && next !== 'w') return { problem: `\\${next} inside a class is read differently by the Linux walk and by Seatbelt (write the character without a backslash, or outside the class)` };
      if (next === 'd') out += inClass ? '0-9' : '[0-9]';
      else if (next === 'w') out += inClass ? 'A-Za-z0-9_' : '[A-Za-z0-9_]';
      else if (PUNCT.test(next) && next.charCodeAt(0) < 128) out += ch + next;
      else return { problem: `\\${next} is not supported (use \\d, \\w, a class such as [a-z], or a backslash before punctuation)` };
      i++;
      continue;
    }
    if (inClass) {
      if (ch === '[' && next === ':') return { problem: 'POSIX classes such as [[:alpha:]] are not supported (write the letters as a range, [A-Za-z])' };
      if (ch === ']') inClass = false;
      out += ch;
      continue;
    }
    if (ch === '[') {
      inClass = true;
      out += ch;
      if (next === '^') out += src[++i];
      // JavaScript reads "[]" as an empty class, Seatbelt as a class holding "]": the two would disagree.
      if (src[i + 1] === ']') return { problem: 'a class that begins with "]" is read differently by the Linux walk and by Seatbelt (a "]" cannot be in a class)' };
      continue;
    }
    if (ch === '(' && next === '?') {
      if (src[i + 2] !== ':') return { problem: 'lookarounds, named groups and inline flags such as (?=…), (?<name>…) or (?i) are not supported (only plain groups and (?:…))' };
      out += '(?:';
      i += 2;
      continue;
    }
    if (ch === '{' || ch === '}') return { problem: 'counted repetition such as {2,3} is not supported (repeat the item, or use * and +; write a literal brace as \\{)' };
    if ((ch === '*' || ch === '+' || ch === '?') && next === '?') return { problem: `the lazy quantifier ${ch}? is not supported (only greedy *, + and ?)` };
    if (ch === '^' && i !== 0) return { problem: '^ is supported only at the start' };
    if (ch === '$' && i !== src.length - 1) return { problem: '$ is supported only at the end' };
    out += ch;
  }
  if (inClass) return { problem: 'a class [ is not closed' };
  try {
    new RegExp(out);
  } catch (e) {
    return { problem: `is not a valid regular expression: ${(e as Error).message}` };
  }
  return { source: out };
}
