// Agent-chosen text (names of files it made, commit subjects, packages)
// shown on your terminal: what must never reach it raw, and how it is shown.

/**
 * Control characters but tab and newline (escape sequences that clear,
 * recolour or retitle your terminal, a carriage return that overwrites the
 * line), and the bidirectional marks and overrides that reorder text.
 */
export const UNPRINTABLE = '\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';
const UNSAFE = new RegExp(`[${UNPRINTABLE}]`, 'g');
const ONE_LINE = new RegExp(`[${UNPRINTABLE}]|\\n(?! {2})`, 'g');

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

