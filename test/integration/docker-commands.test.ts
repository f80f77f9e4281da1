// `agent run` on the Docker backend as a whole (exit codes, signals, crash
// safety, images) and the `agent docker` commands, against the real engine.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createServer, type AddressInfo } from 'node:net';
import { BIN, cli, needs, tempHome, writeFile } from '../helpers.js';
import { measureSeccompFile } from '../../lib/docker/home-volume.js';
import { volumeSizeCommand } from '../../templates/docker-volumes.js';
import { docker, leftoversOf, sessionOf } from '../docker-setup.js';
import { PTY } from '../native-setup.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts a long run and resolves once its agent container is up. */
async function startLongRun(env: NodeJS.ProcessEnv, cwd: string): Promise<{ child: ReturnType<typeof spawn>; session: string; stderr: () => string; exit: Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, 'agent', 'run', '--docker-sandbox', 'true', '--', 'sleep', '120'], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d));
  // 'exit', not 'close': after a SIGKILL the docker clients it started may still hold its pipes.
  const exit = new Promise<number | null>((r) => child.on('exit', (code, signal) => r(code ?? (signal === 'SIGTERM' ? 143 : null))));
  for (let i = 0; i < 300 && !/Agent session: /.test(err); i++) await sleep(50);
  const session = sessionOf(err);
  for (let i = 0; i < 600; i++) {
    if (docker(['ps', '--filter', `name=stashbase-agent-run-${session}-agent`, '--format', '{{.State}}']).trim() === 'running') break;
    await sleep(50);
  }
  return { child, session, stderr: () => err, exit };
}

