// Where stashbase keeps its state: $STASHBASE_HOME, default ~/.stashbase.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { STASHBASE_HOME_VAR } from './env-names.js';

export function userHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.HOME && env.HOME !== '' ? env.HOME : homedir();
}

export function stashbaseHome(env: NodeJS.ProcessEnv = process.env): string {
  const set = env[STASHBASE_HOME_VAR];
  return set && set !== '' ? resolve(set) : join(userHome(env), '.stashbase');
}

export const homePaths = (home: string) => ({
  agents: join(home, 'agents'),
  ca: join(home, 'ca'),
  sessions: join(home, 'sessions'),
  audit: join(home, 'audit'),
  trust: join(home, 'trust.json'),
});
