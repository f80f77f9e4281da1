// Commands whose behaviour later work fills in: they parse their flags (so
// --help and bad flags behave) and then say plainly that they do nothing yet.
import { type FlagSpec, formatHelp, parseArgv } from '../lib/argv.js';
import { StashbaseError } from '../lib/errors.js';

export interface Stub {
  name: string;
  usage: string;
  summary: string;
  flags: FlagSpec[];
}

export function stubMain(stub: Stub): (argv: string[]) => Promise<number> {
  return async (argv) => {
    const p = parseArgv(argv, stub.flags, `stashbase ${stub.name}`);
    if (p.help) {
      process.stdout.write(formatHelp(stub.usage, stub.summary, stub.flags, 'Not built yet in this version.'));
      return 0;
    }
    throw new StashbaseError(`stashbase ${stub.name} is not built yet in this version; nothing was done`, 1);
  };
}
