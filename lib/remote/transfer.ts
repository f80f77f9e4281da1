// What a remote run's repository travels as. Out: a bundle of your commits up
// to the run's base, made by your git. Back: the export container's output
// (templates/remote-run.ts exportCommand), which is the agent's to shape: its
// first line must be the branch's tip (an object id of the repository's
// format) or "none", the rest a git pack, bounded in size; the pack goes into
// the run's own git directory, where the import has git index it afresh and
// checks what it holds before anything reaches your repository
// (lib/git/import.ts).
import { closeSync, constants, openSync, rmSync, writeSync } from 'node:fs';
import type { Readable } from 'node:stream';

/** The first line, at most this long. */
const MAX_LINE = 80;
/** The pack, at most this large unless STASHBASE_REMOTE_MAX_PACK (bytes) says otherwise. */
export const MAX_PACK = 2 * 1024 ** 3;

export function maxPack(env: NodeJS.ProcessEnv): number {
  const v = Number(env.STASHBASE_REMOTE_MAX_PACK);
  return Number.isSafeInteger(v) && v > 0 ? v : MAX_PACK;
}

/** `stopped`: found while it was still sending (stashbase stopped reading it; whatever its exit then says is no news). */
export type ExportResult = { tip: null } | { tip: string; packBytes: number } | { problem: string; stopped?: true };

/**
 * Reads an export from `stream`: the tip's line, then the pack into `packFile`
 * (made here, never followed). Resolves with the tip and the pack's size, or
 * with what is wrong with it (nothing of a wrong one is kept).
 */
export function readExport(stream: Readable, o: { packFile: string; objectFormat: 'sha1' | 'sha256'; maxBytes: number }): Promise<ExportResult> {
  const oidLength = o.objectFormat === 'sha256' ? 64 : 40;
  return new Promise((resolve) => {
    let head = Buffer.alloc(0);
    let tip: string | null | undefined;
    let fd: number | null = null;
    let bytes = 0;
    let magic = Buffer.alloc(0);
    let done = false;
    const finish = (r: ExportResult) => {
      if (done) return;
      done = true;
      if (fd !== null) closeSync(fd);
      fd = null;
      if ('problem' in r) {
        stream.destroy();
        rmSync(o.packFile, { force: true });
      }
      resolve(r);
    };
    const body = (chunk: Buffer) => {
      if (tip === null) {
        if (chunk.length > 0) early('the export sent bytes after "none"');
        return;
      }
      bytes += chunk.length;
      if (bytes > o.maxBytes) return early(`the export's pack is larger than ${o.maxBytes} bytes (STASHBASE_REMOTE_MAX_PACK sets another limit)`);
      if (magic.length < 4) {
        magic = Buffer.concat([magic, chunk.subarray(0, 4 - magic.length)]);
        if (magic.length === 4 && magic.toString('latin1') !== 'PACK') return early('what follows the export\'s first line is not a git pack');
      }
      if (fd === null) fd = openSync(o.packFile, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
      writeSync(fd, chunk);
    };
    const early = (problem: string) => finish({ problem, stopped: true });
    stream.on('data', (chunk: Buffer) => {
      if (done) return;
      try {
        if (tip !== undefined) return body(chunk);
        head = Buffer.concat([head, chunk]);
        const nl = head.indexOf(0x0a);
        if (nl < 0) {
          if (head.length > MAX_LINE) early(`the export's first line is longer than ${MAX_LINE} bytes`);
          return;
        }
        const line = head.subarray(0, nl).toString('latin1');
        if (line === 'none') tip = null;
        else if (line.length === oidLength && /^[0-9a-f]+$/.test(line)) tip = line;
        else return early(`the export's first line is neither an object id nor "none": ${JSON.stringify(line.slice(0, MAX_LINE))}`);
        body(head.subarray(nl + 1));
      } catch (e) {
        early((e as Error).message);
      }
    });
    stream.on('error', (e) => finish({ problem: e.message }));
    // Destroyed (its time ran out, or its process was gone before it was read) without an end: settled all the same.
    stream.on('close', () => finish({ problem: 'the export\'s output closed before its end' }));
    stream.on('end', () => {
      if (tip === undefined) return finish({ problem: 'the export ended before its first line' });
      if (tip === null) return finish({ tip: null });
      if (bytes < 32) return finish({ problem: 'the export\'s pack is cut short' });
      finish({ tip, packBytes: bytes });
    });
  });
}
