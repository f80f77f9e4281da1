// A small reader of Seatbelt profiles (SBPL), stronger than counting
// parentheses: it parses every form and checks its action, operations and
// filters against the names Codex's and sandbox-runtime's profiles and
// Apple's documentation use. An unknown name is an error: Seatbelt refuses a
// profile with one, and a test renders ours through this instead of a Mac.

export type Node = { kind: 'list'; items: Node[] } | { kind: 'symbol'; name: string } | { kind: 'string'; value: string } | { kind: 'regex'; value: string } | { kind: 'number'; value: number };

export const OPERATIONS = new Set([
  'default', 'process-exec', 'process-fork', 'process-info*', 'process-info-pidinfo', 'signal', 'mach-priv-task-port', 'user-preference-read', 'user-preference-write',
  'mach-host*', 'sysctl-read', 'sysctl-write', 'mach-lookup', 'ipc-posix-sem', 'ipc-posix-shm', 'iokit-open', 'iokit-get-properties', 'system-socket', 'pseudo-tty',
  'file*', 'file-read*', 'file-read-data', 'file-read-metadata', 'file-write*', 'file-write-data', 'file-write-create', 'file-write-unlink', 'file-ioctl', 'file-link',
  'network*', 'network-outbound', 'network-inbound', 'network-bind', 'lsopen', 'appleevent-send', 'job-creation', 'distributed-notification-post',
]);

/** Filters, with the kind of argument each takes. */
export const FILTERS: Record<string, 'string' | 'regex' | 'symbol' | 'filters' | 'address' | 'socket' | 'string-or-regex'> = {
  literal: 'string', subpath: 'string', regex: 'regex', 'path-regex': 'regex', 'sysctl-name': 'string', 'sysctl-name-prefix': 'string', 'global-name': 'string',
  'global-name-prefix': 'string', 'iokit-registry-entry-class': 'string', 'iokit-user-client-class': 'string', 'socket-domain': 'symbol', 'socket-protocol': 'symbol',
  'vnode-type': 'symbol', target: 'symbol', extension: 'string', 'require-all': 'filters', 'require-any': 'filters', 'require-not': 'filters', remote: 'socket', local: 'socket',
};

export const SOCKET_DOMAINS = new Set(['AF_SYSTEM', 'AF_INET', 'AF_INET6', 'AF_UNIX']);

/** vnode-type's names, as Apple's and Firefox's profiles write them. */
export const VNODE_TYPES = new Set(['REGULAR-FILE', 'DIRECTORY', 'SYMLINK', 'FIFO', 'SOCKET', 'CHARACTER-DEVICE', 'BLOCK-DEVICE', 'TTY']);

export function parseSbpl(text: string): Node[] {
  let i = 0;
  const skip = () => {
    for (;;) {
      while (i < text.length && /\s/.test(text[i] as string)) i++;
      if (text[i] === ';') while (i < text.length && text[i] !== '\n') i++;
      else return;
    }
  };
  // A string's escapes are read; a regex literal #"…" is raw (a backslash stays, and keeps a quote from ending it).
  const str = (raw = false): string => {
    let out = '';
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === '\\') {
        if (raw) out += text[i];
        i++;
      }
      out += text[i++];
    }
    if (text[i] !== '"') throw new Error('a string is not closed');
    i++;
    return out;
  };
  const node = (): Node => {
    skip();
    const ch = text[i];
    if (ch === '(') {
      i++;
      const items: Node[] = [];
      for (;;) {
        skip();
        if (i >= text.length) throw new Error('a list is not closed');
        if (text[i] === ')') {
          i++;
          return { kind: 'list', items };
        }
        items.push(node());
      }
    }
    if (ch === '"') return { kind: 'string', value: str() };
    if (ch === '#' && text[i + 1] === '"') {
      i++;
      return { kind: 'regex', value: str(true) };
    }
    const m = /^[^\s()";]+/.exec(text.slice(i));
    if (!m) throw new Error(`unexpected ${JSON.stringify(ch)} at ${i}`);
    i += m[0].length;
    return /^\d+$/.test(m[0]) ? { kind: 'number', value: Number(m[0]) } : { kind: 'symbol', name: m[0] };
  };
  const out: Node[] = [];
  for (skip(); i < text.length; skip()) {
    const n = node();
    if (n.kind !== 'list') throw new Error('a top-level form is not a list');
    out.push(n);
  }
  return out;
}

export interface Rule {
  action: 'allow' | 'deny';
  operations: string[];
  filters: Node[];
}

