// Yes/no questions in a terminal. Callers decide whether a terminal is there;
// without one, nothing is ever assumed to be "yes".
import { StashbaseError } from '../errors.js';

export function isInteractive(silent: boolean): boolean {
  return !silent && process.stdin.isTTY === true && process.stderr.isTTY === true;
}

export async function confirm(question: string): Promise<boolean> {
  const { createInterface } = await import('node:readline');
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  return new Promise((resolve) => {
    let answered = false;
    rl.question(`${question} [y/N] `, (answer) => {
      answered = true;
      rl.close();
      resolve(/^y(es)?$/i.test(answer.trim()));
    });
    rl.on('close', () => {
      if (!answered) resolve(false);
    });
  });
}

/** A destructive step's go-ahead: --yes, or a "yes" typed in a terminal; without a terminal, refused (nothing is assumed). */
export async function approve(question: string, o: { yes: boolean; refusal: string }): Promise<boolean> {
  if (o.yes) return true;
  if (!isInteractive(false)) throw new StashbaseError(o.refusal, 1);
  return confirm(question);
}
