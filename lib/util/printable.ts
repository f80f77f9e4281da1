// Agent-chosen text (names of files it made, commit subjects, packages)
// shown on your terminal: what must never reach it raw, and how it is shown.

/**
 * Control characters but tab and newline (escape sequences that clear,
 * recolour or retitle your terminal, a carriage return that overwrites the
 * line), the bidirectional marks and overrides that reorder text, and the
 * characters that show as nothing (zero-width spaces and joiners, the word
 * joiner and invisible operators, the soft hyphen, the byte-order mark, tag
 * characters): a branch `ma\u200bin` must not read as `main`. And by
 * their classes, so that none is missed (review, round 29: U+1D173, U+2028
 * and kin passed): every format character, line and paragraph separator,
 * private-use character, lone surrogate and character Unicode says to show
 * as nothing.
 */
export const UNPRINTABLE = '\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff0-\\ufffb\\u{e0000}-\\u{e0fff}\\p{Cf}\\p{Zl}\\p{Zp}\\p{Co}\\p{Cs}\\p{Default_Ignorable_Code_Point}';
const UNSAFE = new RegExp(`[${UNPRINTABLE}]`, 'gu');
const ONE_LINE = new RegExp(`[${UNPRINTABLE}\\n]`, 'gu');

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
 * Tabs stay; newlines too, unless `oneLine`: a warning is one line (a name
 * holding a newline must not start a line of its own that looks like ours;
 * a newline followed by two spaces used to stay, for the continuation lines
 * of a list, and let a name forge an indented line: found in review, round
 * 29). Lines of stashbase's own are passed as lines (lib/util/style.ts).
 */
export function printable(text: string, oneLine = false): string {
  return text.replace(oneLine ? ONE_LINE : UNSAFE, escaped);
}


/**
 * JSON for a terminal or a pipe: every character past ASCII's printable ones
 * written as its \u escape (found in review, round 29: `agent audit --json`
 * wrote the agent's C1 controls and bidirectional overrides raw). The same
 * value for any JSON reader.
 */
export function asciiJson(value: unknown): string {
  return (JSON.stringify(value, null, 2) ?? 'null').replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * The first `n` of a list the agent could make long, and how many more: a note
 * names a few, never all (found in review, round 33: a `.claude.json` holding
 * four million folders' entries printed one warning line of 154 MB).
 */
export function firstFew(list: readonly string[], n: number, sep = ', '): string {
  return `${list.slice(0, n).join(sep)}${list.length > n ? ` and ${list.length - n} more` : ''}`;
}
