// Colour for notices on stderr, only where stderr is a terminal (picocolors also
// honours NO_COLOR and FORCE_COLOR). Loaded on first use: most runs print none.
import { createRequire } from 'node:module';
import { shellQuote } from '../../templates/shell-quote.js';

type Colors = typeof import('picocolors');
let pc: ReturnType<Colors['createColors']> | undefined;
const colors = () => (pc ??= (createRequire(import.meta.url)('picocolors') as Colors).createColors(process.stderr.isTTY === true && !process.env.NO_COLOR));

export const warningLabel = () => colors().yellow('warning:');
export const errorLabel = () => colors().red('stashbase:');

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
  const unsafe = oneLine ? /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\n(?! {2})/g : /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
  return text.replace(unsafe, (c) => {
    const n = c.codePointAt(0) as number;
    return n <= 0xff ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u{${n.toString(16)}}`;
  });
}

/** A warning said even with --silent: a change stashbase made to your files, or a check it could not make. */
export function alert(msg: string): void {
  process.stderr.write(`${warningLabel()} ${printable(msg, true)}\n`);
}

/**
 * How to undo a rename stashbase made: a command to paste, shell-quoted, when
 * the names print as they are; when they hold characters shown escaped, the
 * printed command would name other paths (ones the agent could have made), so
 * none is printed.
 */
export function restoreHint(from: string, to: string): string {
  const cmd = `mv ${shellQuote(from)} ${shellQuote(to)}`;
  return printable(cmd, true) === cmd && !cmd.includes('\n') ? `restore it with: ${cmd}` : 'restore it by renaming it back yourself (its name holds characters shown escaped here: no command is printed to paste)';
}
