// Colour for notices on stderr, only where stderr is a terminal (picocolors also
// honours NO_COLOR and FORCE_COLOR). Loaded on first use: most runs print none.
import { createRequire } from 'node:module';

type Colors = typeof import('picocolors');
let pc: ReturnType<Colors['createColors']> | undefined;
const colors = () => (pc ??= (createRequire(import.meta.url)('picocolors') as Colors).createColors(process.stderr.isTTY === true && !process.env.NO_COLOR));

export const warningLabel = () => colors().yellow('warning:');
export const errorLabel = () => colors().red('stashbase:');

/** A warning said even with --silent: a change stashbase made to your files, or a check it could not make. */
export function alert(msg: string): void {
  process.stderr.write(`${warningLabel()} ${msg}\n`);
}
