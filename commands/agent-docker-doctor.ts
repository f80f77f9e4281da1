import { flagBool, flagString, type FlagSpec, parseCommand } from '../lib/util/argv.js';
import { isAbsolute } from 'node:path';
import { asciiJson, printable } from '../lib/util/printable.js';
import { engineOf } from '../lib/remote/target.js';
import { findTool } from '../lib/util/find-tool.js';
import { engineInfo, findDocker, inspectImage } from '../lib/docker/engine.js';
import { gvisorNote, isGvisor, relayBinary } from '../lib/docker/sealed.js';
import { ageDays, defaultImageRef } from '../lib/docker/image.js';
import { UsageError } from '../lib/errors.js';
import { capture } from '../lib/exec.js';
import { backendChecks, type Check } from '../lib/run/readiness.js';
import { versionsCommand } from '../templates/docker-image.js';
import { JSON_FLAG, REMOTE_FLAG } from './shared-flags.js';

export const usage = 'stashbase agent docker doctor [--remote <context>] [--json]';
export const summary = 'Check whether the Docker backend can run here: CLI, daemon, default image.';
export const flags: FlagSpec[] = [REMOTE_FLAG, JSON_FLAG];
const spec = { name: 'agent docker doctor', usage, summary, flags, notes: 'Exits 0 when the Docker backend is ready, 1 when it is not.' };

interface ImageReport {
  ref: string;
  present: boolean;
  created: string | null;
  ageDays: number | null;
  agents: Record<string, string>;
}

async function imageReport(docker: string, ref: string): Promise<ImageReport> {
  const facts = await inspectImage(docker, ref);
  if (!facts) return { ref, present: false, created: null, ageDays: null, agents: {} };
  const agents: Record<string, string> = Object.create(null);
  try {
    for (const line of (await capture(versionsCommand(docker, ref))).split('\n')) {
      const m = /^([a-z]+): (.*)$/.exec(line.trim());
      if (m) agents[m[1] as string] = m[2] as string;
    }
  } catch {
    // An image built before versions were recorded: shown as unknown.
  }
  return { ref, present: true, created: (facts.builtLabel || facts.created.toISOString()), ageDays: ageDays(facts), agents };
}

export async function main(argv: string[]): Promise<number> {
  const p = parseCommand(argv, spec);
  if (p === null) return 0;
  if (p.positionals.length > 0 || p.rest !== null) throw new UsageError('agent docker doctor takes no arguments');
  const env = process.env;
  // Another machine's engine (docs/remote.md): checked the same way, and said.
  const cli = findTool('docker', env);
  const target = cli ? await engineOf(cli, env, flagString(p, 'remote')) : null;
  const checks: Check[] = backendChecks('docker', env);
  const reachable = checks.every((c) => c.ok);
  const ref = defaultImageRef(env);
  let image: ImageReport = { ref, present: false, created: null, ageDays: null, agents: {} };
  if (checks.every((c) => c.ok)) {
    image = await imageReport(findDocker(env), ref);
    const agents = Object.entries(image.agents).map(([k, v]) => `${k} ${v}`).join(', ');
    checks.push(
      image.present
        ? { name: 'default image', ok: true, detail: `${ref} built ${image.created} (${image.ageDays} days ago)${agents ? `; ${agents}` : ''}` }
        : { name: 'default image', ok: false, detail: `${ref} is not built: stashbase agent docker build (where the vendors' installers cannot be reached: --agents-from npm)` },
    );
    // Ready means an agent runs: each one the image should hold, found in it.
    if (image.present) {
      for (const agent of ['claude', 'codex']) {
        const v = image.agents[agent];
        const missing = v === undefined || /not installed/i.test(v);
        checks.push(missing
          ? { name: agent, ok: false, detail: `not in ${ref}${v === undefined ? ' (an image built before versions were recorded, or by hand)' : ''}: stashbase agent docker build (--agents-from npm where the installers cannot be reached)` }
          : { name: agent, ok: true, detail: `${v} in ${ref}` });
      }
    }
  }
  const ready = checks.every((c) => c.ok);
  // What the sealed network mode and other runtimes need: said, not required (docs/docker.md).
  const notes = reachable ? await runtimeNotes(findDocker(env), target === null) : [];
  if (flagBool(p, 'json')) {
    process.stdout.write(asciiJson({ ...(target ? { remote: { engine: target.host, from: target.from } } : {}), ready, checks, image, notes }) + '\n');
  } else {
    const lines = [
      ...(target ? [`  info engine: ${target.host} (${target.from}), not this machine's: runs there are remote runs (docs/remote.md)`] : []),
      ...checks.map((c) => `  ${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`), ...notes.map((n) => `  info ${n.name}: ${n.detail}`)];
    lines.push(ready ? 'Docker backend ready.' : 'Docker backend not ready.');
    // The engine's words in them (its version, runtimes, an image's labels; a remote engine's own to choose): each line one, escaped.
    process.stdout.write(lines.map((l) => printable(l, true)).join('\n') + '\n');
  }
  return ready ? 0 : 1;
}

/** The engine's runtimes (runsc among them, and how to register it) and whether the sealed network's relay is built for the engine. */
async function runtimeNotes(docker: string, local: boolean): Promise<Array<{ name: string; detail: string }>> {
  const engine = await engineInfo(docker);
  const names = Object.keys(engine.runtimes).sort();
  const gvisor = names.filter((n) => isGvisor(engine.runtimes, n));
  const notes = [{ name: 'runtimes', detail: `${names.map((n) => (n === engine.defaultRuntime ? `${n} (default)` : n)).join(', ')}` }];
  if (gvisor.length === 0) {
    notes.push({ name: 'runsc', detail: 'gVisor is not registered: bash scripts/install-runsc.sh (as root) installs and registers it, or add {"runtimes":{"runsc":{"path":"/usr/bin/runsc","runtimeArgs":["--network=none","--oci-seccomp"]}}} to /etc/docker/daemon.json and send dockerd SIGHUP; then [sandbox] runtime = "runsc"' });
  } else {
    for (const n of gvisor) {
      const seccomp = engine.runtimes[n]!.args.some((a) => /^--?oci-seccomp(=true)?$/.test(a));
      // Its program is asked its version only on this machine's engine, by an absolute path: a remote engine's path names
      // a program there (review, round 31: "./runsc" ran a file of the working directory here).
      const path = engine.runtimes[n]!.path;
      const clone3 = local && isAbsolute(path) ? await gvisorNote(path) : null;
      notes.push({ name: n, detail: `${seccomp ? `gVisor, with --oci-seccomp: runtime = "${n}" runs sealed under it` : `gVisor without --oci-seccomp: it would ignore the agent's seccomp profile, so runs refuse it; add "--oci-seccomp" to its runtimeArgs`}${clone3 !== null ? `; ${clone3}` : ''}` });
    }
  }
  let relay: string;
  try {
    relay = `built for linux-${engine.arch} (${relayBinary(engine.arch)})`;
  } catch (e) {
    relay = (e as Error).message.replace(/; nothing was run$/, '');
  }
  notes.push({ name: 'sealed relay', detail: relay });
  return notes;
}
