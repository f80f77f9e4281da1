// Colour for notices on stderr, only where stderr is a terminal (picocolors also
// honours NO_COLOR and FORCE_COLOR). Bundled into the CLI, as every package it
// uses (scripts/bundle.mjs): nothing is loaded from a folder an agent may write.
import picocolors from 'picocolors';
import { shellQuote } from '../../templates/shell-quote.js';
import { printable } from './printable.js';

export { printable } from './printable.js';

let pc: ReturnType<typeof picocolors.createColors> | undefined;
const colors = () => (pc ??= picocolors.createColors(process.stderr.isTTY === true && !process.env.NO_COLOR));

export const warningLabel = () => colors().yellow('warning:');
export const errorLabel = () => colors().red('stashbase:');

/** A warning said even with --silent: a change stashbase made to your files, or a check it could not make. */
export function alert(msg: string, more: string[] = []): void {
  process.stderr.write(`${warningLabel()} ${printable(msg, true)}\n${more.map((l) => `${printable(l, true)}\n`).join('')}`);
}

/** Whether a command prints as it is, on one line (no character shown escaped, a newline included): fit to paste. */
const pasteable = (cmd: string) => printable(cmd, true) === cmd;

/** A note (not said with --silent), its continuation lines after it; each line escaped. */
export function noteLines(msg: string, more: string[] = []): void {
  process.stderr.write([msg, ...more].map((l) => `${printable(l, true)}\n`).join(''));
}

/**
 * How to undo a rename stashbase made: a command to paste, shell-quoted, when
 * the names print as they are; when they hold characters shown escaped, the
 * printed command would name other paths (ones the agent could have made), so
 * none is printed.
 */
export function restoreHint(from: string, to: string, ...more: Array<[string, string]>): string {
  // Several renames, in order, as one line to paste (the first failing stops the rest).
  const cmd = ([[from, to], ...more] as Array<[string, string]>).map(([f, t]) => `mv ${shellQuote(f)} ${shellQuote(t)}`).join(' && ');
  return pasteable(cmd) ? `restore it with: ${cmd}` : 'restore it by renaming it back yourself (its name holds characters shown escaped here: no command is printed to paste)';
}

/**
 * How to make again a link stashbase removed: `ln -s -- <target> <link>`, the
 * target the agent's (`--` before it: a target spelled as an option, such as
 * `--target-directory=…`, made the pasted command plant a link elsewhere, found
 * in review); none printed where a name holds characters shown escaped.
 */
export function remakeHint(target: string, link: string): string {
  const cmd = `ln -s -- ${shellQuote(target)} ${shellQuote(link)}`;
  return pasteable(cmd) ? `make it again with: ${cmd}` : 'make it again yourself (its target holds characters shown escaped here: no command is printed to paste)';
}
