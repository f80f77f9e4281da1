// A local (stdio) MCP server the profile names by `command`: stashbase runs it
// for the run on the host, outside the agent's sandbox, confined the way the
// secret scan is (templates/confine.ts: the system's programs and libraries,
// node's installation, what `read` names and, if `workdir` says so, the
// working tree; a private /tmp as its home; no network, no other process),
// with its secrets as real values in its own environment. The agent never
// holds its stdio: the proxy serves it as an MCP endpoint at
// https://NAME.stashbase-mcp.internal/mcp, through the same tool policy and
// audit as a remote server (lib/proxy/intercept.ts), and this bridge speaks
// newline-delimited JSON-RPC with the server.
//
// What comes back from the server is parsed, bounded and matched to what was
// asked: request ids are the bridge's own (the agent's are put back on the
// answers), a line over 16 MiB or not JSON is dropped, the server's own
// requests (roots, sampling, elicitation) are answered "not available", and
// an answer that does not come within two minutes is an error.
import type { ChildProcess } from 'node:child_process';
import { closeSync, lstatSync, openSync } from 'node:fs';
import { join, posix } from 'node:path';
import type { Writable } from 'node:stream';
import { findRepoRoot } from '../git/repo.js';
import type { Protection } from '../paths/protect.js';
import { realPathOf } from '../util/real-path.js';
import { canonicalPath } from '../native/seatbelt-rules.js';
import type { Command } from '../../templates/command.js';
import { buildConfineCommand, type ConfineBind } from '../../templates/confine.js';
import { MCP_RELAY_SCRIPT, SERVER_PROXY_SOCKET } from '../../templates/mcp-relay.js';
import { start } from '../exec.js';
import { existingEtc, systemPaths } from '../hooks/confine-facts.js';
import { thisCli } from '../hooks/cli-files.js';
import { expandHome } from '../paths/rules.js';
import type { LocalMcpConfig } from '../profile/types.js';
import { isJsonObject, parseJson } from '../readback/json.js';
import { readSource, valueProblem } from '../secrets/sources.js';
import { findTool, trustedPath } from '../util/find-tool.js';
import { filterJson } from './answer-filter.js';
import type { ToolPolicy } from './tool-policy.js';
import { inexactNumber } from './jsonrpc.js';

const MAX_LINE = 16 << 20;
const MAX_PENDING = 256;
export const ANSWER_TIMEOUT_MS = 120_000;

/** The server's confined command, its secrets read now (after trust); a string says why it cannot run. */
/** The loopback port the server's sandbox relays to its proxy (its own network namespace: no other listener). */
export const SERVER_PROXY_PORT = 18081;

export interface LocalServerInput {
  env: NodeJS.ProcessEnv;
  home: string;
  cwd: string;
  platform?: NodeJS.Platform;
  proxy?: { socket: string; token: string };
  /** What the agent's sandbox hides (the profile's deny_read, and what no profile opens): no `read` path shows any of it. */
  denied?: string[];
  writable?: string[];
  /**
   * For `workdir = "write"`: what the agent's sandbox protects, as the run's
   * backend planned it (its deny_write with the git config targets, tool
   * configs and build inputs it adds, the stand-ins it made, the folders it
   * pins, its read denials), and the paths it shows the agent as something
   * else (a Docker run's isolated paths).
   */
  tree?: { protection: Pick<Protection, 'denyRead' | 'denyWrite' | 'placeholders' | 'fileStandIns' | 'pinned'>; isolated: string[] };
  /** The seccomp filter's file (the agent's, with Unix sockets: the server's relay uses one), bound as descriptor 3. */
  seccompFile?: string;
  /** The run's writes are a deny-list: the agent could change the server's program and files before it starts. */
  denyListWrites?: boolean;
  /** Told each secret the server's environment gets (its `source` entries), by variable, as it is read. */
  onSecret?: (variable: string, value: string) => void;
  /**
   * Its secrets read already (readServerSecrets), by variable: a server planned once the agent runs (workdir = "write")
   * must not read them then (review, round 36: a secret's command that asks on your terminal, run while the agent held
   * it with tostop set, stopped stashbase's whole process group mid-run).
   */
  secrets?: Record<string, string>;
}

