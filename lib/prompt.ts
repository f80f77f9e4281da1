// Yes/no questions in a terminal. Callers decide whether a terminal is there;
// without one, nothing is ever assumed to be "yes".

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