function checkFilter(f: Node): void {
  if (f.kind !== 'list' || f.items[0]?.kind !== 'symbol') throw new Error(`a filter is not a named list: ${JSON.stringify(f)}`);
  const name = f.items[0].name;
  const args = f.items.slice(1);
  const want = FILTERS[name];
  if (want === undefined) throw new Error(`unknown filter ${name}`);
  if (want === 'filters') return args.forEach(checkFilter);
  if (want === 'socket') {
    // (remote ip "localhost:PORT"), (local unix-socket (path-regex …))
    const [kind, ...rest] = args;
    if (kind?.kind !== 'symbol') throw new Error(`${name} takes ip or unix-socket`);
    if (kind.name === 'ip') {
      const addr = rest[0];
      if (rest.length !== 1 || addr?.kind !== 'string' || !/^(localhost|\*):(\d+|\*)$/.test(addr.value)) throw new Error(`ip takes "localhost:PORT" or "*:PORT": ${JSON.stringify(addr)}`);
    } else if (kind.name === 'unix-socket') rest.forEach(checkFilter);
    else throw new Error(`unknown address kind ${kind.name}`);
    return;
  }
  if (args.length !== 1) throw new Error(`${name} takes one argument`);
  const a = args[0] as Node;
  if (want === 'symbol') {
    if (a.kind !== 'symbol' && a.kind !== 'number') throw new Error(`${name} takes a name`);
    if (name === 'socket-domain' && a.kind === 'symbol' && !SOCKET_DOMAINS.has(a.name)) throw new Error(`unknown socket domain ${a.name}`);
    if (name === 'target' && a.kind === 'symbol' && a.name !== 'same-sandbox') throw new Error(`unknown target ${a.name}`);
    if (name === 'vnode-type' && (a.kind !== 'symbol' || !VNODE_TYPES.has(a.name))) throw new Error(`unknown vnode type ${show(a)}`);
    return;
  }
  if (a.kind !== want) throw new Error(`${name} takes a ${want}`);
  if (want === 'regex' && a.kind === 'regex') new RegExp(a.value); // Seatbelt's regexes are a subset of these
}

/** The profile's rules after `(version 1)`; throws on anything Seatbelt would not know. */
export function readSbpl(text: string): Rule[] {
  const forms = parseSbpl(text);
  const first = forms[0];
  if (first?.kind !== 'list' || JSON.stringify(first.items) !== JSON.stringify([{ kind: 'symbol', name: 'version' }, { kind: 'number', value: 1 }])) throw new Error('the profile does not start with (version 1)');
  return forms.slice(1).map((f) => {
    if (f.kind !== 'list') throw new Error('not a list');
    const [head, ...rest] = f.items;
    if (head?.kind !== 'symbol' || (head.name !== 'allow' && head.name !== 'deny')) throw new Error(`unknown form ${JSON.stringify(head)}`);
    const operations: string[] = [];
    let k = 0;
    for (; k < rest.length && rest[k]?.kind === 'symbol'; k++) {
      const op = (rest[k] as { name: string }).name;
      if (!OPERATIONS.has(op)) throw new Error(`unknown operation ${op}`);
      operations.push(op);
    }
    if (operations.length === 0) throw new Error(`${head.name} names no operation`);
    const filters = rest.slice(k);
    filters.forEach(checkFilter);
    return { action: head.name, operations, filters };
  });
}

/** The text of a filter, as written, for assertions. */
export function show(n: Node): string {
  if (n.kind === 'list') return `(${n.items.map(show).join(' ')})`;
  if (n.kind === 'symbol') return n.name;
  if (n.kind === 'number') return String(n.value);
  if (n.kind === 'regex') return `#"${n.value}"`;
  return JSON.stringify(n.value);
}

/**
 * Seatbelt's decision for a file operation on a path: the last rule that names the operation (or its family) and
 * matches. `vnode` is the kind of file (vnode-type's name; a regular file unless said).
 */
export function decide(rules: Rule[], op: string, path: string, vnode = 'REGULAR-FILE'): 'allow' | 'deny' {
  const family = (o: string) => o === op || (o.endsWith('*') && op.startsWith(o.slice(0, -1))) || o === 'default';
  const matches = (f: Node): boolean => {
    if (f.kind !== 'list' || f.items[0]?.kind !== 'symbol') return false;
    const arg = f.items[1];
    const v = arg && (arg.kind === 'string' || arg.kind === 'regex') ? arg.value : '';
    switch (f.items[0].name) {
      case 'literal': return path === v;
      case 'subpath': return path === v || path.startsWith(v + '/');
      case 'regex': return new RegExp(v).test(path);
      case 'vnode-type': return arg?.kind === 'symbol' && arg.name === vnode;
      case 'require-all': return f.items.slice(1).every(matches);
      case 'require-any': return f.items.slice(1).some(matches);
      case 'require-not': return !f.items.slice(1).some(matches);
      default: return false;
    }
  };
  let out: 'allow' | 'deny' = 'deny';
  for (const r of rules) if (r.operations.some(family) && (r.filters.length === 0 || r.filters.some(matches))) out = r.action;
  return out;
}

