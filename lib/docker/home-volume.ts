// The agents' home volume (shared by every Docker run): its size, measured
// after each run and by `agent docker status`, and a warning when a run grows
// it past the profile's home_volume_warn. The last size is kept in
// $STASHBASE_HOME/docker/home-volume.json, written by stashbase only.
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { volumeMeasureCommand, volumeSizeCommand } from '../../templates/docker-volumes.js';
import { measureSeccompProfile } from '../../templates/docker-seccomp.js';
import { capture, start } from '../exec.js';
import { isJsonObject, parseJson } from '../readback/json.js';
import { readBackText } from '../readback/file.js';
import { printable } from '../util/printable.js';

/** Past this, du is stopped and the size is unknown (an agent's millions of files). */
const MEASURE_TIMEOUT_MS = 60_000;

type Size = { bytes: number } | { why: string };

function parseDu(out: string): Size {
  const m = /^(\d+)\s/.exec(out);
  return m ? { bytes: Number(m[1]) * 1024 } : { why: `du printed ${printable(JSON.stringify(out.slice(0, 80)), true)}` };
}

/**
 * The measuring container's seccomp profile (templates/docker-seccomp.ts), in
 * stashbase's own folder (no sandbox reaches it), written afresh by each
 * measurement: the docker CLI reads it as it starts, before a run's folder exists.
 */
export const measureSeccompPath = (stashbaseHome: string) => join(stashbaseHome, 'docker', 'measure-seccomp.json');

export function measureSeccompFile(stashbaseHome: string): string {
  const file = measureSeccompPath(stashbaseHome);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(measureSeccompProfile()), { mode: 0o600 });
  renameSync(tmp, file);
  return file;
}

/** The volume's size in bytes, or why it is unknown. */
export async function measureVolume(docker: string, image: string, volume: string, name: string, labels: string[], stashbaseHome: string): Promise<{ bytes: number } | { why: string }> {
  try {
    const out = await capture(volumeSizeCommand(docker, image, volume, name, labels, measureSeccompFile(stashbaseHome)), undefined, MEASURE_TIMEOUT_MS);
    return parseDu(out);
  } catch (e) {
    await capture({ file: docker, args: ['rm', '--force', name] }).catch(() => undefined);
    return { why: (e as Error).message.split('\n')[0] ?? 'failed' };
  }
}

export interface HeldMeasure {
  /** Measures now (the run's agent container is gone) and resolves with the size, or why it is unknown. */
  measure(): Promise<Size>;
  /** Has du start now (the agent's container is gone: nothing more writes the volume); measure() reads its line. */
  begin(): void;
  /** Ends it unmeasured. */
  cancel(): void;
}

/**
 * A measurement started with the run (templates/docker-volumes.ts
 * volumeMeasureCommand), in a session of its own so that the terminal's
 * Ctrl+C, meant for the agent, does not end it. Its first line is read
 * (bounded), and its docker CLI waited for (bounded): --rm has it wait
 * until the engine removed the container.
 */
export function holdMeasure(docker: string, image: string, volume: string, name: string, labels: string[], stashbaseHome: string): HeldMeasure {
  const s = start(volumeMeasureCommand(docker, image, volume, name, labels, measureSeccompFile(stashbaseHome)), ['pipe', 'pipe', 'pipe'], true);
  s.exit.catch(() => 0);
  s.child.stdin?.on('error', () => {});
  let out = '';
  let err = '';
  const line = new Promise<Size>((resolve) => {
    s.child.stdout?.on('data', (b: Buffer) => {
      out = (out + b.toString('utf8')).slice(0, 4096);
      if (out.includes('\n')) resolve(parseDu(out));
    });
    s.child.stderr?.on('data', (b: Buffer) => {
      err = (err + b.toString('utf8')).slice(-4096);
    });
    s.child.on('close', (code) => resolve(out.includes('\n') ? parseDu(out) : { why: err.trim().split('\n').pop() || `its container ended (${code})` }));
    s.child.on('error', (e) => resolve({ why: e.message }));
  });
  const release = () => {
    s.child.stdout?.destroy();
    s.child.stderr?.destroy();
    s.child.unref();
  };
  let begun = false;
  const begin = () => {
    if (begun) return;
    begun = true;
    s.child.stdin?.end('\n');
  };
  return {
    begin,
    async measure() {
      begin();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<Size>((resolve) => {
        timer = setTimeout(() => resolve({ why: `du did not finish in ${MEASURE_TIMEOUT_MS / 1000} s` }), MEASURE_TIMEOUT_MS);
      });
      const size = await Promise.race([line, late]);
      clearTimeout(timer);
      if ('why' in size) await capture({ file: docker, args: ['rm', '--force', name] }).catch(() => undefined);
      // A run leaves nothing in Docker: its container is gone (--rm, which its client waits for) before the run ends.
      await Promise.race([s.exit.catch(() => 0), new Promise((r) => setTimeout(r, 10_000).unref())]);
      release();
      return size;
    },
    cancel() {
      begun = true;
      s.child.stdin?.end();
      release();
    },
  };
}

export function recordFile(stashbaseHome: string): string {
  return join(stashbaseHome, 'docker', 'home-volume.json');
}

/** The size recorded after the last run, or null. */
export function lastSize(stashbaseHome: string): number | null {
  const text = readBackText(recordFile(stashbaseHome), 4096);
  if (text === null) return null;
  const v = parseJson(text)?.value;
  if (!isJsonObject(v)) return null;
  const bytes = v.bytes;
  return typeof bytes === 'number' && Number.isSafeInteger(bytes) && bytes >= 0 ? bytes : null;
}

export function recordSize(stashbaseHome: string, bytes: number): void {
  const file = recordFile(stashbaseHome);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify({ bytes, at: new Date().toISOString() }) + '\n', { mode: 0o600 });
  renameSync(tmp, file);
}

/** Drops the size kept (the volume is not measured after runs: home_volume_warn = "0"). */
export function forgetSize(stashbaseHome: string): void {
  rmSync(recordFile(stashbaseHome), { force: true });
}

export function humanSize(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = bytes;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return i === 0 ? `${bytes} B` : `${v.toFixed(1)} ${units[i]}`;
}

/** The warning for a run that left the volume above `threshold` bytes and larger than before (0: never). */
export function growthWarning(volume: string, before: number | null, after: number, threshold: number, setting: string): string | null {
  if (threshold === 0 || after <= threshold || (before !== null && after <= before)) return null;
  const was = before === null ? '' : `, ${humanSize(after - before)} more than after the last run`;
  return `the agents' home volume ${volume} now holds ${humanSize(after)}${was}, past home_volume_warn = "${setting}": look with stashbase agent docker shell (du -sh ~/.[!.]* ~/*), or start it afresh with docker volume rm ${volume}`;
}
