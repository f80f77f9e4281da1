// The sealed network mode (docs/docker.md), with runc and under gVisor
// (runsc), attacked from inside a real agent container: it has no interface
// but loopback, and the relay (relay/supervise.go, the container's own process,
// the agent's parent) is its only way out, to the same proxy and policy. Every target is this
// host's own listener, its own abstract socket, or a container we made; each
// attack has its control: a plain container on Docker's bridge, or this host.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, cli, needs, tempHome, writeFile } from '../helpers.js';
import { bridgeGatewayOf, docker, leftoversOf, sessionOf } from '../docker-setup.js';

const ATTACK = String.raw`
import json, os, socket, subprocess, sys, time
bridge_ip, host_port, other_ip, abstract = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
out = {"interfaces": sorted(os.listdir("/sys/class/net"))}
def attempt(name, family, kind, addr, proto=0):
    try:
        s = socket.socket(family, kind, proto)
    except Exception as e:
        out[name] = "no socket: " + type(e).__name__
        return
    s.settimeout(3)
    try:
        if kind == socket.SOCK_DGRAM:
            s.sendto(b"exfil", addr)
            s.recvfrom(64)
            out[name] = "answered"
        else:
            s.connect(addr)
            out[name] = "open"
    except Exception as e:
        out[name] = "blocked: " + type(e).__name__
    finally:
        s.close()
attempt("tcp_host_bridge", socket.AF_INET, socket.SOCK_STREAM, (bridge_ip, host_port))
attempt("udp_host_bridge", socket.AF_INET, socket.SOCK_DGRAM, (bridge_ip, host_port))
attempt("tcp_other_container", socket.AF_INET, socket.SOCK_STREAM, (other_ip, 8000))
attempt("tcp6_mapped_host", socket.AF_INET6, socket.SOCK_STREAM, ("::ffff:" + bridge_ip, host_port))
attempt("raw_icmp", socket.AF_INET, socket.SOCK_RAW, (bridge_ip, 0), socket.IPPROTO_ICMP)
attempt("packet", 17, socket.SOCK_RAW, ("lo", 0))
attempt("vsock_host", 40, socket.SOCK_STREAM, (2, host_port))
# Unnamed in the issue: the host's abstract Unix sockets (containerd-shim's, CVE-2020-15257) live in the host's network namespace.
attempt("abstract_host", socket.AF_UNIX, socket.SOCK_STREAM, "\0" + abstract)
try:
    socket.getaddrinfo("exfil.stashbase-canary.invalid", 443)
    out["dns"] = "resolved"
except Exception as e:
    out["dns"] = "failed"
# The relay: the container's own process, the agent's parent, of the agent's user but not dumpable: the agent cannot read
# its environment or open its descriptors (its stream to stashbase) where the kernel honours that (runc). Killing it ends
# the run (a test of its own below); signal 0 says the agent may signal it.
relay = [p for p in os.listdir("/proc") if p.isdigit() and open("/proc/%s/cmdline" % p, "rb").read().startswith(b"/.stashbase-relay\0supervise\0")]
out["relay_found"] = len(relay)
out["relay_is_parent"] = relay == [str(os.getppid())]
def opened(path, mode):
    with open(path, mode):
        return "done"
for name, act in [("relay_signal", lambda p: os.kill(int(p), 0)), ("relay_environ", lambda p: open("/proc/%s/environ" % p, "rb").read()), ("relay_fds", lambda p: os.listdir("/proc/%s/fd" % p)), ("relay_out", lambda p: opened("/proc/%s/fd/1" % p, "wb")), ("relay_mem", lambda p: opened("/proc/%s/mem" % p, "rb").read(1))]:
    try:
        act(relay[0]); out[name] = "done"
    except Exception as e:
        out[name] = type(e).__name__
# The controls: a process of the agent's own, dumpable, is read and its descriptors opened.
own = subprocess.Popen(["sleep", "30"], stdout=subprocess.PIPE)
out["own_environ"] = "done" if open("/proc/%d/environ" % own.pid, "rb").read() is not None else "?"
out["own_out"] = opened("/proc/%d/fd/1" % own.pid, "wb")
own.kill(); own.wait()
s = socket.socket()
try:
    s.bind(("127.0.0.1", 3128)); out["relay_port_taken"] = "bound"
except Exception as e:
    out["relay_port_taken"] = type(e).__name__
s.close()
# The control of the kill: a process of the agent's own dies.
child = subprocess.Popen(["sleep", "30"]); os.kill(child.pid, 9); child.wait(); out["own_kill"] = child.returncode
# A second process through the relay meets the same proxy: no token, 407; a denied host, 403; an allowed one, through.
run = lambda args: subprocess.run(args, capture_output=True, text=True).stdout.strip()
out["no_token"] = run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--proxy", "http://127.0.0.1:3128", "http://denied.test/"])
out["denied"] = run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "http://denied.test/"])
out["allowed"] = run(["curl", "-sS", "http://allowed.test/"])
# A flood: 1500 connections at once, each with a byte sent (each one a stream toward stashbase), then the proxy still answers.
# The relay holds at most the run's limit of streams and 64 more; past it, a connection is closed at once.
flood = []
errors = 0
for i in range(1500):
    try:
        c = socket.create_connection(("127.0.0.1", 3128), timeout=5); c.send(b"G"); flood.append(c)
    except Exception as e:
        errors += 1
out["flood_tried"] = len(flood) + errors
time.sleep(1)
alive = 0
for c in flood:
    c.setblocking(False)
    try:
        if c.recv(1) == b"": continue
    except BlockingIOError:
        alive += 1
    except Exception:
        pass
out["flood_alive"] = alive
for c in flood: c.close()
# Once the flood's streams are gone (each close crosses the relay), the proxy answers again.
for i in range(20):
    out["after_flood"] = run(["curl", "-sS", "-m", "5", "http://allowed.test/"])
    if out["after_flood"] == "STUB-OK": break
    time.sleep(0.5)
out["after_flood_tries"] = i + 1
print("RESULT " + json.dumps(out))
`;

