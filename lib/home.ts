// Where stashbase keeps its state: $STASHBASE_HOME, default ~/.stashbase.
import { userInfo } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { STASHBASE_HOME_VAR } from './env-names.js';
import { ConfigError } from './errors.js';

/**
 * The user's home: $HOME when it is an absolute path, else the account's home
 * from the password database. Every `~` rule is resolved against it, so an
 * empty or relative one (which would turn `~/.ssh` into a path under the
 * working directory) is never used.
 */
export function userHome(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HOME && isAbsolute(env.HOME)) return resolve(env.HOME);
  let fromPasswd = '';
  try {
    fromPasswd = userInfo().homedir;
  } catch {
    // no entry for this uid
  }
  if (isAbsolute(fromPasswd)) return resolve(fromPasswd);
  throw new ConfigError(`cannot tell your home directory: HOME is ${env.HOME === undefined ? 'not set' : `"${env.HOME}"`} and the account has none; set HOME to an absolute path`);
}

export function stashbaseHome(env: NodeJS.ProcessEnv = process.env): string {
  const set = env[STASHBASE_HOME_VAR];
  return set && set !== '' ? resolve(set) : join(userHome(env), '.stashbase');
}

export const homePaths = (home: string) => ({
  agents: join(home, 'agents'),
  sessions: join(home, 'sessions'),
  runs: join(home, 'runs'),
  /** What stashbase kept aside for you to look at: a run's git work whose import was stopped. */
  kept: join(home, 'kept'),
  audit: join(home, 'audit'),
  trust: join(home, 'trust.json'),
});