/** A local server's secrets (its env's `source` entries), read now, by variable. */
export function readServerSecrets(cfg: LocalMcpConfig, o: Pick<LocalServerInput, 'env' | 'home' | 'cwd'>): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  for (const [k, v] of Object.entries(cfg.env)) {
    if (!('value' in v)) out[k] = readSource({ source: v.source, from: v.from, hosts: [], inQuery: false, allowPlaintext: false }, o.env, o.home, o.cwd);
  }
  return out;
}

/**
 * Why a `read` path would show a server what the agent's sandbox hides (`o.denied`), or null. Judged by real path both
 * ways (found in review: the profile's check compared the text, and an absolute spelling of ~/.ssh, or a link to
 * ~/.config/gh, had the server read the agent the key and the token): a server reads for the agent whatever it asks.
 */
export function hiddenReadPath(read: string[], o: Pick<LocalServerInput, 'home' | 'cwd' | 'denied'>): string | null {
  const hiddenReal = [...new Set((o.denied ?? []).map((d) => canonicalPath(d, realPathOf)))];
  for (const r of read) {
    const p = realPathOf(expandHome(r, o.home, o.cwd));
    if (p === null) continue;
    const shown = hiddenReal.find((d) => d === p || d.startsWith(p === '/' ? '/' : `${p}/`) || p.startsWith(`${d}/`));
    if (shown !== undefined) return `read: ${JSON.stringify(r)} (${p}) would show the server ${shown}, which the agent's sandbox hides, and the server reads for the agent what it asks (lift it with allow_read, for the agent too, if the server must read it)`;
  }
  return null;
}

