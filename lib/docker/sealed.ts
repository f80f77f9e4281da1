// The sealed network mode of the Docker backend (docs/docker.md): which mode
// and runtime a run gets, the relay's binary for the engine, the image's
// entrypoint (the relay, the container's process, runs it after listening),
// and a remote run's relay, exec'd into its lease's container, with its
// stream carried by lib/relay/mux.ts.
import { existsSync, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { basename, isAbsolute, join } from 'node:path';
import { imageConfigOfApi, imageRefPath, type Runtimes } from './engine.js';
import { RELAY_PATH, relayExecCommand, relayServe, relayUid } from '../../templates/docker-run.js';
import { type EngineApi, execAttach } from './api.js';
import { SandboxUnavailableError, UsageError } from '../errors.js';
import { capture, start } from '../exec.js';
import type { Readable, Writable } from 'node:stream';
import { thisCli } from '../hooks/cli-files.js';
import type { Profile } from '../profile/types.js';
import { isJsonObject, parseJson } from '../readback/json.js';
import { readBackText } from '../readback/file.js';
import { findTool } from '../util/find-tool.js';
import { RelayMux } from '../relay/mux.js';

export type DockerNetwork = 'firewall' | 'sealed';

/** Runtimes that run containers in the host's network namespace the way runc does, so the firewall holder's rules bind them. */
const RUNC = /^(runc|io\.containerd\.runc\.v\d+|io\.containerd\.runtime\.v1\.linux)$/;

export interface NetworkChoice {
  network: DockerNetwork;
  runtime?: string;
  /** Said when the runtime decided the mode. */
  note?: string;
}

/**
 * The run's network mode and runtime: the flags over the profile; firewall
 * unless asked. A runtime other than runc's runs sealed: its own network
 * stack (runsc's netstack) does not pass through the iptables OUTPUT chain the
 * firewall holder sets, so a firewall run under it would not be confined; a
 * profile that asks for both is refused, never run weaker. A runtime the
 * engine has not registered fails the run with the fix.
 */
export function chooseNetwork(profile: Profile, flags: { dockerNetwork?: string; dockerRuntime?: string }, runtimes: Runtimes | null): NetworkChoice {
  const runtime = flags.dockerRuntime ?? profile.sandbox.dockerRuntime;
  const asked = (flags.dockerNetwork ?? profile.sandbox.dockerNetwork) as DockerNetwork | undefined;
  if (runtime !== undefined && runtimes !== null) {
    const known = Object.hasOwn(runtimes, runtime) ? runtimes[runtime] : undefined;
    const fix = runtime === 'runsc' ? ' (bash scripts/install-runsc.sh does it for gVisor, as root)' : '';
    if (known === undefined) throw new SandboxUnavailableError(`the Docker engine has no runtime ${JSON.stringify(runtime)} (it has ${Object.keys(runtimes).sort().join(', ') || 'none'}): register it in /etc/docker/daemon.json and reload dockerd${fix}, or run without it; nothing was run`);
    // gVisor ignores a container's seccomp profile unless told: the agent's would not hold.
    if (isGvisor(runtimes, runtime) && !known.args.some((a) => /^--?oci-seccomp(=true)?$/.test(a))) {
      throw new SandboxUnavailableError(`the runtime ${runtime} (gVisor) is registered without --oci-seccomp, so it would ignore the agent container's seccomp profile: add "--oci-seccomp" to its runtimeArgs in /etc/docker/daemon.json and reload dockerd${fix}; nothing was run`);
    }
  }
  if (runtime === undefined || RUNC.test(runtime)) return { network: asked ?? 'firewall', ...(runtime !== undefined ? { runtime } : {}) };
  if (asked === 'firewall') throw new UsageError(`the runtime ${runtime} cannot be confined by the firewall holder (its own network stack does not pass through the iptables rules the holder sets): use network = "sealed" with it (or --docker-network sealed)`);
  return { network: 'sealed', runtime, ...(asked === undefined ? { note: `the runtime ${runtime} runs sealed: no network interface, the relay the only way out (the firewall holder's iptables rules do not bind its network stack)` } : {}) };
}

/** Whether the engine's runtime of that name is gVisor's runsc (by its program; a dry run: by its name). */
export function isGvisor(runtimes: Runtimes | null, runtime: string): boolean {
  if (runtimes === null) return runtime === 'runsc';
  const known = Object.hasOwn(runtimes, runtime) ? runtimes[runtime] : undefined;
  return known !== undefined && basename(known.path) === 'runsc';
}

/** Where npm run build puts the relay for an architecture (scripts/build-relay.mjs). */
export function relayPath(arch: string): string {
  return join(thisCli().roots[0] as string, 'dist', 'relay', `linux-${arch}`, 'stashbase-relay');
}

/** The relay binary for the engine's architecture, built by npm run build (scripts/build-relay.mjs). */
export function relayBinary(arch: string): string {
  const root = thisCli().roots[0] as string;
  const file = relayPath(arch);
  if (existsSync(file)) return file;
  const built = arch === 'amd64' || arch === 'arm64';
  throw new SandboxUnavailableError(built
    ? `the sealed network's relay is not built (${file} is missing): install Go (bash scripts/install-go.sh) and run npm run build in ${root}; nothing was run`
    : `the sealed network's relay is built for linux amd64 and arm64, and this engine runs ${arch}: use network = "firewall"; nothing was run`);
}

/** The image's ENTRYPOINT (none: []), which the relay's gate runs in its place. */
export async function imageEntrypoint(docker: string, ref: string, api: EngineApi | null = null): Promise<string[]> {
  let v: unknown;
  let out: string;
  if (api !== null && imageRefPath(ref) !== null) {
    const c = await imageConfigOfApi(api, ref);
    if (c === null) throw new SandboxUnavailableError(`the image ${ref} is not there; nothing was run`);
    v = c.entrypoint;
    out = JSON.stringify(v) ?? '';
  } else {
    out = await capture({ file: docker, args: ['image', 'inspect', '--format', '{{json .Config.Entrypoint}}', ref] });
    const parsed = parseJson(out.trim());
    v = parsed === null ? null : parsed.value;
  }
  if (v === null) return [];
  if (!Array.isArray(v) || !v.every((x): x is string => typeof x === 'string')) throw new SandboxUnavailableError(`the image ${ref} has an entrypoint stashbase cannot read (${out.trim().slice(0, 200)}); nothing was run`);
  return v;
}

export interface RunningRelay {
  /** Resolves once the relay listens in the container; rejects if it never does. */
  ready: Promise<void>;
  stop(): void;
}

const RELAY_START_MS = 60_000;

/** The relay's exec stream, however it is reached. */
interface RelayStream {
  stdout: Readable;
  stdin: Writable;
  /** Its standard error's last words (nothing kept once it greeted). */
  err(): string;
  closed: Promise<void>;
  kill(): void;
  /** Told once it greeted: what it writes to its standard error is the agent's container's, not read any more. */
  greeted(): void;
}

/** `docker exec -i` of the relay by the CLI; its failure to find a running container is `notYet`. */
function cliStream(o: RelayOptions): RelayStream {
  const e = start(relayExecCommand(o.docker, o.session, relayUid(o.agentUser), o.maxStreams, o.relayAt, o.running), ['pipe', 'pipe', 'pipe']);
  // Its last words only (4 KiB), and nothing once it greeted: the relay's output is the agent's container's.
  let err = '';
  let listening = false;
  e.child.stderr?.on('data', (b: Buffer) => {
    if (!listening) err = (err + b.toString('utf8')).slice(-4096);
  });
  e.child.stdin?.on('error', () => {});
  e.exit.catch(() => 0);
  // Ended: once its stderr is read to the end too (the reason is there).
  const closed = new Promise<void>((resolve) => e.child.on('close', () => resolve()));
  return {
    stdout: e.child.stdout!, stdin: e.child.stdin!, err: () => err, closed, kill: () => e.child.kill('SIGKILL'),
    greeted: () => {
      listening = true;
      e.child.stderr?.resume();
    },
  };
}

/** The same exec through the engine's API (lib/docker/api.ts). */
async function apiStream(api: EngineApi, o: RelayOptions): Promise<RelayStream> {
  const uid = relayUid(o.agentUser);
  const s = await execAttach(api, { container: o.running, user: `${uid}:${uid}`, workdir: '/', cmd: relayServe(o.relayAt ?? RELAY_PATH, o.maxStreams) });
  let listening = false;
  return { stdout: s.stdout, stdin: s.stdin, err: () => (listening ? '' : s.stderrTail()), closed: s.closed, kill: () => s.destroy(), greeted: () => (listening = true) };
}

interface RelayOptions {
  docker: string;
  session: string;
  agentUser: string | null;
  proxySocket: string;
  maxStreams: number;
  agentEnded: () => boolean;
  onEnd: (why: string, protocolError: boolean) => void;
  relayAt?: string;
  /** The engine's API, when stashbase speaks to it directly. */
  api?: EngineApi | null;
  /** The container the relay is exec'd into, running already, whose network namespace the agent's joins (a remote run's lease); the relay ends with it. */
  running: string;
}

/**
 * Starts the relay, as a user of its own, in a container that runs already (a
 * remote run's lease; a local sealed run's relay is its container's own
 * process: relay/supervise.go) and carries its stream to the proxy listening
 * on `proxySocket`. Through the CLI, an exec that finds no running container
 * yet is tried again while the agent has not ended. `onEnd` is told if the
 * relay ends before the run does.
 */
export function startRelay(o: RelayOptions): RunningRelay {
  let stream: RelayStream | null = null;
  let mux: RelayMux | null = null;
  let stopped = false;
  const api = o.api ?? null;
  const ready = (async () => {
    const t0 = Date.now();
    for (;;) {
      if (stopped || o.agentEnded()) throw new SandboxUnavailableError('the agent ended before the relay started');
      let s: RelayStream;
      if (api !== null) {
        s = await apiStream(api, o).catch((e: Error) => {
          throw new SandboxUnavailableError(o.agentEnded() ? 'the agent ended before the relay started' : /is not running/i.test(e.message) ? `the agent's container ended before its relay started (${e.message})` : `the sealed network's relay did not start (${e.message})`);
        });
        if (stopped) {
          s.kill();
          throw new SandboxUnavailableError('the agent ended before the relay started');
        }
      } else s = cliStream(o);
      stream = s;
      const m = new RelayMux(s.stdout, s.stdin, { connect: () => connect(o.proxySocket), maxStreams: o.maxStreams, onEnd: (why, bad) => {
        if (!m.greeted || stopped) return;
        o.onEnd(why, bad);
        // Its stream closed too: the relay, whose input ends, exits, and the agent's connections are refused at once, not
        // left waiting on a relay that still accepts (review, round 34, after a protocol error).
        s.kill();
      } });
      const outcome = await Promise.race([m.ready.then(() => 'ready' as const, () => s.closed.then(() => 'ended' as const)), s.closed.then(() => 'ended' as const)]);
      if (outcome === 'ready') {
        s.greeted();
        mux = m;
        return;
      }
      m.end('its exec ended');
      const err = s.err();
      const notYet = api === null && /no such container|is not running|not found/i.test(err);
      if (!notYet || Date.now() - t0 > RELAY_START_MS) throw new SandboxUnavailableError(`the sealed network's relay did not start (${err.trim().split('\n').pop() || 'its exec ended'})`);
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  ready.catch(() => {});
  return {
    ready,
    stop: () => {
      stopped = true;
      mux?.end('the run ended');
      (stream as RelayStream | null)?.kill();
    },
  };
}


/** The proxy listening on a Unix socket (a sealed run's, local or remote): the relay's stream is its client. */
export function listenPath(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (e) => reject(new SandboxUnavailableError(`cannot listen on ${path} (${(e as Error).message}); nothing was run`)));
    server.listen(path, () => resolve());
  });
}

/**
 * A loopback listener whose connections the proxy serves as its own (a
 * sealed run's proxy listens only on a Unix socket): for the host-side
 * dependency check, which reaches the proxy by address. Only loopback, and
 * every request still needs the run's token.
 */
export function loopbackDoor(proxy: Server): Promise<{ port: number; close: () => void }> {
  const door = createServer({ pauseOnConnect: true, noDelay: true }, (socket) => {
    proxy.emit('connection', socket);
    socket.resume();
  });
  return new Promise((resolve, reject) => {
    door.once('error', reject);
    door.listen({ host: '127.0.0.1', port: 0 }, () => resolve({ port: (door.address() as { port: number }).port, close: () => door.close() }));
  });
}

/**
 * The release date of a gVisor runtime's program (runsc --version: "release-20230807.0" or Debian's
 * "0.0~20221219.0"), or null. Releases from 2023-08 on implement clone3, which a seccomp filter cannot
 * read and gVisor cannot refuse with ENOSYS: under them the agent can make namespaces inside gVisor's kernel.
 */
export function gvisorRelease(versionText: string): number | null {
  const m = /(?:release-|~)(\d{8})/.exec(versionText);
  return m ? Number(m[1]) : null;
}
export const GVISOR_CLONE3_FROM = 20230807;

/** A program's identity: what changes when it is replaced or rewritten. */
function identityOf(path: string): string | null {
  try {
    const st = statSync(path, { bigint: true });
    return [st.dev, st.ino, st.size, st.mtimeNs, st.ctimeNs].join(':');
  } catch {
    return null;
  }
}

async function runscVersion(named: string, home?: string): Promise<string> {
  // A relative path would run a file of the working folder, which the agent writes: never asked (said as unread). A
  // bare name is found as every tool is, and that file is the one kept and run (third review: its identity was taken
  // of ./runsc, the agent's, while PATH's runsc ran).
  if (named.includes('/') && !isAbsolute(named)) return '';
  const path = named.includes('/') ? named : findTool(named);
  if (path === null) return '';
  const file = home === undefined ? null : join(home, 'docker', 'runsc-version.json');
  const id = identityOf(path);
  if (file !== null && id !== null) {
    const v = parseJson(readBackText(file, 8192) ?? '')?.value;
    if (isJsonObject(v) && v.path === path && v.identity === id && typeof v.version === 'string') return v.version;
  }
  const out = await capture({ file: path, args: ['--version'] }).catch(() => '');
  if (file !== null && id !== null && out !== '') {
    mkdirSync(join(home as string, 'docker'), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ path, identity: id, version: out.slice(0, 4096) }) + '\n', { mode: 0o600 });
    renameSync(tmp, file);
  }
  return out;
}

/**
 * What a run under a gVisor that implements clone3 should be told (null: nothing). The program's `--version` is kept
 * in $STASHBASE_HOME (stashbase's alone) with the program's identity (device, inode, size, change and modification
 * times): asked again only when any differs, as a program replaced or rewritten makes them (it cost ~40 ms of every
 * runsc run's start). Without `home`: asked each time.
 */
export async function gvisorNote(path: string, home?: string): Promise<string | null> {
  const out = await runscVersion(path, home);
  const release = gvisorRelease(out);
  if (release === null) return `could not read ${path}'s version: if it implements clone3 (gVisor from 2023-08 on), the agent can make namespaces inside gVisor's kernel (never this machine's)`;
  return release >= GVISOR_CLONE3_FROM ? `${path} (gVisor ${release}) implements clone3, which no seccomp filter can read: the agent can make namespaces inside gVisor's kernel (never this machine's)` : null;
}
