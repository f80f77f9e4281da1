// A tar archive (POSIX ustar) of a few regular files, written by stashbase for
// a remote run's setup container (templates/remote-run.ts): names are plain
// (no folder, no link), every file is root's, modes as given.
const BLOCK = 512;

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

export interface TarFile {
  name: string;
  data: Buffer;
  mode: number;
}

function header(f: TarFile): Buffer {
  if (!/^[A-Za-z0-9._-]{1,99}$/.test(f.name)) throw new Error(`not a plain file name for the archive: ${JSON.stringify(f.name)}`);
  // 11 octal digits: under 8 GiB.
  if (f.data.length >= 8 ** 11) throw new Error(`${f.name} is too large for the archive`);
  const h = Buffer.alloc(BLOCK);
  h.write(f.name, 0, 'utf8');
  h.write(octal(f.mode & 0o7777, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(f.data.length, 12), 124, 'ascii');
  h.write(octal(0, 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write('0', 156, 'ascii');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(octal(sum, 7) + ' ', 148, 'ascii');
  return h;
}

/** The whole archive: each file's header, its data padded to a block, then two empty blocks. */
export function tarOf(files: TarFile[]): Buffer[] {
  const out: Buffer[] = [];
  for (const f of files) {
    out.push(header(f), f.data);
    const pad = (BLOCK - (f.data.length % BLOCK)) % BLOCK;
    if (pad > 0) out.push(Buffer.alloc(pad));
  }
  out.push(Buffer.alloc(BLOCK * 2));
  return out;
}