export function localServerCommand(cfg: LocalMcpConfig, o: LocalServerInput): ServerCommand | string {
  if ((o.platform ?? process.platform) !== 'linux') return 'local MCP servers run only on Linux for now (bubblewrap confines them); list a remote server by its url';
  // Found in review: under a deny-list the agent writes nearly everything, the server's program and its read paths among them.
  if (o.denyListWrites) return 'a local MCP server holds its secrets, and with writes = "deny-list" the agent could change its program or files before it runs: use the allow-list (the default) or a remote server';
  const bwrap = findTool('bwrap', o.env);
  if (!bwrap) return 'bubblewrap (bwrap) is not installed, and a local MCP server never runs unconfined';
  // PATH without the folders the agent writes (found in review: a bare command, npx, was looked up in node_modules/.bin).
  const path = trustedPath(o.env.PATH ?? '/usr/bin:/bin', o.cwd);
  const env: Record<string, string> = { PATH: path, HOME: '/tmp', TMPDIR: '/tmp', LANG: o.env.LANG ?? 'C.UTF-8' };
  const secrets = o.secrets ?? readServerSecrets(cfg, o);
  for (const [k, v] of Object.entries(cfg.env)) {
    if ('value' in v) env[k] = v.value;
    else {
      env[k] = secrets[k] ?? '';
      // Its answers are scrubbed of it (lib/proxy/intercept.ts): a value too short to look for is refused, as a bound
      // secret's is (review, round 36: one under 8 characters went to the agent as the server wrote it).
      const why = valueProblem(env[k], `its env ${k}'s secret`);
      if (why !== null) return why;
      o.onSecret?.(k, env[k]);
    }
  }
  const binds: ConfineBind[] = [];
  for (const root of thisCli().roots.slice(1)) binds.push({ src: root, dest: root });
  const showsHidden = hiddenReadPath(cfg.read, o);
  if (showsHidden !== null) return showsHidden;
  for (const r of cfg.read) {
    const p = realPathOf(expandHome(r, o.home, o.cwd));
    if (p !== null) binds.push({ src: p, dest: p });
  }
  const cwd = realPathOf(o.cwd) ?? o.cwd;
  const home = realPathOf(o.home) ?? o.home;
  // What the agent writes is not the server's program or its files: a next run would run what the agent left.
  // A bare command as bwrap will find it on that PATH (an allow_write folder on it is the agent's too).
  const program = cfg.command[0]!.includes('/') ? cfg.command[0]! : (findTool(cfg.command[0]!, { PATH: path }, o.cwd) ?? cfg.command[0]!);
  // Where the agent writes, by the names given and the real ones (found in review, round 3: an allow_write root reached
  // through a link). (One in /tmp counts too: a read path may show the host's /tmp there.)
  const roots = [...new Set([cwd, ...(o.writable ?? []), ...(o.writable ?? []).map((w) => realPathOf(w) ?? w)])];
  const agentWrites = (rp: string) => roots.some((w) => rp === w || rp.startsWith(w + '/'));
  // A path's real form, through the longest part of it that exists (a file not made yet, behind a link, found in review).
  const realOf = (p: string): string => canonicalPath(p, realPathOf);
  // What the server itself loads from, the system's folders, may hold no folder the agent writes (found in review, round 3:
  // allow_write in /usr/local's dist-packages, where a .pth runs in every python3).
  for (const sys of systemPaths().map((x) => x.path)) {
    const inside = roots.find((w) => w === sys || w.startsWith(sys + '/'));
    if (inside !== undefined) return `${inside}, where the agent writes, lies in ${sys}, which the server loads from: it would run what the agent left there`;
  }
  for (const p of [program, ...cfg.read.map((r) => expandHome(r, o.home, o.cwd))]) {
    const abs = expandHome(p, o.home, o.cwd);
    const rp = p.includes('/') ? realOf(abs) : null;
    // By its name too (found in review: a link in the tree to a program elsewhere passed, and the agent can swap the link).
    if (rp !== null && (agentWrites(rp) || agentWrites(posix.normalize(abs)))) return `${p} lies where the agent writes (the working tree or allow_write): a later run would run what the agent left there`;
    // (found in review: a read path above the tree showed it whole, deny_read paths too: the tree is workdir's to show)
    if (rp !== null && p !== program && roots.some((w) => w.startsWith(rp + '/'))) return `${p} holds ${roots.find((w) => w.startsWith(rp + '/'))}, where the agent writes: workdir says what the server sees of the tree`;
  }
  // Nor anything it is given by name there (found in review: ["node", "tools/mcp.js"] ran the agent's script with the
  // server's secrets; then a folder, which node and python run an index.js or __main__.py of, uv's --directory, a path
  // inside sh -c's string, --import=file://…, NODE_OPTIONS; round 3: a path with a space, a colon-joined list, a folder
  // above the tree and a relative path from it): no argument or literal env value may hold, anywhere, a path where the
  // agent writes or a folder above one, except a folder the profile lists in `data` given as a whole argument, never as
  // the one an interpreter runs or an option loads code from.
  const norm = (p: string) => posix.normalize(p).replace(/(.)\/+$/, '$1');
  const data = new Set(cfg.data.map((d) => realOf(norm(expandHome(d, o.home, o.cwd)))));
  for (const d of data) if (!agentWrites(d) || lstatSync(d, { throwIfNoEntry: false })?.isDirectory() !== true) return `data: ${d} is not a folder where the agent writes (data names such folders alone)`;
  // The server's own HOME (its private /tmp, unless the profile sets another) is what ~ and $HOME are in a shell there.
  const serverHome = env.HOME ?? '/tmp';
  const ancestors = [...new Set(roots.flatMap((w) => {
    const out: string[] = [];
    for (let d = posix.dirname(w); d !== '/' && d !== '.'; d = posix.dirname(d)) out.push(d);
    return out;
  }))];
  const BOUNDARY = /^(?:$|[\s"'`;:,=|&<>()/\\])/;
  const named = (text: string): string | null => {
    const expanded = text.replace(/(^|[^\w])~(?=\/|$)/g, `$1${serverHome}`).replace(/\$\{?HOME\}?/g, serverHome);
    // Each absolute path in it, cut at any character a shell or a list splits at, and also read to the end (a name with a
    // space in it): judged by its name, and by its real form.
    for (const m of expanded.matchAll(/\/[^\s"'`;:,=|&<>()]*/g)) {
      const p = norm(m[0]);
      if (agentWrites(p) || agentWrites(realOf(p))) return p;
    }
    const flat = expanded.replace(/\/{2,}/g, '/');
    for (const w of roots) {
      for (let at = flat.indexOf(w); at !== -1; at = flat.indexOf(w, at + 1)) if (BOUNDARY.test(flat.slice(at + w.length))) return w;
    }
    // A folder above one, named itself (not a path below it elsewhere): a relative path from there reaches the tree.
    for (const a of ancestors) {
      for (let at = flat.indexOf(a); at !== -1; at = flat.indexOf(a, at + 1)) {
        const next = flat.slice(at + a.length);
        if ((at === 0 || /[\s"'`;:,=|&<>()]/.test(flat[at - 1] ?? '')) && /^(?:$|[\s"'`;:,=|&<>()])/.test(next)) return a;
      }
    }
    return null;
  };
  const args = cfg.command.slice(1);
  const LOADS = /^(?:-r|--require|--import|--loader|--experimental-loader|-C|--directory|--project|--cwd|--prefix|--config|-c|-m)$/;
  for (const [n, arg] of args.entries()) {
    const p = named(arg);
    const asData = p !== null && data.has(realOf(norm(arg))) && norm(arg) === p && n > 0 && !LOADS.test(args[n - 1] ?? '');
    if (p !== null && !asData) return `its argument ${JSON.stringify(arg)} names ${p}, where the agent writes (the working tree or allow_write) or a folder above it: the server would run or obey what the agent left there (a folder it only works on can be listed in data)`;
  }
  for (const [k, v] of Object.entries(cfg.env)) {
    const p = 'value' in v ? named(v.value) : null;
    if (p !== null) return `its env ${k} names ${p}, where the agent writes (the working tree or allow_write) or a folder above it: the server would run or obey what the agent left there`;
  }
  const hidden: Array<{ path: string; dir: boolean }> = [];
  const pinned: string[] = [];
  const readOnly: string[] = [];
  if (cfg.workdir !== 'none' && (cwd === home || home.startsWith(cwd + '/'))) return `workdir = "${cfg.workdir}" from your home (or above it) would show the server all of it: run from a project folder`;
  if (cfg.workdir === 'write') {
    // Without the agent's seccomp filter the server could leave setuid files in the tree.
    if (o.seccompFile === undefined) return `workdir = "write" needs the agent's seccomp filter, which has none for ${process.arch}: use workdir = "read"`;
    const plan = treeProtection(cwd, o);
    if (typeof plan === 'string') return plan;
    binds.push({ src: cwd, dest: cwd, rw: true });
    hidden.push(...plan.hidden);
    pinned.push(...plan.pinned);
    readOnly.push(...plan.readOnly);
  } else if (cfg.workdir === 'read') {
    binds.push({ src: cwd, dest: cwd });
    // What the agent's sandbox hides in the working tree, the server's hides too.
    for (const d of o.denied ?? []) {
      const st = lstatSync(d, { throwIfNoEntry: false });
      if (st && (d === cwd || d.startsWith(cwd + '/'))) hidden.push({ path: d, dir: st.isDirectory() });
    }
  }
  let command = cfg.command;
  if (cfg.hosts.length > 0) {
    if (o.proxy === undefined) return 'its proxy could not be started';
    const perl = findTool('perl', o.env);
    if (!perl) return 'perl (perl-base) is not installed, and it relays the server to its proxy';
    // Its only way out: the relay on its own loopback, to a proxy of its own that allows its hosts alone (templates/mcp-relay.ts).
    binds.push({ src: o.proxy.socket, dest: SERVER_PROXY_SOCKET });
    const url = `http://stashbase:${o.proxy.token}@127.0.0.1:${SERVER_PROXY_PORT}`;
    Object.assign(env, { HTTPS_PROXY: url, HTTP_PROXY: url, https_proxy: url, http_proxy: url, NO_PROXY: '', no_proxy: '' });
    command = [perl, '-e', MCP_RELAY_SCRIPT, String(SERVER_PROXY_PORT), SERVER_PROXY_SOCKET, '--', ...cfg.command];
  }
  // Its working directory is its private /tmp, whatever workdir says (found in review: from the tree, npx ran the package's
  // program from the tree's node_modules/.bin, python3 -m took a module from the tree, and the agent's code had the
  // server's secrets): the tree is at its own path, for the server's arguments to name.
  const confined = buildConfineCommand({
    bwrap, system: systemPaths(), etc: existingEtc(), binds, hidden, pinned, readOnly,
    cwd: '/tmp', command, env: {}, inherited: [],
  });
  // The server's environment is bwrap's to give it (--clearenv, --setenv): bwrap itself, outside any sandbox, runs with
  // a bare PATH, never with what a profile sets (an LD_PRELOAD there would run in bwrap, on the host). Its --setenv
  // arguments come on a pipe (--args), never on bwrap's command line, which every user of the machine reads in /proc
  // (found in review: the server's secrets there for the whole run). A NUL would end an argument early, and what
  // followed would be bwrap's own options.
  const pairs = Object.entries(env);
  if (pairs.some(([k, v]) => k.includes('\0') || v.includes('\0'))) return 'its environment holds a NUL, which no environment can';
  const envArgs = pairs.map(([k, v]) => `--setenv\0${k}\0${v}\0`).join('');
  // The agent's seccomp filter: no setuid bits on what it writes, no TIOCSTI, no keyrings, no io_uring.
  const seccomp = o.seccompFile === undefined ? [] : ['--seccomp', '3'];
  return {
    ...confined, args: ['--clearenv', '--args', String(ENV_ARGS_FD), ...seccomp, ...confined.args], env: { PATH: '/usr/bin:/bin' }, unsetEnv: [], onlyEnv: true,
    ...(o.seccompFile === undefined ? {} : { fds: [{ fd: 3, path: o.seccompFile }] }),
    pipes: [{ fd: ENV_ARGS_FD, direction: 'to-child' }], envArgs,
  };
}

/** The descriptor bwrap reads the server's --setenv arguments from (--args). */
const ENV_ARGS_FD = 4;

/** A local server's command: bwrap's, with its environment's --setenv arguments (NUL-separated) to write on ENV_ARGS_FD. */
export interface ServerCommand extends Command {
  envArgs?: string;
}

/**
 * What a server with a writable working tree may not touch in it: what the
 * agent's sandbox keeps read-only there (the run's own plan: deny_write, git's
 * executable state and config targets, tool configs, build inputs, and the
 * stand-ins it made for missing ones) bound read-only, the folders that hold
 * them pinned so they cannot be renamed away, what it hides hidden, and the
 * isolated paths a Docker agent sees as volumes hidden too (the host's copy is
 * never the agent's). The repository's git directory is read-only as a whole:
 * commits are the agent's, brought back by the run's git import. Planned when
 * the server starts (its first request), after the run made its stand-ins: a
 * protected or isolated path missing then, which the server could create,
 * keeps it from starting.
 */
function treeProtection(cwd: string, o: LocalServerInput): { hidden: Array<{ path: string; dir: boolean }>; pinned: string[]; readOnly: string[] } | string {
  if (o.tree === undefined) return "the working tree's protections are unknown";
  const p = o.tree.protection;
  const repo = findRepoRoot(cwd);
  const gitEntry = repo === null ? null : join(repo.root, '.git');
  const inGit = (x: string) => gitEntry !== null && (x === gitEntry || x.startsWith(gitEntry + '/'));
  const within = (x: string) => x.startsWith(cwd + '/');
  const readOnly = [...new Set([...p.denyWrite.map((d) => d.path), ...p.placeholders, ...p.fileStandIns])].filter((x) => within(x) && !inGit(x));
  for (const x of [...readOnly, ...o.tree.isolated.filter(within)]) {
    if (!lstatSync(x, { throwIfNoEntry: false })) return `${x} is protected from writes but does not exist, so the server could create it (workdir = "write")`;
  }
  if (gitEntry !== null && within(gitEntry)) readOnly.push(gitEntry);
  return {
    hidden: [
      ...p.denyRead.filter((d) => within(d.path)).map((d) => ({ path: d.path, dir: d.kind === 'dir' })),
      ...o.tree.isolated.filter(within).map((x) => ({ path: x, dir: true })),
    ],
    pinned: p.pinned.filter((x) => within(x) && !inGit(x)),
    readOnly,
  };
}

type Pending = { resolve: (answer: unknown) => void; timer: NodeJS.Timeout; id: unknown };

export class LocalServer {
  private child: ChildProcess | null = null;
  private buf = '';
  private next = 1;
  private readonly pending = new Map<string, Pending>();
  /** Why it cannot answer (it did not start, or ended). */
  private broken: string | null = null;

  private cmd: ServerCommand | string | (() => ServerCommand | string);

  /**
   * `cmd` a function: worked out when the server starts. `secrets`: the real values its environment holds (filled in
   * as its command is made), scrubbed with the run's from every answer it gives the agent (lib/proxy/intercept.ts).
   */
  constructor(readonly name: string, cmd: ServerCommand | string | (() => ServerCommand | string), private readonly policy: ToolPolicy, readonly secrets: Array<{ variable: string; value: string }> = []) {
    this.cmd = cmd;
    if (typeof cmd === 'string') this.broken = cmd;
  }

  start(): void {
    if (typeof this.cmd === 'function') {
      try {
        this.cmd = this.cmd();
      } catch (e) {
        this.cmd = `could not be planned (${(e as Error).message})`;
      }
      if (typeof this.cmd === 'string') this.broken = this.cmd;
    }
    if (typeof this.cmd === 'string' || this.child) return;
    // Descriptors it is given from files (its seccomp filter) at their numbers, and the pipe of its environment.
    const extra: Array<number | 'ignore' | 'pipe'> = [];
    const at = (fd: number, what: number | 'pipe') => {
      while (extra.length < fd - 3) extra.push('ignore');
      extra[fd - 3] = what;
    };
    for (const f of this.cmd.fds ?? []) at(f.fd, openSync(f.path, 'r'));
    for (const p of this.cmd.pipes ?? []) at(p.fd, 'pipe');
    let started: ReturnType<typeof start>;
    try {
      started = start(this.cmd, ['pipe', 'pipe', 'ignore', ...extra]);
    } finally {
      for (const fd of extra) if (typeof fd === 'number') closeSync(fd);
    }
    started.exit.catch(() => {}); // told by the events below
    const child = started.child;
    for (const p of this.cmd.pipes ?? []) {
      const w = child.stdio[p.fd] as Writable | null;
      w?.on('error', () => {});
      w?.end(this.cmd.envArgs ?? '');
    }
    this.child = child;
    child.on('error', (e) => this.fail(`could not be started (${(e as NodeJS.ErrnoException).code ?? e.message})`));
    child.on('exit', (code, sig) => this.fail(`ended (${sig ?? `exit ${code}`})`));
    child.stdin!.on('error', () => {});
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (d: string) => this.read(d));
  }

  private fail(why: string): void {
    this.broken ??= why;
    for (const [k, p] of this.pending) {
      clearTimeout(p.timer);
      p.resolve(this.error(p.id, `the local server ${this.name} ${why}`));
      this.pending.delete(k);
    }
  }

  private error(id: unknown, message: string) {
    return { jsonrpc: '2.0', id, error: { code: -32603, message: `stashbase: ${message}` } };
  }

  /** The server does not read what it is sent: nothing more is written until it does. */
  private backedUp = false;

  private write(v: unknown): void {
    const stdin = this.child?.stdin;
    if (!stdin || this.backedUp) return;
    if (!stdin.write(`${JSON.stringify(v)}\n`)) {
      this.backedUp = true;
      stdin.once('drain', () => (this.backedUp = false));
    }
  }

  private read(d: string): void {
    this.buf += d;
    let nl: number;
    while ((nl = this.buf.indexOf('\n')) !== -1) {
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      this.line(line);
    }
    // A line without end past the limit is dropped, not held.
    if (this.buf.length > MAX_LINE) this.buf = '';
  }

  private line(text: string): void {
    if (text.trim() === '' || text.length > MAX_LINE) return;
    const parsed = parseJson(text);
    if (parsed === null || !isJsonObject(parsed.value)) {
      // An answer the bridge cannot read (nested too deep, say) is an error for the request it names, not a wait.
      const own = /"id"\s*:\s*"(sb-\d+)"/.exec(text)?.[1];
      const p = own === undefined ? undefined : this.pending.get(own);
      if (own !== undefined && p) {
        this.pending.delete(own);
        clearTimeout(p.timer);
        p.resolve(this.error(p.id, `the local server ${this.name} sent an answer stashbase could not read`));
      }
      return;
    }
    const m = parsed.value;
    if (typeof m.method === 'string') {
      // The server's own request (roots, sampling, elicitation): not available through stashbase (an id too long to echo is not answered); its notifications are dropped.
      if (m.id !== undefined && JSON.stringify(m.id).length <= 256 && !this.backedUp) this.write({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'not available through stashbase' } });
      return;
    }
    if (typeof m.id !== 'string') return;
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    clearTimeout(p.timer);
    // The agent's id back, the answer otherwise as the server gave it (a tools/list result filtered by the caller).
    const out: Record<string, unknown> = { jsonrpc: '2.0', id: p.id };
    if (m.error !== undefined) out.error = m.error;
    else out.result = m.result ?? null;
    p.resolve(out);
  }

  /**
   * The agent's POST body (already read and decided as MCP): each message to
   * the server, each request answered (202 when there is none). A tools/list
   * result is filtered by the policy.
   */
  async exchange(body: Buffer): Promise<{ status: number; body: string }> {
    // Read and written in a step of its own: what waits for the server's answers is their ids alone, never the request
    // (found in review, round 3: the body, its text and its parsed form held for two minutes each).
    const sent = this.send(body);
    if ('status' in sent) return sent;
    const { answers, batch } = sent;
    if (answers.length === 0) return { status: 202, body: '' };
    return this.answered(answers, batch);
  }

  private send(body: Buffer): { status: number; body: string } | { answers: Array<Promise<unknown>>; batch: boolean } {
    this.start();
    const text = body.toString('utf8');
    // The bridge writes each message anew: a number it cannot hold exactly would reach the server changed.
    const inexact = inexactNumber(text);
    if (inexact !== null) return { status: 400, body: JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `stashbase: the number ${inexact} cannot be passed to the local server ${this.name} exactly` } }) };
    const v: unknown = JSON.parse(text);
    const batch = Array.isArray(v);
    const messages = (batch ? v : [v]) as Array<Record<string, unknown>>;
    const answers: Array<Promise<unknown>> = [];
    for (const m of messages) {
      const isRequest = typeof m.method === 'string' && Object.hasOwn(m, 'id');
      if (typeof m.method !== 'string') continue; // the agent's answers to server requests: the bridge answered those itself
      if (!isRequest) {
        // A cancellation names the agent's id: the server knows the bridge's.
        const params = m.params as Record<string, unknown> | undefined;
        if (m.method === 'notifications/cancelled' && params && typeof params === 'object' && Object.hasOwn(params, 'requestId')) {
          const own = [...this.pending].find(([, p]) => p.id === params.requestId)?.[0];
          if (own === undefined) continue;
          if (this.broken === null) this.write({ ...m, params: { ...params, requestId: own } });
          continue;
        }
        if (this.broken === null) this.write(m);
        continue;
      }
      if (this.broken !== null) {
        answers.push(Promise.resolve(this.error(m.id, `the local server ${this.name} ${this.broken}`)));
        continue;
      }
      if (this.pending.size >= MAX_PENDING || this.backedUp) {
        answers.push(Promise.resolve(this.error(m.id, `the local server ${this.name} has ${MAX_PENDING} requests unanswered`)));
        continue;
      }
      const own = `sb-${this.next++}`;
      // (Its id alone kept while it waits: the message, up to 4 MiB, is not held for two minutes; found in review.)
      const id = m.id;
      answers.push(new Promise((resolve) => {
        const timer = setTimeout(() => {
          this.pending.delete(own);
          resolve(this.error(id, `the local server ${this.name} did not answer within ${ANSWER_TIMEOUT_MS / 1000} s`));
        }, ANSWER_TIMEOUT_MS);
        timer.unref();
        this.pending.set(own, { resolve, timer, id });
      }));
      this.write({ ...m, id: own });
    }
    return { answers, batch };
  }

  private async answered(answers: Array<Promise<unknown>>, batch: boolean): Promise<{ status: number; body: string }> {
    const got = await Promise.all(answers);
    const answer = JSON.stringify(batch ? got : got[0]);
    const filtered = filterJson(answer, this.policy);
    // An answer the filter cannot read is not passed on (as on the remote path).
    if (filtered === 'refused') return { status: 200, body: JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: `stashbase: the local server ${this.name}'s answer could not be read, so it was not passed on` } }) };
    return { status: 200, body: filtered === null ? answer : filtered };
  }

  /** Called once the server is stopped (its proxy closed, its socket's folder removed). */
  onStop: (() => void) | null = null;

  stop(): void {
    this.fail('was stopped with the run');
    this.child?.kill('SIGKILL');
    this.onStop?.();
    this.onStop = null;
  }
}
