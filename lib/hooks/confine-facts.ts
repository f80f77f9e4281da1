// What a confined host command needs to know of this machine before its
// argument list is built (templates/confine.ts stays pure): which system
// folders exist and which of them are symlinks, and which /etc files exist.
import { lstatSync, readlinkSync } from 'node:fs';
import { CONFINE_ETC, CONFINE_SYSTEM, type SystemPath } from '../../templates/confine.js';

export function systemPaths(): SystemPath[] {
  const out: SystemPath[] = [];
  for (const p of CONFINE_SYSTEM) {
    const st = lstatSync(p, { throwIfNoEntry: false });
    if (st?.isSymbolicLink()) out.push({ path: p, symlink: readlinkSync(p) });
    else if (st?.isDirectory()) out.push({ path: p });
  }
  return out;
}

export function existingEtc(): string[] {
  return CONFINE_ETC.filter((p) => lstatSync(p, { throwIfNoEntry: false }) !== undefined);
}
