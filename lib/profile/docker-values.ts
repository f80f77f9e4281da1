// What `docker run --memory` and `--cpus` accept, checked before Docker sees it.

const MEMORY = /^(\d+(?:\.\d+)?)([bkmgtp])?$/i;
const UNIT: Record<string, number> = { b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4, p: 1024 ** 5 };
/** Docker refuses limits below 6 MiB ("Minimum memory limit allowed is 6MB"). */
const MIN_MEMORY = 6 * 1024 ** 2;

export function memoryProblem(value: string): string | null {
  const m = MEMORY.exec(value);
  if (!m) {
    const guess = /^(\d+(?:\.\d+)?)\s*([kmgtp])i?b?$/i.exec(value.trim());
    const hint = guess ? `try "${guess[1]}${(guess[2] as string).toLowerCase()}"` : 'a number with an optional unit b, k, m or g, such as "2g"';
    return `${JSON.stringify(value)} is not a docker memory size (${hint})`;
  }
  const bytes = Number(m[1]) * (UNIT[(m[2] ?? 'b').toLowerCase()] as number);
  if (bytes < MIN_MEMORY) return `${JSON.stringify(value)} is below Docker's minimum memory limit of 6m`;
  return null;
}

/** A run that leaves the agents' home volume larger than this is said (profile key home_volume_warn). */
export const DEFAULT_HOME_VOLUME_WARN = '1g';

/** A size as docker writes one ("512m", "1g", "0"), in bytes; null when it is not one. */
export function sizeBytes(value: string): number | null {
  const m = MEMORY.exec(value);
  return m ? Math.round(Number(m[1]) * (UNIT[(m[2] ?? 'b').toLowerCase()] as number)) : null;
}

export function cpusProblem(value: string, hostCpus: number): string | null {
  if (!/^\d+(\.\d+)?$/.test(value) && !/^\.\d+$/.test(value)) {
    return `${JSON.stringify(value)} is not a docker cpus value (a decimal number of CPUs, such as "1.5")`;
  }
  const n = Number(value);
  // Docker counts in NanoCPUs: the smallest step it takes is 0.01.
  if (n < 0.01) return `${JSON.stringify(value)} is below Docker's minimum of 0.01 CPUs`;
  if (n > hostCpus) return `${JSON.stringify(value)} is more than the ${hostCpus} CPUs this machine has`;
  return null;
}

/** An isolated path gets a volume mounted over it: a folder strictly inside the working directory. */
export function isolatedPathProblem(value: string): string | null {
  const parts = value.split('/').filter((p) => p !== '');
  if (value.startsWith('/') || value.startsWith('~') || parts.includes('..') || parts.every((p) => p === '.') || /[\0\n\r]/.test(value)) {
    return `${JSON.stringify(value)} must be a folder inside the working directory (relative, without "..")`;
  }
  return null;
}
