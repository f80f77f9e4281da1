// Descriptors stashbase inherited from its caller. Node and libuv open every
// descriptor of their own close-on-exec, so any descriptor above 2 without
// that flag came from whoever started stashbase (a shell's `200</`, a
// launcher's leaked pipe) and would pass through exec into the sandbox, with
// whatever it points to: `/proc/self/fd/200/home/me/.ssh` reads past every
// mount. They are closed before anything is spawned.
import { closeSync, readdirSync, readFileSync } from 'node:fs';

const O_CLOEXEC = 0o2000000;

/** The descriptor numbers above 2 that an exec would pass on (Linux: /proc/self/fdinfo). */
export function inheritedDescriptors(env: NodeJS.ProcessEnv = process.env): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    return []; // not Linux, or no /proc: nothing to read the flags from
  }
  // Node's own IPC channel with a parent that forked it: in use, and meant for us.
  const channel = env.NODE_CHANNEL_FD === undefined ? -1 : Number(env.NODE_CHANNEL_FD);
  const out: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!(fd > 2) || fd === channel) continue;
    let info: string;
    try {
      info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
    } catch {
      continue; // the directory's own descriptor, gone already
    }
    const flags = /^flags:\s*([0-7]+)/m.exec(info);
    if (flags && (parseInt(flags[1] as string, 8) & O_CLOEXEC) === 0) out.push(fd);
  }
  return out.sort((a, b) => a - b);
}

/** Closes what inheritedDescriptors finds; returns the numbers closed. */
export function closeInheritedDescriptors(env: NodeJS.ProcessEnv = process.env): number[] {
  const fds = inheritedDescriptors(env);
  for (const fd of fds) {
    try {
      closeSync(fd);
    } catch {
      // closed meanwhile
    }
  }
  return fds;
}