describe('Docker backend: runs and the agent docker commands (real engine)', needs('docker'), () => {
  const t = tempHome();
  const proj = join(t.dir, 'proj');
  before(() => mkdirSync(proj, { recursive: true }));
  after(() => t.cleanup());

  test("the agent's exit code is agent run's", async () => {
    const r = await cli(['agent', 'run', '--silent', '--docker-sandbox', 'true', '--', 'sh', '-c', 'echo out; exit 7'], { env: t.env, cwd: proj, timeoutMs: 60_000 });
    assert.equal(r.code, 7, r.stderr);
    assert.equal(r.stdout, 'out\n');
  });

  test('SIGKILL of stashbase and its watchdog leaves a run behind: status shows it orphaned, a second run is undisturbed, cleanup removes it and skips a live one', async () => {
    const live = await startLongRun(t.env, proj);
    const killed = await startLongRun(t.env, proj);
    // Its watchdog first (it would remove the run the moment stashbase is gone), then stashbase.
    const watchdog = spawnSync('pgrep', ['-P', String(killed.child.pid), '-f', 'read -r line'], { encoding: 'utf8' }).stdout.trim();
    assert.match(watchdog, /^\d+$/, 'the run has its watchdog');
    process.kill(Number(watchdog), 'SIGKILL');
    killed.child.kill('SIGKILL');
    await killed.exit;
    // The home volume's measurement hears its input end and goes unmeasured (the agent may still be writing).
    for (let i = 0; i < 100 && leftoversOf(killed.session).includes(`stashbase-agent-run-${killed.session}-du`); i++) await sleep(100);
    const left = leftoversOf(killed.session);
    assert.ok(!left.includes(`stashbase-agent-run-${killed.session}-du`), 'the measurement ended with stashbase');
    for (const name of [`stashbase-agent-run-${killed.session}`, `stashbase-agent-run-${killed.session}-net`]) assert.ok(left.includes(name), `${name} is left behind`);
    const second = await cli(['agent', 'run', '--silent', '--docker-sandbox', 'true', '--', 'true'], { env: t.env, cwd: proj, timeoutMs: 60_000 });
    assert.equal(second.code, 0, second.stderr);
    const status = JSON.parse((await cli(['agent', 'docker', 'status', '--json'], { env: t.env })).stdout) as { runs: Array<{ session: string; live: boolean; orphaned: boolean; network: string; containers: string[] }> };
    const mine = status.runs.filter((r) => r.session === killed.session || r.session === live.session);
    assert.deepEqual(mine.map((r) => [r.session, r.live, r.orphaned, r.network, r.containers.includes(`${r.network}-net`)]).sort(), [
      [killed.session, false, true, `stashbase-agent-run-${killed.session}`, true],
      [live.session, true, false, `stashbase-agent-run-${live.session}`, true],
    ].sort());
    assert.match((await cli(['agent', 'docker', 'status'], { env: t.env })).stdout, new RegExp(`\\t${killed.session}\\t[^\\t]*\\torphaned\\t`));
    const refused = await cli(['agent', 'docker', 'cleanup'], { env: t.env });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^stashbase: \d+ run\(s\) left behind: confirm in a terminal or pass --yes; nothing was removed$/m);
    assert.deepEqual(leftoversOf(killed.session), left);
    const clean = await cli(['agent', 'docker', 'cleanup', '--yes'], { env: t.env, timeoutMs: 60_000 });
    assert.equal(clean.code, 0, clean.stderr);
    assert.match(clean.stdout, new RegExp(`^skipping stashbase-agent-run-${live.session}: session ${live.session} is still running here$`, 'm'));
    assert.match(clean.stdout, new RegExp(`^removed stashbase-agent-run-${killed.session}$`, 'm'));
    assert.deepEqual(leftoversOf(killed.session), []);
    // Its network, holder, agent and the home volume's measurement, waiting for the run's end.
    assert.deepEqual(leftoversOf(live.session).sort(), ['', '-agent', '-du', '-net'].map((x) => `stashbase-agent-run-${live.session}${x}`), 'the live run is untouched');
    // SIGTERM reaches the agent; agent run then tears everything down.
    live.child.kill('SIGTERM');
    assert.equal(await live.exit, 143);
    assert.deepEqual(leftoversOf(live.session), []);
  });

  test('a missing default image fails closed without a terminal, naming the build command', async () => {
    const env = { ...t.env, STASHBASE_DOCKER_IMAGE: 'stashbase-test-missing:none' };
    const r = await cli(['agent', 'run', '--silent', '--docker-sandbox', 'true', '--', 'touch', 'ran'], { env, cwd: proj });
    assert.equal(r.code, 4);
    assert.equal(r.stderr, 'stashbase: the Docker sandbox image stashbase-test-missing:none is not built; nothing was run. Build it with: stashbase agent docker build\n');
    assert.equal(existsSync(join(proj, 'ran')), false);
    const doc = await cli(['agent', 'docker', 'doctor', '--json'], { env, timeoutMs: 60_000 });
    assert.equal(doc.code, 1);
    const report = JSON.parse(doc.stdout) as { ready: boolean; checks: Array<{ name: string; ok: boolean }>; image: { present: boolean } };
    assert.deepEqual([report.ready, report.image.present, report.checks.map((c) => [c.name, c.ok])], [false, false, [['docker', true], ['docker daemon', true], ['default image', false]]]);
  });

  test('doctor: ready only when the agents are in the image, with its age and their versions; an image without them is not ready, naming the build', async () => {
    // The tests' base image has neither agent: a run of claude there would die at exec.
    const bare = await cli(['agent', 'docker', 'doctor', '--json'], { env: t.env, timeoutMs: 60_000 });
    assert.equal(bare.code, 1, bare.stdout + bare.stderr);
    const b = JSON.parse(bare.stdout) as { ready: boolean; checks: Array<{ name: string; ok: boolean; detail: string }> };
    assert.deepEqual(b.checks.map((c) => [c.name, c.ok]), [['docker', true], ['docker daemon', true], ['default image', true], ['claude', false], ['codex', false]]);
    assert.match(b.checks[3]!.detail, /^not in stashbase-sandbox:latest: stashbase agent docker build \(--agents-from npm where the installers cannot be reached\)$/);
    const v = await cli(['agent', 'validate', '--docker-sandbox', 'true'], { env: { ...t.env, STASHBASE_DOCKER_IMAGE: 'stashbase-test-missing:none' }, timeoutMs: 60_000 });
    assert.equal(v.code, 1);
    assert.match(v.stdout, /\n  FAIL image: stashbase-test-missing:none is not built: stashbase agent docker build/);
    // The image with both agents (test/agents-image.mjs, built before the suite).
    const AGENTS_IMAGE = 'stashbase-sandbox-agents-test:latest';
    const r = await cli(['agent', 'docker', 'doctor', '--json'], { env: { ...t.env, STASHBASE_DOCKER_IMAGE: AGENTS_IMAGE }, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const report = JSON.parse(r.stdout) as { ready: boolean; image: { ref: string; present: boolean; ageDays: number; agents: Record<string, string> } };
    assert.equal(report.ready, true);
    assert.equal(report.image.ref, AGENTS_IMAGE);
    assert.equal(typeof report.image.ageDays, 'number');
    assert.deepEqual(Object.keys(report.image.agents).sort(), ['claude', 'codex']);
  });

  test("the home volume's measuring container shares the engine's network namespace but can make no socket in it: a TCP connection to this host's loopback and, unlisted, netlink, an abstract socket and a socket pair are refused (EPERM); control: the same container without its seccomp profile connects", async () => {
    const server = createServer((c) => {
      c.on('error', () => {});
      c.end('hello\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    let accepted = 0;
    server.on('connection', () => accepted++);
    const script = [
      'import socket',
      'out = []',
      `for name, f in [("tcp", lambda: socket.create_connection(("127.0.0.1", ${port}), 5)), ("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)), ("abstract", lambda: socket.socket(socket.AF_UNIX).bind("\\0sbtest-${process.pid}")), ("pair", lambda: socket.socketpair())]:`,
      '    try:',
      '        f(); out.append(name + " made")',
      '    except OSError as e:',
      '        out.append(name + (" refused" if e.errno == 1 else " errno %d" % e.errno))',
      'print(" ".join(out))',
    ].join('\n');
    // The exact confinement stashbase gives du (its command, the profile file it writes), the program the attacker's.
    const size = volumeSizeCommand('docker', 'stashbase-sandbox:latest', 'stashbase-agent-home', `sbtest-measure-${process.pid}`, [], measureSeccompFile(t.sbHome)).args;
    const confined = [...size.slice(0, size.indexOf('--entrypoint')), '--entrypoint', 'python3', 'stashbase-sandbox:latest', '-c', script];
    const unconfined = confined.filter((a, i) => !a.startsWith('seccomp=') && confined[i + 1]?.startsWith('seccomp=') !== true);
    const run = (args: string[]) => new Promise<string>((resolve) => {
      const c = spawn('docker', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      c.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      c.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
      c.on('close', () => resolve(out));
    });
    try {
      assert.ok(confined.includes('host') && confined.some((a) => a.startsWith('seccomp=')), confined.join(' '));
      assert.equal(await run(confined), 'tcp refused netlink refused abstract refused pair refused\n');
      assert.equal(accepted, 0);
      assert.equal(await run(unconfined), 'tcp made netlink made abstract made pair made\n');
      assert.equal(accepted, 1, 'control: the host listener was reached');
    } finally {
      server.close();
    }
  });

  test("the agents' home volume: its size in agent docker status; a run that grows it past home_volume_warn is said, even when what it left is hidden behind chmod 000 (control: a run that shrinks it says nothing)", async () => {
    writeFile(join(t.sbHome, 'agents', 'homewarn.toml'), '[sandbox]\nbackend = "docker"\nhome_volume_warn = "1m"\n');
    const dir = `sbtest-hide-${process.pid}`;
    const run = (script: string) => cli(['agent', 'run', '--profile', 'homewarn', '--', 'sh', '-c', script], { env: t.env, cwd: proj, timeoutMs: 120_000 });
    const warning = /^warning: the agents' home volume stashbase-agent-home now holds [\d.]+ [KMG]?B, [\d.]+ MB more than after the last run, past home_volume_warn = "1m": look with stashbase agent docker shell \(du -sh ~\/\.\[!\.\]\* ~\/\*\), or start it afresh with docker volume rm stashbase-agent-home$/m;
    try {
      assert.equal((await run('true')).code, 0);
      const grow = await run(`mkdir ~/${dir} && head -c 3000000 /dev/urandom > ~/${dir}/blob && chmod 000 ~/${dir}`);
      assert.equal(grow.code, 0, grow.stderr);
      assert.match(grow.stderr, warning);
      const json = JSON.parse((await cli(['agent', 'docker', 'status', '--json'], { env: t.env })).stdout) as { homeVolume: { name: string; bytes: number } };
      assert.equal(json.homeVolume.name, 'stashbase-agent-home');
      assert.ok(json.homeVolume.bytes >= 3_000_000, String(json.homeVolume.bytes));
      assert.match((await cli(['agent', 'docker', 'status'], { env: t.env })).stdout, /^Agents' home volume stashbase-agent-home: [\d.]+ [KMG]B \(\d+ bytes\)$/m);
      const shrink = await run(`chmod 700 ~/${dir} && rm -r ~/${dir}`);
      assert.equal(shrink.code, 0, shrink.stderr);
      assert.doesNotMatch(shrink.stderr, /home volume/);
      // home_volume_warn = "0": never warned, so never measured: no measuring container at all, and the size kept is dropped
      // (control: the "1m" run's measuring container, made with its run).
      const madeSince = (since: number) => docker(['events', '--since', String(since), '--until', String(Math.floor(Date.now() / 1000) + 1), '--filter', 'event=create', '--format', '{{.Actor.Attributes.name}}']).split('\n');
      writeFile(join(t.sbHome, 'agents', 'nowarn.toml'), '[sandbox]\nbackend = "docker"\nhome_volume_warn = "0"\n');
      let since = Math.floor(Date.now() / 1000) - 1;
      const control = await run('true');
      assert.ok(madeSince(since).includes(`stashbase-agent-run-${sessionOf(control.stderr)}-du`), 'control: measured');
      assert.ok(existsSync(join(t.sbHome, 'docker', 'home-volume.json')));
      since = Math.floor(Date.now() / 1000) - 1;
      const quiet = await cli(['agent', 'run', '--profile', 'nowarn', '--', 'sh', '-c', `mkdir ~/${dir} && head -c 3000000 /dev/urandom > ~/${dir}/blob`], { env: t.env, cwd: proj, timeoutMs: 120_000 });
      assert.equal(quiet.code, 0, quiet.stderr);
      assert.doesNotMatch(quiet.stderr, /home volume/);
      // Its own containers only: other tests' runs make theirs meanwhile.
      const made = madeSince(since);
      const session = sessionOf(quiet.stderr);
      assert.ok(made.includes(`stashbase-agent-run-${session}-agent`), made.join(','));
      assert.ok(!made.includes(`stashbase-agent-run-${session}-du`), made.join(','));
      assert.equal(existsSync(join(t.sbHome, 'docker', 'home-volume.json')), false);
    } finally {
      await run(`chmod -R u+rwx ~/${dir} 2>/dev/null; rm -rf ~/${dir}`);
    }
  });

  test('agent docker build: builds the embedded Dockerfile (labels, packages, PATH order), then reports it is built', async () => {
    const tag = `stashbase-test-build-${process.pid}:latest`;
    const env = { ...t.env, STASHBASE_DOCKER_IMAGE: tag, STASHBASE_SANDBOX_BASE_IMAGE: 'stashbase-test-base:latest', STASHBASE_SANDBOX_INSTALL_AGENTS: '0' };
    try {
      const b = await cli(['agent', 'docker', 'build'], { env, timeoutMs: 600_000 });
      assert.equal(b.code, 0, b.stderr);
      assert.equal(b.stdout, `Built ${tag}.\n`);
      const labels = JSON.parse(docker(['image', 'inspect', '--format', '{{json .Config.Labels}}', tag])) as Record<string, string>;
      assert.match(labels['stashbase.built'] ?? '', /^\d{4}-\d\d-\d\dT/);
      assert.match(labels['stashbase.dockerfile-sha256'] ?? '', /^[0-9a-f]{64}$/);
      const inside = docker(['run', '--rm', '--network', 'none', tag, 'bash', '-c', 'for t in git curl jq gh bwrap iptables dig unzip less ps python3 pip3; do command -v $t >/dev/null || echo missing $t; done; ls /usr/lib/python3*/EXTERNALLY-MANAGED 2>/dev/null; echo "$PATH|$HOME|$NPM_CONFIG_PREFIX|$DISABLE_AUTOUPDATER"']);
      assert.equal(inside, '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/home/agent/.npm-global/bin:/home/agent/.local/bin|/home/agent|/home/agent/.npm-global|1\n');
      const again = await cli(['agent', 'docker', 'build'], { env, timeoutMs: 60_000 });
      assert.equal(again.stdout, `${tag} is already built (0 days old); --force rebuilds it.\n`);
    } finally {
      spawnSync('docker', ['image', 'rm', '-f', tag]);
    }
  });

  test("a profile's Dockerfile is built only once trusted (even a global profile's), and tagged by its content; it runs with the same hardening; an image reference has nothing to build", async () => {
    const file = writeFile(join(proj, 'sandbox.Dockerfile'), 'FROM stashbase-test-base:latest\nRUN echo custom > /etc/custom-marker\n');
    writeFile(join(t.sbHome, 'agents', 'custom.toml'), '[sandbox]\nbackend = "docker"\ndockerfile = "./sandbox.Dockerfile"\n');
    writeFile(join(t.sbHome, 'agents', 'ref.toml'), '[sandbox]\nbackend = "docker"\nimage = "example.invalid/some/image:1"\n');
    let tag = '';
    try {
      const untrusted = await cli(['agent', 'run', '--profile', 'custom', '--', 'true'], { env: t.env, cwd: proj, timeoutMs: 120_000 });
      assert.deepEqual([untrusted.code, untrusted.stderr.split('\n').filter((l) => l.startsWith('stashbase:'))], [3, [`stashbase: the Dockerfile ${file} has not been trusted yet (a build runs its steps as root); nothing was built or run. Review it and what it copies, then trust it with: stashbase agent trust --dockerfile ${file} --profile custom`]]);
      const trusted = await cli(['agent', 'trust', '--dockerfile', file, '--profile', 'custom'], { env: t.env, cwd: proj });
      assert.match(trusted.stdout, new RegExp(`^Trusted: the build of ${file.replace(/[.]/g, '\\.')} \\(stashbase-dockerfile:[0-9a-f]{32}\\)\n$`));
      const r = await cli(['agent', 'run', '--profile', 'custom', '--', 'sh', '-c', 'cat /etc/custom-marker; grep CapEff /proc/self/status; grep NoNewPrivs /proc/self/status'], { env: t.env, cwd: proj, timeoutMs: 300_000 });
      assert.equal(r.code, 0, r.stderr);
      tag = /Building .* as (stashbase-dockerfile:[0-9a-f]{32}) \(no network\)/.exec(r.stderr)?.[1] ?? '';
      assert.ok(tag, r.stderr);
      assert.equal(r.stdout, 'custom\nCapEff:\t0000000000000000\nNoNewPrivs:\t1\n');
      const built = await cli(['agent', 'docker', 'build', '--profile', 'custom'], { env: t.env, cwd: proj, timeoutMs: 60_000 });
      assert.equal(built.stdout, `${tag} is already built (0 days old); --force rebuilds it.\n`);
      const ref = await cli(['agent', 'docker', 'build', '--profile', 'ref'], { env: t.env, cwd: proj });
      assert.equal(ref.stdout, 'Profile ref runs the image example.invalid/some/image:1: nothing to build (docker run pulls it when it is missing).\n');
    } finally {
      if (tag) spawnSync('docker', ['image', 'rm', '-f', tag]);
    }
  });

  test("a profile's Dockerfile build: no network, no deny_read file, its inputs read-only during runs (native and Docker), an edited input a new image; control: docker build of the same folder", async () => {
    const dir = join(proj, 'sandbox');
    writeFile(join(dir, 'Dockerfile'), 'FROM stashbase-test-base:latest\nCOPY . /ctx/\nRUN ls /sys/class/net > /etc/build-net\n');
    writeFile(join(dir, '.env'), 'TOKEN=real-secret\n');
    writeFile(join(dir, 'tool.sh'), 'echo tool v1\n');
    // (Review, round 29) A name anyone who wrote the folder chose (an agent's run), shown escaped: a retitle, conceal, and a forged line.
    assert.equal(spawnSync('mkfifo', [join(dir, 'p\x1b]0;owned\x07\x1b[8m\nstashbase: reviewed, safe to answer y')]).status, 0);
    const profile = (backend: string) => `[sandbox]\nbackend = "${backend}"\ndockerfile = "./sandbox/Dockerfile"\n[filesystem]\ndeny_read = ["**/.env"]\n`;
    writeFile(join(t.sbHome, 'agents', 'built.toml'), profile('docker'));
    writeFile(join(t.sbHome, 'agents', 'built-native.toml'), profile('native'));
    const control = `stashbase-test-control-${process.pid}:latest`;
    const tags: string[] = [control];
    const trust = async () => assert.equal((await cli(['agent', 'trust', '--dockerfile', join(dir, 'Dockerfile'), '--profile', 'built'], { env: t.env, cwd: proj })).code, 0);
    const attack = 'cat /etc/build-net; ls -A /ctx; cat /ctx/.env || echo no-env; for f in sandbox/tool.sh sandbox/Dockerfile sandbox/new.sh; do echo evil >> $f && echo "wrote $f"; done; true';
    try {
      // Control: Docker's own build of the folder has the network and copies .env.
      docker(['build', '--quiet', '--tag', control, dir]);
      assert.equal(docker(['run', '--rm', '--network', 'none', control, 'sh', '-c', 'cat /etc/build-net /ctx/.env']), 'eth0\nlo\nTOKEN=real-secret\n');
      await trust();
      const r = await cli(['agent', 'run', '--profile', 'built', '--', 'sh', '-c', attack], { env: t.env, cwd: proj, timeoutMs: 300_000 });
      assert.equal(r.code, 0, r.stderr);
      tags.push(/Building .* as (stashbase-dockerfile:[0-9a-f]{32}) \(no network\)/.exec(r.stderr)?.[1] ?? '');
      assert.match(r.stderr, /^stashbase: left out of the build: \.env \(deny_read\)$/m);
      assert.match(r.stderr, /^stashbase: left out of the build: p\\x1b\]0;owned\\x07\\x1b\[8m\\x0astashbase: reviewed, safe to answer y \(not a regular file\)$/m);
      assert.doesNotMatch(r.stderr, /\x1b|^stashbase: reviewed/m);
      assert.equal(r.stdout, 'lo\nDockerfile\ntool.sh\nno-env\n');
      const native = await cli(['agent', 'run', '--profile', 'built-native', '--', 'sh', '-c', attack], { env: t.env, cwd: proj, timeoutMs: 60_000 });
      assert.equal(native.code, 0, native.stderr);
      assert.doesNotMatch(native.stdout, /wrote/);
      assert.equal(readFileSync(join(dir, 'tool.sh'), 'utf8'), 'echo tool v1\n');
      assert.equal(existsSync(join(dir, 'new.sh')), false);
      // An input edited (by you, or by any run of another profile): the next build waits for your trust, then builds a new image with it.
      writeFile(join(dir, 'tool.sh'), 'echo tool v2\n');
      const changed = await cli(['agent', 'run', '--profile', 'built', '--', 'true'], { env: t.env, cwd: proj, timeoutMs: 120_000 });
      assert.equal(changed.code, 3);
      assert.match(changed.stderr, /the Dockerfile \S+ or what it copies has changed since you trusted it/);
      await trust();
      const again = await cli(['agent', 'run', '--profile', 'built', '--', 'cat', '/ctx/tool.sh'], { env: t.env, cwd: proj, timeoutMs: 300_000 });
      assert.equal(again.code, 0, again.stderr);
      tags.push(/Building .* as (stashbase-dockerfile:[0-9a-f]{32})/.exec(again.stderr)?.[1] ?? '');
      assert.notEqual(tags[2], tags[1]);
      assert.equal(again.stdout, 'echo tool v2\n');
      // COPY . from the folder the agent writes cannot be kept read-only: refused.
      writeFile(join(t.sbHome, 'agents', 'whole.toml'), '[sandbox]\nbackend = "docker"\ndockerfile = "./Dockerfile.whole"\n');
      writeFile(join(proj, 'Dockerfile.whole'), 'FROM stashbase-test-base:latest\nCOPY . /src/\n');
      const whole = await cli(['agent', 'run', '--profile', 'whole', '--', 'true'], { env: t.env, cwd: proj, timeoutMs: 60_000 });
      assert.equal(whole.code, 2, whole.stderr);
      assert.match(whole.stderr, /copies .*proj, which holds the folder the agent writes .*nothing was run/);
    } finally {
      for (const tag of tags) if (tag) spawnSync('docker', ['image', 'rm', '-f', tag]);
      rmSync(dir, { recursive: true, force: true });
      rmSync(join(proj, 'Dockerfile.whole'), { force: true });
    }
  });

  test('--docker-image runs that image for this run (the holder stays the built-in one); an image over 14 days old gets a reminder', async () => {
    const r = await cli(['agent', 'run', '--silent', '--docker-image', 'stashbase-test-base:latest', '--', 'sh', '-c', 'test -e /etc/stashbase/agent-versions && echo default || echo other; grep CapEff /proc/self/status'], { env: t.env, cwd: proj, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'other\nCapEff:\t0000000000000000\n');
    const plan = JSON.parse((await cli(['agent', 'run', '--docker-image', 'stashbase-test-base:latest', '--dry-run', '--json', '--', 'true'], { env: t.env, cwd: proj })).stdout) as { steps: Array<{ id: string; args?: string[] }> };
    const holder = plan.steps.find((s) => s.id === 'holder')?.args ?? [];
    const agent = plan.steps.find((s) => s.id === 'agent')?.args ?? [];
    assert.equal(holder[holder.indexOf('--entrypoint') + 2], 'stashbase-sandbox:latest');
    assert.equal(agent[agent.length - 2], 'stashbase-test-base:latest');
    const old = `stashbase-test-old-${process.pid}:latest`;
    const ctx = join(t.dir, 'old-image');
    writeFile(join(ctx, 'Dockerfile'), 'FROM stashbase-sandbox:latest\n');
    docker(['build', '--quiet', '--label', 'stashbase.built=2020-01-01T00:00:00.000Z', '--tag', old, ctx]);
    try {
      const aged = await cli(['agent', 'run', '--docker-sandbox', 'true', '--', 'true'], { env: { ...t.env, STASHBASE_DOCKER_IMAGE: old }, cwd: proj, timeoutMs: 60_000 });
      assert.equal(aged.code, 0, aged.stderr);
      assert.match(aged.stderr, new RegExp(`^warning: the sandbox image ${old.replace(/[.:]/g, '\\$&')} is \\d{4} days old; for current agent CLIs run: stashbase agent docker build --force$`, 'm'));
    } finally {
      spawnSync('docker', ['image', 'rm', '-f', old]);
    }
  });

  test('agent docker shell: bash in the image with the home volume, as the run user', async () => {
    const r = await cli(['agent', 'docker', 'shell'], { env: t.env, input: 'id -u; pwd; echo "$HOME"; test -w "$HOME" && echo writable\n', timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `${process.getuid?.()}\n/home/agent\n/home/agent\nwritable\n`);
  });

  test("agent docker shell: no capabilities, and a program an agent planted in the home's bin folders does not answer to its name unless --trust-home (the control)", async () => {
    const name = `sbplanted${process.pid}`;
    const plant = await cli(['agent', 'docker', 'shell'], { env: t.env, input: `mkdir -p ~/.local/bin && printf '#!/bin/sh\necho PLANTED-RAN\n' > ~/.local/bin/${name} && chmod +x ~/.local/bin/${name}\n`, timeoutMs: 60_000 });
    assert.equal(plant.code, 0, plant.stderr);
    try {
      const r = await cli(['agent', 'docker', 'shell'], { env: t.env, input: `${name}; echo "rc=$?"; grep ^CapEff /proc/self/status\n`, timeoutMs: 60_000 });
      assert.match(r.stdout, /^rc=127$/m, r.stdout + r.stderr);
      assert.doesNotMatch(r.stdout, /PLANTED-RAN/);
      assert.match(r.stdout, /^CapEff:\s+0000000000000000$/m);
      const trusted = await cli(['agent', 'docker', 'shell', '--trust-home'], { env: t.env, input: `${name}\n`, timeoutMs: 60_000 });
      assert.match(trusted.stdout, /PLANTED-RAN/, 'with --trust-home, it is on PATH');
    } finally {
      await cli(['agent', 'docker', 'shell'], { env: t.env, input: `rm -f ~/.local/bin/${name}\n`, timeoutMs: 60_000 });
    }
  });

  test("(review, round 19) agent docker shell: a .pth file an agent left in the home's user site-packages does not run at python3 unless --trust-home (the control)", async () => {
    // The home volume is every Docker run's: the planted line speaks only where this test's variable is set (other tests'
    // runs beside it start python3 too).
    const probe = `SB_PTH_PROBE_${process.pid}`;
    const plant = await cli(['agent', 'docker', 'shell'], { env: t.env, input: `d=$(python3 -c 'import site; print(site.getusersitepackages())') && mkdir -p "$d" && echo 'import os, sys; os.environ.get("${probe}") and sys.stdout.write("PTH-RAN\\n")' > "$d/sbplanted.pth"\n`, timeoutMs: 60_000 });
    assert.equal(plant.code, 0, plant.stderr);
    try {
      const r = await cli(['agent', 'docker', 'shell'], { env: t.env, input: `${probe}=1 python3 -c "print(7*6)"\n`, timeoutMs: 60_000 });
      assert.equal(r.stdout, '42\n', r.stderr);
      const trusted = await cli(['agent', 'docker', 'shell', '--trust-home'], { env: t.env, input: `${probe}=1 python3 -c "print(7*6)"\n`, timeoutMs: 60_000 });
      assert.equal(trusted.stdout, 'PTH-RAN\n42\n', 'with --trust-home, it runs');
    } finally {
      await cli(['agent', 'docker', 'shell'], { env: t.env, input: `rm -f "$(python3 -c 'import site; print(site.getusersitepackages())')/sbplanted.pth"\n`, timeoutMs: 60_000 });
    }
  });

  test("agent docker shell, interactive (a terminal): an agent's ~/.bashrc in the home volume does not run there (the control: bash -i inside reads it)", async () => {
    const plant = await cli(['agent', 'docker', 'shell'], { env: t.env, input: 'echo "echo RAN-BASHRC-\\$((3+4))" >> ~/.bashrc\n', timeoutMs: 60_000 });
    assert.equal(plant.code, 0, plant.stderr);
    try {
      const typed = 'echo alive-$((1+1)); bash -ic "echo control-\\$((2+2))"; exit\n';
      const r = spawnSync('script', ['-qec', `${process.execPath} ${BIN} agent docker shell`, '/dev/null'], { env: t.env, input: typed, encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 0, r.stderr);
      const alive = r.stdout.indexOf('alive-2');
      const ran = r.stdout.indexOf('RAN-BASHRC-7');
      assert.ok(alive >= 0, r.stdout);
      assert.ok(ran > alive, `the plant ran only in the control, after the shell had started: ${JSON.stringify(r.stdout)}`);
      assert.equal(r.stdout.split('RAN-BASHRC-7').length, 2, 'once: the control');
      assert.match(r.stdout, /control-4/);
    } finally {
      await cli(['agent', 'docker', 'shell'], { env: t.env, input: "sed -i '/RAN-BASHRC/d' ~/.bashrc\n", timeoutMs: 60_000 });
    }
  });

  test('--dry-run --json: every docker command in order, teardown included, nothing run', async () => {
    const r = await cli(['agent', 'run', '--docker-sandbox', 'true', '--docker-isolated-paths', 'node_modules', '--dry-run', '--json', '--', 'claude'], { env: t.env, cwd: proj });
    assert.equal(r.code, 0, r.stderr);
    const plan = JSON.parse(r.stdout) as { steps: Array<{ type: string; id: string; file?: string; args?: string[]; env?: Record<string, string> }> };
    const cmds = plan.steps.filter((s) => s.type === 'command');
    assert.deepEqual([cmds[0]?.id, cmds[0]?.file], ['watchdog', '/bin/sh']);
    assert.deepEqual(cmds.slice(1).map((s) => `${s.id}:${s.args?.slice(0, 2).join(' ')}`), ['volume-measure:run -i', 'network:network create', 'gateway:network inspect', 'holder:run --name', 'volume-create:volume create', ...(process.getuid?.() === 0 ? [] : ['volume-own:run --rm']), 'agent:run --rm', 'teardown:rm --force', 'teardown:network rm']);
    assert.deepEqual(cmds.find((s) => s.id === 'agent')?.env, { HERDR_AGENT: 'claude' });
    const kept = JSON.parse((await cli(['agent', 'run', '--docker-sandbox', 'true', '--dry-run', '--json', '--', 'my-wrapper'], { env: { ...t.env, HERDR_AGENT: 'codex' }, cwd: proj })).stdout) as typeof plan;
    assert.deepEqual(kept.steps.find((s) => s.id === 'agent')?.env, {}, 'an exported HERDR_AGENT is kept, not replaced');
    assert.deepEqual(leftoversOf('ags_aaaaaaaaaaaaaaaa'), []);
  });
});

describe('Docker backend on a terminal (real pty, real engine)', needs('docker'), () => {
  const t = tempHome();
  const proj = join(t.dir, 'proj');
  before(() => mkdirSync(proj, { recursive: true }));
  after(() => t.cleanup());
  const pty = (timeline: string[], script: string, flags: string[] = []) => {
    // Your terminal's settings after the run, as the shell that ran it sees them; your PATH with the tree's bin first,
    // where an earlier run left an stty of its own (found in review: stashbase ran it as you to make your terminal raw).
    writeFile(join(proj, 'bin', 'stty'), `#!/bin/sh\necho "$*" >> ${JSON.stringify(join(proj, 'stty.planted'))}\nPATH=/usr/bin:/bin exec stty "$@"\n`);
    chmodSync(join(proj, 'bin', 'stty'), 0o755);
    rmSync(join(proj, 'stty.planted'), { force: true });
    const run = ['sh', '-c', 'PATH="$0/bin:$PATH"; stty -a | grep -o -- "-*opost\\|-*icanon\\|-*echo " | tr "\\n" " " > "$0/stty.before"; "$@"; s=$?; stty -a | grep -o -- "-*opost\\|-*icanon\\|-*echo " | tr "\\n" " " > "$0/stty.after"; exit $s', proj, process.execPath, BIN, 'agent', 'run', '--docker-sandbox', 'true', ...flags, '--', 'bash', '-c', script];
    const r = spawnSync('python3', [PTY, '--timeout', '60', ...timeline, '--', ...run], { env: { ...t.env, TERM: 'xterm-256color' }, cwd: proj, encoding: 'utf8' });
    return JSON.parse(r.stdout) as { output: string; exit: number | null };
  };

  test('a missing image in a terminal: asked first; no means nothing runs, yes builds it (Docker\'s progress shown) and runs', () => {
    const tag = `stashbase-test-offer-${process.pid}:latest`;
    const env = { ...t.env, STASHBASE_DOCKER_IMAGE: tag, STASHBASE_SANDBOX_BASE_IMAGE: 'stashbase-test-base:latest', STASHBASE_SANDBOX_INSTALL_AGENTS: '0' };
    const ask = (answer: string) => {
      const r = spawnSync('python3', [PTY, '--timeout', '300', '--at', '0', 'wait:[y/N]', '--at', '0.1', `send:${Buffer.from(answer + '\r').toString('hex')}`, '--', process.execPath, BIN, 'agent', 'run', '--docker-sandbox', 'true', '--', 'echo', 'agent-ran'], { env, cwd: proj, encoding: 'utf8' });
      return JSON.parse(r.stdout) as { output: string; exit: number | null };
    };
    try {
      const no = ask('n');
      assert.match(no.output, new RegExp(`The Docker sandbox image ${tag.replace(/[.:]/g, '\\$&')} is not built yet\\. Build it now \\(a few minutes\\)\\? \\[y/N\\]`));
      assert.equal(no.exit, 4);
      assert.doesNotMatch(no.output, /agent-ran/);
      const yes = ask('y');
      assert.equal(yes.exit, 0, yes.output);
      assert.match(yes.output, /Successfully tagged|naming to/);
      assert.match(yes.output, /agent-ran\r\n/);
    } finally {
      spawnSync('docker', ['image', 'rm', '-f', tag]);
    }
  });

  test('sealed on a terminal: stashbase killed with SIGKILL mid-run, the watchdog removes the container and sets your terminal back; control: a process that made the terminal raw and was killed leaves it raw', () => {
    for (const f of ['started', 'pid', 'stty.killed', 'stty.control', 'stty.getpass']) rmSync(join(proj, f), { force: true });
    const settings = 'stty -a | grep -o -- "-*opost\\|-*icanon\\|-*echo " | tr "\\n" " "';
    const wrapper = [
      `(while [ ! -e "$0/started" ]; do sleep 0.1; done; sleep 0.3; kill -9 "$(cat "$0/pid")") &`,
      'sh -c \'echo $$ > "$0/pid"; shift; exec "$@"\' "$0" - "$@"',
      `for i in $(seq 100); do stty -a | grep -q -- " icanon" && break; sleep 0.1; done; ${settings} > "$0/stty.killed"`,
      `node -e "process.stdin.setRawMode(true); process.kill(process.pid, 'SIGKILL')"; ${settings} > "$0/stty.control"; stty sane`,
      // Third review: a program that changed the terminal before the watchdog looks (its output processing back on,
      // the rest left raw): no longer exactly as stashbase made it, the watchdog leaves it so (read as "still raw",
      // -icanon, it was set back under the program).
      `rm -f "$0/started"; (while [ ! -e "$0/started" ]; do sleep 0.1; done; sleep 0.3; stty opost < /dev/tty; kill -9 "$(cat "$0/pid")") &`,
      'sh -c \'echo $$ > "$0/pid"; shift; exec "$@"\' "$0" - "$@"',
      `sleep 2; ${settings} > "$0/stty.getpass"; stty sane`,
    ].join('\n');
    const r = spawnSync('python3', [PTY, '--timeout', '60', '--', 'sh', '-c', wrapper, proj, process.execPath, BIN, 'agent', 'run', '--docker-sandbox', 'true', '--docker-network', 'sealed', '--', 'sh', '-c', 'touch started; sleep 30'], { env: { ...t.env, TERM: 'xterm-256color' }, cwd: proj, encoding: 'utf8' });
    const out = JSON.parse(r.stdout) as { output: string; exit: number | null };
    assert.equal(readFileSync(join(proj, 'stty.killed'), 'utf8'), 'opost icanon echo  ', out.output);
    assert.equal(readFileSync(join(proj, 'stty.control'), 'utf8'), 'opost -icanon -echo  ');
    assert.equal(readFileSync(join(proj, 'stty.getpass'), 'utf8'), 'opost -icanon -echo  ');
    assert.deepEqual(leftoversOf(sessionOf(out.output.replaceAll('\r\n', '\n'))), []);
  });

  test('sealed on a terminal that hangs up mid-run (a window closed, ssh dropped): the agent, ignoring it, is ended 10 s on, and stashbase exits as the run did, not in an abort whose core would hold the run\'s secrets; control: Node, hearing the hang-up and exiting, aborts', () => {
    const hangup = (cmd: string[]) => JSON.parse(spawnSync('python3', [PTY, '--timeout', '60', '--at', '0', 'wait:started', '--at', '0.3', 'hangup', '--', ...cmd], { env: { ...t.env, TERM: 'xterm-256color' }, cwd: proj, encoding: 'utf8' }).stdout) as { output: string; exit: number | null; signal: number | null };
    const r = hangup([process.execPath, BIN, 'agent', 'run', '--docker-sandbox', 'true', '--docker-network', 'sealed', '--', 'sh', '-c', 'trap "" HUP; echo started; sleep 60']);
    assert.deepEqual([r.exit, r.signal], [137, null], r.output);
    assert.deepEqual(leftoversOf(sessionOf(r.output.replaceAll('\r\n', '\n'))), []);
    const control = hangup([process.execPath, '-e', 'process.on("SIGHUP", () => {}); console.log("started"); setTimeout(() => {}, 1500)']);
    assert.deepEqual([control.exit, control.signal], [null, 6]);
    // Third review: stashbase not told of the hang-up (its session's leader takes the SIGHUP and ignores it), its first
    // write after the run fails with EIO: a native run, then a sealed one, end as their agents did, not in an abort;
    // control: Node writing to the hung-up terminal aborts.
    const leader = ['python3', '-c', 'import signal, subprocess, sys; signal.signal(signal.SIGHUP, signal.SIG_IGN); r = subprocess.call(sys.argv[1:]); sys.exit(r if r >= 0 else 128 - r)'];
    for (const backend of [['--backend', 'native'], ['--docker-sandbox', 'true', '--docker-network', 'sealed']]) {
      const quiet = hangup([...leader, process.execPath, BIN, 'agent', 'run', ...backend, '--', 'sh', '-c', 'echo started; trap "" HUP; sleep 2; exit 3']);
      assert.deepEqual([quiet.exit, quiet.signal], [3, null], `${backend.join(' ')}: ${quiet.output}`);
    }
    const written = hangup([...leader, process.execPath, '-e', 'console.log("started"); setTimeout(() => process.stderr.write("x"), 1500)']);
    assert.deepEqual([written.exit, written.signal], [134, null]);
  });

  for (const [mode, flags] of [['firewall', []], ['sealed: the terminal is the relay\'s, inside the container', ['--docker-network', 'sealed']]] as const) {
    test(`${mode}: a real tty inside with the window size, resizes follow; Ctrl+C reaches the agent and tears everything down; your terminal's line ends left to the agent's, and your terminal as it was after`, async () => {
      // An engine older than API 1.42 learns the size just after the start, as a resize: wait for it as a TUI would.
      const r = pty(['--size', '30', '100', '--at', '0', 'wait:ready', '--at', '0.5', 'resize:40:120', '--at', '1.5', 'send:03'], "tty; while [ \"$(stty size)\" = '0 0' ]; do sleep 0.05; done; stty size; echo \"term=$TERM\"; trap 'stty size' WINCH; trap 'echo got-INT; exit 43' INT; echo ready; while :; do sleep 0.1; done", [...flags]);
      // One \r a line: the terminal inside made the line ends, yours passed them as they came (no \r\r\n).
      assert.match(r.output, /\/dev\/pts\/\d+\r\n30 100\r\nterm=xterm-256color\r\nready\r\n/);
      assert.match(r.output, /\r\n40 120\r\n/);
      assert.match(r.output, /got-INT/);
      assert.doesNotMatch(r.output, /\r\r\n/);
      assert.equal(r.exit, 43);
      // Your terminal as it was: cooked, echoing, its line ends made again.
      const { readFileSync } = await import('node:fs');
      assert.equal(readFileSync(join(proj, 'stty.after'), 'utf8'), readFileSync(join(proj, 'stty.before'), 'utf8'));
      assert.equal(readFileSync(join(proj, 'stty.after'), 'utf8'), 'opost icanon echo  ');
      // The planted stty answered the shell (the control), never stashbase.
      assert.equal(readFileSync(join(proj, 'stty.planted'), 'utf8'), '-a\n-a\n');
      const session = sessionOf(r.output.replaceAll('\r\n', '\n'));
      assert.deepEqual(leftoversOf(session), []);
    });
  }
});
