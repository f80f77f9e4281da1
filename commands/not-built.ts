// Commands whose behaviour later work fills in: they parse their flags (so
// --help and bad flags behave) and then say plainly that they do nothing yet.
import { type FlagSpec, parseCommand } from '../lib/argv.js';
import { StashbaseError } from '../lib/errors.js';

export interface Stub {
  name: string;
  usage: string;
  summary: string;
  flags: FlagSpec[];
}

export function stubMain(stub: Stub): (argv: string[]) => Promise<number> {
  return async (argv) => {
    if (parseCommand(argv, { ...stub, notes: 'Not built yet in this version.' }) === null) return 0;
    throw new StashbaseError(`stashbase ${stub.name} is not built yet in this version; nothing was done`, 1);
  };
}
