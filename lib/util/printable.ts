// Agent-chosen text (names of files it made, commit subjects, packages)
// shown on your terminal: what must never reach it raw, and how it is shown.

/**
 * Control characters but tab and newline (escape sequences that clear,
 * recolour or retitle your terminal, a carriage return that overwrites the
 * line), the bidirectional marks and overrides that reorder text, and the
 * characters that show as nothing (zero-width spaces and joiners, the word
 * joiner and invisible operators, the soft hyphen, the byte-order mark, tag
 * characters): a branch `ma\u200bin` must not read as `main`.
 */
export const UNPRINTABLE = '\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff0-\\ufffb\\u{e0000}-\\u{e0fff}';
const UNSAFE = new RegExp(`[${UNPRINTABLE}]`, 'gu');
const ONE_LINE = new RegExp(`[${UNPRINTABLE}]|\\n(?! {2})`, 'gu');

/** A character as \\xNN (one byte's worth) or \\u{NNNN}. */
export function escaped(c: string): string {
  const n = c.codePointAt(0) as number;
  return n <= 0xff ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u{${n.toString(16)}}`;
}

/**
 * What a notice may show of names the agent chose (a folder it made, a file it
 * planted): control characters (escape sequences that clear, recolour or
 * retitle your terminal, a carriage return that overwrites the line) and the
 * bidirectional overrides that reorder text are shown as \xNN / \u{NNNN}.
 * Tabs stay; newlines too, unless `oneLine` (a warning is one line, with at
 * most indented continuation lines: a name holding a newline must not start
 * a line of its own that looks like ours).
 */
export function printable(text: string, oneLine = false): string {
  // In one line, only a newline that starts an indented continuation ("\n  ", as a list of commits is shown) stays.
  return text.replace(oneLine ? ONE_LINE : UNSAFE, escaped);
}

