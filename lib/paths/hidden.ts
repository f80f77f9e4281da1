// What a process stashbase runs on the agent's behalf over the working tree
// (a local MCP server, the host's secret scan and dependency check) may not see
// of it: what the agent's own sandbox hides there (deny_read, as the run
// planned it when it started) and the isolated paths a Docker agent sees as
// volumes (the host's copy is never the agent's). Folders hidden by an empty
// tmpfs, files by /dev/null (templates/confine.ts `hidden`).
import { lstatSync } from 'node:fs';
import type { Protection } from './protect.js';

export interface Hidden {
  path: string;
  dir: boolean;
}

const inside = (p: string, dir: string) => p === dir || p.startsWith(dir === '/' ? '/' : dir + '/');

/**
 * The hidden paths that lie inside one of `roots` (what the process is shown)
 * and exist now: one missing would need its mount point made, in a folder bound
 * from the host.
 */
export function hiddenWithin(protection: Pick<Protection, 'denyRead'>, isolated: string[], roots: string[]): Hidden[] {
  const all = [...protection.denyRead.map((d) => ({ path: d.path, dir: d.kind === 'dir' })), ...isolated.map((x) => ({ path: x, dir: true }))];
  return all.filter((h) => roots.some((r) => inside(h.path, r)) && lstatSync(h.path, { throwIfNoEntry: false }) !== undefined);
}