for (const mode of [{ name: 'sealed, runc', flags: ['--docker-network', 'sealed'] }, { name: 'sealed, runsc', flags: ['--docker-runtime', 'runsc'] }]) {
  describe(`Docker backend, ${mode.name}: no interface, the relay the only way out (real engine, attacked from inside)`, needs('docker'), () => {
    const t = tempHome();
    const proj = join(t.dir, 'proj');
    const other = `sbtest-sealed-${process.pid}-${mode.flags[1]}`;
    const abstract = `sbtest-abstract-${process.pid}-${mode.flags[1]}`;
    const hits = { tcp: 0, abstract: 0, stub: 0 };
    const gvisor = mode.flags[1] === 'runsc';
    let tcp: Server;
    let abs: Server;
    let stub: Server;
    let otherIp = '';
    let bridgeIp = '';

    before(async () => {
      mkdirSync(proj, { recursive: true });
      // Ours: a listener on every address of this host, an abstract socket in its network namespace, and the allowed host's stub.
      tcp = createServer((s) => (hits.tcp++, s.destroy()));
      await new Promise<void>((r) => tcp.listen(0, '0.0.0.0', r));
      abs = createServer((s) => (hits.abstract++, s.destroy()));
      await new Promise<void>((r) => abs.listen(`\0${abstract}`, r));
      stub = createServer((s) => {
        hits.stub++;
        s.on('error', () => {});
        s.once('data', () => s.end('HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nSTUB-OK\n'));
      });
      await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
      bridgeIp = bridgeGatewayOf((format) => docker(['network', 'inspect', 'bridge', '--format', format]));
      docker(['network', 'create', other]);
      docker(['run', '-d', '--name', other, '--network', other, 'stashbase-test-base:latest', 'python3', '-m', 'http.server', '8000']);
      otherIp = docker(['inspect', '--format', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', other]).trim();
      const port = (stub.address() as AddressInfo).port;
      writeFile(join(t.sbHome, 'agents', 'sealed.toml'), ['[sandbox]', 'backend = "docker"', '[network]', 'egress_hosts = ["allowed.test"]', '[network.hosts]', `"allowed.test" = "127.0.0.1:${port}"`].join('\n') + '\n');
      writeFile(join(proj, 'attack.py'), ATTACK);
    });
    after(() => {
      tcp?.close();
      abs?.close();
      stub?.close();
      spawnSync('docker', ['rm', '-f', other]);
      spawnSync('docker', ['network', 'rm', other]);
      t.cleanup();
    });

    test('only loopback; the host, another container, raw and packet sockets, vsock, DNS and the host\'s abstract socket unreachable; the relay out of reach; a second process and a flood meet the same proxy; control: a container on Docker\'s bridge reaches the host and the other container, this host its abstract socket', { timeout: 180_000 }, async () => {
      const port = (tcp.address() as AddressInfo).port;
      const stubPort = (stub.address() as AddressInfo).port;
      const r = await cli(['agent', 'run', '--profile', 'sealed', ...mode.flags, '--', 'python3', 'attack.py', bridgeIp, String(port), otherIp, abstract], { env: t.env, cwd: proj, timeoutMs: 150_000 });
      assert.equal(r.code, 0, r.stderr);
      const line = r.stdout.split('\n').find((l) => l.startsWith('RESULT '));
      assert.ok(line, r.stdout + r.stderr);
      const out = JSON.parse(line.slice(7)) as Record<string, unknown>;
      assert.deepEqual(out.interfaces, ['lo']);
      for (const k of ['tcp_host_bridge', 'udp_host_bridge', 'tcp_other_container', 'tcp6_mapped_host', 'raw_icmp', 'packet', 'vsock_host', 'abstract_host']) {
        assert.match(String(out[k]), /^(blocked|no socket): /, `${k}: ${String(out[k])}`);
      }
      assert.equal(out.dns, 'failed');
      assert.equal(hits.tcp, 0, 'nothing reached the host listener');
      assert.equal(hits.abstract, 0, 'nothing reached the abstract socket');
      assert.equal(out.relay_found, 1);
      assert.equal(out.relay_is_parent, true);
      assert.deepEqual([out.relay_signal, out.relay_port_taken, out.own_kill], ['done', 'OSError', -9]);
      assert.deepEqual([out.no_token, out.denied, out.allowed], ['407', '403', 'STUB-OK']);
      assert.equal(out.flood_tried, 1500);
      // Still open after it: no more than the proxy's connection limit (512) and the relay's room (64).
      assert.ok(Number(out.flood_alive) >= 1 && Number(out.flood_alive) <= 576, `alive: ${String(out.flood_alive)}`);
      assert.equal(out.after_flood, 'STUB-OK');
      // Under runc the relay, not dumpable, keeps its environment, memory and stream from the agent (which, root in
      // these tests, may list its descriptors, not open them). gVisor honours that for its memory alone, not for its
      // environment (the container's: nothing the agent lacks) or its descriptors: there the agent can write into the
      // relay's stream, which stashbase reads as hostile (the test below). The controls: its own process's are read
      // and opened.
      assert.deepEqual([out.relay_environ, out.relay_fds, out.relay_out, out.relay_mem], gvisor ? ['done', 'done', 'done', 'PermissionError'] : ['PermissionError', 'done', 'PermissionError', 'PermissionError']);
      assert.deepEqual([out.own_environ, out.own_out], ['done', 'done']);
      assert.deepEqual(leftoversOf(sessionOf(r.stderr)), []);
      // The controls: a plain container on Docker's bridge reaches this host's listener and the other container; this host reaches its abstract socket.
      const ctl = spawnSync('docker', ['run', '--rm', '-v', `${proj}:/p:ro`, 'stashbase-test-base:latest', 'python3', '-c',
        `import socket\nfor a in [("${bridgeIp}", ${port}), ("${otherIp}", 8000)]:\n  socket.create_connection(a, timeout=5).close(); print("open")`], { encoding: 'utf8' });
      assert.equal(ctl.stdout, 'open\n', ctl.stderr);
      // (The other container is on its own network: the control joins it.)
      const ctl2 = spawnSync('docker', ['run', '--rm', '--network', other, 'stashbase-test-base:latest', 'python3', '-c', `import socket; socket.create_connection(("${otherIp}", 8000), timeout=5).close(); print("open")`], { encoding: 'utf8' });
      assert.equal(ctl2.stdout, 'open\n', ctl2.stderr);
      const { connect } = await import('node:net');
      await new Promise<void>((resolve, reject) => connect(`\0${abstract}`).on('connect', () => resolve()).on('error', reject));
      assert.ok(stubPort > 0);
    });

    /** A run whose agent waits for `go` in its folder (after writing `started`), then runs `then`; the run's child, stderr and exit. */
    const waitingRun = async (then: string) => {
      const { existsSync } = await import('node:fs');
      const script = ['curl -sS http://allowed.test/ > before.txt', 'touch started', 'while [ ! -e go ]; do sleep 0.05; done', then, 'sleep 60', 'touch late'].join('\n');
      for (const f of ['before.txt', 'started', 'go', 'late']) spawnSync('rm', ['-f', join(proj, f)]);
      const child = spawn(process.execPath, [BIN, 'agent', 'run', '--profile', 'sealed', ...mode.flags, '--', 'sh', '-c', script], { env: t.env, cwd: proj, stdio: ['ignore', 'pipe', 'pipe'] });
      const run = { child, err: '', exit: new Promise<number | null>((r) => child.on('exit', (code) => r(code))) };
      child.stderr.setEncoding('utf8').on('data', (d: string) => (run.err += d));
      for (let i = 0; i < 600 && !existsSync(join(proj, 'started')); i++) await new Promise((r) => setTimeout(r, 50));
      assert.ok(existsSync(join(proj, 'started')), run.err);
      return run;
    };
    /** The run ended within `ms` of `since`, and the agent with it (it never got to `late`); nothing of it is left. */
    const endedAtOnce = async (run: Awaited<ReturnType<typeof waitingRun>>, since: number, ms: number) => {
      const { existsSync, readFileSync } = await import('node:fs');
      const code = await run.exit;
      assert.ok(Date.now() - since < ms, `ended in ${Date.now() - since} ms`);
      assert.equal(readFileSync(join(proj, 'before.txt'), 'utf8'), 'STUB-OK\n');
      assert.equal(existsSync(join(proj, 'late')), false);
      assert.deepEqual(leftoversOf(sessionOf(run.err)), []);
      return code;
    };

    test("the container's stream cut mid-run (this side: its docker client killed): the agent's container ends with it at once, and the run ends cleanly", { timeout: 120_000 }, async () => {
      const run = await waitingRun('true');
      const client = spawnSync('pgrep', ['-P', String(run.child.pid), '-f', `run --rm --name stashbase-agent-run-${sessionOf(run.err)}-agent`], { encoding: 'utf8' }).stdout.trim();
      assert.match(client, /^\d+$/, run.err);
      const since = Date.now();
      process.kill(Number(client), 'SIGKILL');
      // The client's status: killed.
      assert.equal(await endedAtOnce(run, since, 15_000), 137, run.err);
    });

    test('the agent kills its relay: its run ends at once, the agent with it (the container ends with its process), nothing left; control: it kills a process of its own and goes on (the attack above)', { timeout: 120_000 }, async () => {
      const run = await waitingRun('kill -9 $PPID');
      const since = Date.now();
      writeFile(join(proj, 'go'), '');
      assert.equal(await endedAtOnce(run, since, 15_000), 137, run.err);
    });

    // Unlisted (found building this, and in review): the relay's stream is open to the agent where a process holding it
    // is its to open: the container's init (docker-init, its pid 1, dumpable, of the agent's user) on both runtimes, the
    // relay itself under gVisor. What it writes there is read as hostile: a frame out of order ends the run, said.
    test("the agent writes garbage into its container's stream through /proc (pid 1's descriptors): stashbase ends the run at once and says why, nothing left; control: a process of its own is written to", { timeout: 120_000 }, async () => {
      const run = await waitingRun(`sleep 30 & q=$!; echo x > /proc/$q/fd/1 && echo own > own; kill $q; printf '\\377\\377\\377\\377\\377\\377\\377\\377\\377' > /proc/1/fd/1`);
      const since = Date.now();
      writeFile(join(proj, 'go'), '');
      const { existsSync } = await import('node:fs');
      assert.equal(await endedAtOnce(run, since, 15_000), 137, run.err);
      assert.match(run.err, /the sealed network's relay was ended \(a frame of unknown type 255\): the agent's container is removed/);
      assert.equal(existsSync(join(proj, 'own')), true);
    });

    test('your output failing mid-run (its reader gone, as `| head -1`): the run ends, torn down and checked as any other, not stashbase with it', { timeout: 120_000 }, async () => {
      const { existsSync, readFileSync } = await import('node:fs');
      rmSync(join(proj, 'evil'), { recursive: true, force: true });
      // A repository the agent makes in the tree, its hook planted: the end-of-run check unplugs it (it ran).
      const script = 'git init -q evil && printf "#!/bin/sh\\necho pwned\\n" > evil/.git/hooks/post-checkout && chmod +x evil/.git/hooks/post-checkout; echo first; sleep 1; yes | head -c 3000000; sleep 30; touch late';
      const child = spawn(process.execPath, [BIN, 'agent', 'run', '--profile', 'sealed', ...mode.flags, '--', 'sh', '-c', script], { env: t.env, cwd: proj, stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
      const exit = new Promise<[number | null, string | null]>((r) => child.on('exit', (code, sig) => r([code, sig])));
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      // The reader goes: the next write of stashbase's fails (EPIPE).
      child.stdout.destroy();
      const [code, signal] = await exit;
      assert.deepEqual([code, signal], [137, null], err);
      assert.equal(existsSync(join(proj, 'late')), false);
      const session = sessionOf(err);
      assert.deepEqual(leftoversOf(session), []);
      assert.equal(existsSync(join(t.sbHome, 'sessions', `${session}.json`)), false, 'the session record removed');
      const audit = readFileSync(join(t.sbHome, 'audit', `${session}.jsonl`), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type: string; rule?: string; exitCode?: number });
      assert.match(audit.find((e) => e.type === 'relay')?.rule ?? '', /your terminal or pipe took no more of the agent's output \(EPIPE\)/);
      assert.equal(audit.at(-1)?.type, 'end');
      assert.equal(existsSync(join(proj, 'evil', '.git')), false, 'the check ran: the planted repository unplugged');
      rmSync(join(proj, 'evil'), { recursive: true, force: true });
      rmSync(join(proj, 'evil.git.stashbase-quarantine'), { recursive: true, force: true });
    });

    test('the agent\'s output all comes through however slowly you read it (found in review: a tail waiting for your reader was dropped half a second after the agent ended); control: the same count written', { timeout: 120_000 }, async () => {
      const child = spawn(process.execPath, [BIN, 'agent', 'run', '--silent', '--profile', 'sealed', ...mode.flags, '--', 'sh', '-c', 'head -c 400000 /dev/zero'], { env: t.env, cwd: proj, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.pause();
      const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      await new Promise((r) => setTimeout(r, 4000));
      let n = 0;
      child.stdout.on('data', (b: Buffer) => (n += b.length));
      child.stdout.resume();
      await new Promise<void>((r) => child.stdout.on('end', () => r()));
      assert.equal(await exit, 0);
      assert.equal(n, 400000);
    });

    test('(second review) a process the agent leaves writing its output after it ends does not keep the run alive: read half a second more, then the run ends; control: what the agent wrote before it ended all arrives', { timeout: 120_000 }, async () => {
      const since = Date.now();
      const r = await cli(['agent', 'run', '--silent', '--profile', 'sealed', ...mode.flags, '--', 'sh', '-c', 'head -c 100000 /dev/zero | tr "\\0" a; echo; (setsid yes >&1 2>/dev/null &); exit 0'], { env: t.env, cwd: proj, timeoutMs: 60_000 });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(Date.now() - since < 20_000, `ended in ${Date.now() - since} ms`);
      assert.equal(r.stdout.slice(0, 100001), `${'a'.repeat(100000)}\n`);
    });

    test('a signal that ends runs, to a run whose agent stopped its relay (your Ctrl+C, a byte, would never reach it): its container is removed 10 s on, the run ends; control: before then it still runs', { timeout: 120_000 }, async () => {
      const run = await waitingRun('kill -STOP $PPID');
      writeFile(join(proj, 'go'), '');
      await new Promise((r) => setTimeout(r, 1500));
      const since = Date.now();
      run.child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 5000));
      assert.equal(run.child.exitCode, null, 'still running 5 s after the signal');
      const code = await run.exit;
      assert.ok(Date.now() - since >= 9_000 && Date.now() - since < 25_000, `ended ${Date.now() - since} ms after the signal`);
      assert.equal(code, 137, run.err);
      assert.deepEqual(leftoversOf(sessionOf(run.err)), []);
    });

    test('SIGKILL of stashbase: its watchdog removes the sealed container; with the watchdog killed too, the container ends with its stream; one whose docker client is stopped stays, status shows it orphaned and cleanup removes it', { timeout: 120_000 }, async () => {
      const startRun = async () => {
        const child = spawn(process.execPath, [BIN, 'agent', 'run', '--profile', 'sealed', ...mode.flags, '--', 'sleep', '120'], { env: t.env, cwd: proj, stdio: ['ignore', 'pipe', 'pipe'] });
        let err = '';
        child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
        const exit = new Promise<void>((r) => child.on('exit', () => r()));
        for (let i = 0; i < 300 && !/Agent session: /.test(err); i++) await new Promise((r) => setTimeout(r, 50));
        const session = sessionOf(err);
        for (let i = 0; i < 600; i++) {
          if (docker(['ps', '--filter', `name=stashbase-agent-run-${session}-agent`, '--format', '{{.State}}']).trim() === 'running') break;
          await new Promise((r) => setTimeout(r, 50));
        }
        const pid = (f: string) => spawnSync('pgrep', ['-P', String(child.pid), '-f', f], { encoding: 'utf8' }).stdout.trim();
        return { child, session, exit, watchdog: pid('read -r line'), client: pid(`run --rm --name stashbase-agent-run-${session}-agent`) };
      };
      const gone = async (session: string) => {
        for (let i = 0; i < 200 && leftoversOf(session).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
        return leftoversOf(session);
      };
      const a = await startRun();
      a.child.kill('SIGKILL');
      await a.exit;
      assert.deepEqual(await gone(a.session), [], 'the watchdog removed it');
      const b = await startRun();
      assert.match(b.watchdog, /^\d+$/);
      process.kill(Number(b.watchdog), 'SIGKILL');
      b.child.kill('SIGKILL');
      await b.exit;
      // Its docker client's input (stashbase's pipe) ended: so did the container's, and the relay, its process, ended it.
      assert.deepEqual(await gone(b.session), [], 'the container ended with its stream');
      // A docker client stopped before stashbase and its watchdog are killed keeps the container's stream open: an orphan.
      const c = await startRun();
      assert.match(c.client, /^\d+$/);
      process.kill(Number(c.client), 'SIGSTOP');
      try {
        process.kill(Number(c.watchdog), 'SIGKILL');
        c.child.kill('SIGKILL');
        await c.exit;
        // The home volume's measurement ends with stashbase's end of input, unmeasured; only the orphaned agent stays.
        for (let i = 0; i < 100 && leftoversOf(c.session).includes(`stashbase-agent-run-${c.session}-du`); i++) await new Promise((r) => setTimeout(r, 100));
        assert.deepEqual(leftoversOf(c.session), [`stashbase-agent-run-${c.session}-agent`]);
        const status = JSON.parse((await cli(['agent', 'docker', 'status', '--json'], { env: t.env })).stdout) as { runs: Array<{ session: string; orphaned: boolean; containers: string[] }> };
        assert.deepEqual(status.runs.filter((r) => r.session === c.session).map((r) => [r.orphaned, r.containers]), [[true, [`stashbase-agent-run-${c.session}-agent`]]]);
        const clean = await cli(['agent', 'docker', 'cleanup', '--yes'], { env: t.env, timeoutMs: 60_000 });
        assert.equal(clean.code, 0, clean.stderr);
        assert.deepEqual(leftoversOf(c.session), []);
      } finally {
        process.kill(Number(c.client), 'SIGKILL');
      }
    });

    test('a worktree run: the agent commits in its sealed container, and the commit comes back as its branch', { timeout: 120_000 }, async () => {
      const repo = join(t.dir, 'repo');
      mkdirSync(repo, { recursive: true });
      const git = (...a: string[]) => spawnSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', ...a], { encoding: 'utf8' });
      writeFile(join(repo, 'a'), 'a\n');
      git('init', '-q');
      git('add', 'a');
      git('commit', '-qm', 'init');
      const r = await cli(['agent', 'run', '--silent', '--worktree', '--profile', 'sealed', ...mode.flags, '--', 'sh', '-c', 'echo b > b && git add b && git -c user.name=t -c user.email=t@t commit -qm "from the sealed run"'], { env: t.env, cwd: repo, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr);
      const branch = git('branch', '--list', 'stashbase/*', '--format', '%(refname:short)').stdout.trim();
      assert.match(branch, /^stashbase\//);
      assert.equal(git('log', '-1', '--format=%s', branch).stdout.trim(), 'from the sealed run');
      assert.equal(git('status', '--porcelain').stdout, '', 'nothing landed in your checkout');
    });

    test(mode.flags[1] === 'runsc' ? "the agent's kernel is gVisor's (control: the same sealed run under runc has this host's)" : 'the agent\'s kernel is this host\'s under runc (the runsc run above has gVisor\'s)', async () => {
      const r = await cli(['agent', 'run', '--silent', '--profile', 'sealed', ...mode.flags, '--', 'uname', '-r'], { env: t.env, cwd: proj, timeoutMs: 90_000 });
      assert.equal(r.code, 0, r.stderr);
      const host = spawnSync('uname', ['-r'], { encoding: 'utf8' }).stdout;
      if (mode.flags[1] === 'runsc') {
        assert.equal(r.stdout, '4.4.0\n');
        assert.notEqual(host, '4.4.0\n');
      } else assert.equal(r.stdout, host);
    });
  });
}

describe('Docker backend: runtimes (real engine)', needs('docker'), () => {
  const t = tempHome();
  after(() => t.cleanup());

  test('an image with nothing but one static program (no shell, no libc, no /etc): the relay and its gate need nothing of it, and the program reaches an allowed host through the proxy; a denied one is refused', needs('go'), async () => {
    const src = join(t.dir, 'probe');
    mkdirSync(src, { recursive: true });
    writeFile(join(src, 'go.mod'), 'module probe\n\ngo 1.19\n');
    writeFile(join(src, 'main.go'), 'package main\n\nimport (\n\t"fmt"\n\t"io"\n\t"net/http"\n\t"os"\n)\n\nfunc main() {\n\tfor _, u := range os.Args[1:] {\n\t\tr, err := http.Get(u)\n\t\tif err != nil {\n\t\t\tfmt.Println("error", err)\n\t\t\tcontinue\n\t\t}\n\t\tb, _ := io.ReadAll(r.Body)\n\t\tfmt.Printf("%d %s", r.StatusCode, b)\n\t}\n}\n');
    const built = spawnSync('go', ['build', '-o', join(src, 'out', 'probe'), '.'], { cwd: src, env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=mod', GOPROXY: 'off' }, encoding: 'utf8' });
    assert.equal(built.status, 0, built.stderr);
    const image = `sbtest-distroless:${process.pid}`;
    const tar = spawnSync('tar', ['-C', join(src, 'out'), '-cf', join(src, 'probe.tar'), 'probe']);
    assert.equal(tar.status, 0);
    docker(['import', '--change', 'ENTRYPOINT ["/probe"]', join(src, 'probe.tar'), image]);
    try {
      const stub = createServer((s) => s.once('data', () => s.end('HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nSTUB-OK\n')));
      await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
      writeFile(join(t.sbHome, 'agents', 'bare.toml'), ['[sandbox]', 'backend = "docker"', `image = "${image}"`, 'network = "sealed"', '[network]', 'egress_hosts = ["allowed.test"]', '[network.hosts]', `"allowed.test" = "127.0.0.1:${(stub.address() as AddressInfo).port}"`].join('\n') + '\n');
      const proj = join(t.dir, 'bare-proj');
      mkdirSync(proj, { recursive: true });
      // The image's ENTRYPOINT (/probe) runs after the gate, with the command as its arguments.
      const r = await cli(['agent', 'run', '--silent', '--profile', 'bare', '--', 'http://allowed.test/', 'http://denied.test/'], { env: t.env, cwd: proj, timeoutMs: 90_000 });
      stub.close();
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^200 STUB-OK\n403 /);
    } finally {
      spawnSync('docker', ['rmi', '-f', image]);
    }
  });

  test("doctor names the engine's runtimes, runsc with --oci-seccomp, and the relay built for the engine; a runtime the engine lacks fails the run closed, with the fix; a runtime not runc's refuses the firewall", async () => {
    const doc = JSON.parse((await cli(['agent', 'docker', 'doctor', '--json'], { env: t.env, timeoutMs: 60_000 })).stdout) as { notes: Array<{ name: string; detail: string }> };
    const note = (n: string) => doc.notes.find((x) => x.name === n)?.detail ?? '';
    assert.match(note('runtimes'), /\brunsc\b/);
    assert.equal(note('runsc'), 'gVisor, with --oci-seccomp: runtime = "runsc" runs sealed under it');
    assert.match(note('sealed relay'), /^built for linux-(amd64|arm64) \(.*dist\/relay\/linux-(amd64|arm64)\/stashbase-relay\)$/);
    const proj = join(t.dir, 'proj');
    mkdirSync(proj, { recursive: true });
    const missing = await cli(['agent', 'run', '--docker-sandbox', 'true', '--docker-runtime', 'nosuch', '--', 'touch', 'ran'], { env: t.env, cwd: proj, timeoutMs: 60_000 });
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /the Docker engine has no runtime "nosuch" \(it has [^)]*runsc[^)]*\): register it in \/etc\/docker\/daemon\.json and reload dockerd, or run without it; nothing was run/);
    const firewall = await cli(['agent', 'run', '--docker-sandbox', 'true', '--docker-runtime', 'runsc', '--docker-network', 'firewall', '--', 'touch', 'ran'], { env: t.env, cwd: proj, timeoutMs: 60_000 });
    assert.notEqual(firewall.code, 0);
    assert.match(firewall.stderr, /the runtime runsc cannot be confined by the firewall holder/);
    const { existsSync } = await import('node:fs');
    assert.equal(existsSync(join(proj, 'ran')), false);
  });
});
