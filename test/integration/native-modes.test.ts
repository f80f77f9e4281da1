// The native backend's other modes: an unprivileged user (bwrap in a user
// namespace), the weaker host-network mode, and the 200,000-entry walk limit.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, cli, descendsFrom, needs, needsRoot, processesWhere, tempHome, writeFile } from '../helpers.js';

describe('native modes (real bwrap)', needs('bwrap'), () => {
  const t = tempHome();
  let server: Server;
  let port = 0;
  before(async () => {
    server = createServer((_q, r) => r.end('LOCAL-OK\n'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.close();
    t.cleanup();
  });

  test('an unprivileged user gets the same sandbox (bwrap in a user namespace)', needsRoot('it runs the agent as nobody (unprivileged runs: every other test covers them)'), async () => {
    const home = join(t.dir, 'nobody');
    mkdirSync(home);
    writeFile(join(home, '.ssh', 'id_ed25519'), 'PRIVATE-KEY\n');
    writeFile(join(home, '.stashbase', 'agents', 'loc.toml'), `filesystem.deny_read = ["~/.ssh"]\n[network]\negress_hosts = ["local.test"]\n[network.hosts]\n"local.test" = "127.0.0.1:${port}"\n`);
    for (const p of [t.dir, home, join(home, '.ssh'), join(home, '.ssh', 'id_ed25519'), join(home, '.stashbase'), join(home, '.stashbase', 'agents'), join(home, '.stashbase', 'agents', 'loc.toml')]) chownSync(p, 65534, 65534);
    chmodSync(t.dir, 0o755);
    const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      // runuser resets HOME: env sets it again.
      const child = spawn('runuser', ['-u', 'nobody', '--', 'env', `HOME=${home}`, process.execPath, BIN, 'agent', 'run', '--profile', 'loc', '--profile-source', 'global', '--silent', '--', 'sh', '-c', `id -u; cat ~/.ssh/id_ed25519; curl -sS http://local.test:${port}/; curl -sS --noproxy '*' --max-time 2 http://127.0.0.1:${port}/ || echo raw-blocked`], {
        env: { PATH: process.env.PATH, HOME: home }, cwd: home,
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += String(d)));
      child.stderr.on('data', (d: Buffer) => (stderr += String(d)));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    assert.equal(out.stdout, '65534\nLOCAL-OK\nraw-blocked\n', out.stderr);
    assert.match(out.stderr, /id_ed25519: No such file or directory/);
  });

  test("an agent's own user namespace (unprivileged run) cannot unmount, re-bind or pivot_root past a denial", needsRoot('it runs the agent as nobody'), async () => {
    const home = join(t.dir, 'nobody-ns');
    mkdirSync(home);
    writeFile(join(home, '.ssh', 'id_ed25519'), 'PRIVATE-KEY\n');
    // Writes as a deny-list: the mounts alone hold (no Landlock ruleset, which would refuse the first unshare).
    writeFile(join(home, '.stashbase', 'agents', 'dl.toml'), '[filesystem]\nwrites = "deny-list"\ndeny_read = ["~/.ssh"]\n');
    for (const p of [home, join(home, '.ssh'), join(home, '.ssh', 'id_ed25519'), join(home, '.stashbase'), join(home, '.stashbase', 'agents'), join(home, '.stashbase', 'agents', 'dl.toml')]) chownSync(p, 65534, 65534);
    chmodSync(t.dir, 0o755);
    // Root in a namespace of its own (the first line proves unshare worked), then every way to take the bind off.
    const attack = 'unshare -rm sh -c "id -u; umount -l ~/.ssh; umount -R ~/.ssh; cat ~/.ssh/id_ed25519; ' +
      'mount --bind / /mnt && cat /mnt$HOME/.ssh/id_ed25519; ' +
      'mkdir ~/nr && mount --rbind / ~/nr && cd ~/nr && pivot_root . . && umount -l . && echo pivoted && cd / && umount -l ~/.ssh; cat ~/.ssh/id_ed25519; ls -A ~/.ssh"; echo end';
    const run = (inside: boolean, profile: string[] = ['--profile', 'dl', '--profile-source', 'global']) =>
      new Promise<string>((resolve) => {
        const cmd = inside ? [process.execPath, BIN, 'agent', 'run', ...profile, '--silent', '--', 'sh', '-c', attack] : ['sh', '-c', 'cat ~/.ssh/id_ed25519'];
        const child = spawn('runuser', ['-u', 'nobody', '--', 'env', `HOME=${home}`, ...cmd], { env: { PATH: process.env.PATH, HOME: home }, cwd: home });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += String(d)));
        child.on('close', () => resolve(out));
      });
    assert.equal(await run(false), 'PRIVATE-KEY\n');
    assert.equal(await run(true), '0\npivoted\nend\n');
    // The default (writes as an allow-list) adds a Landlock ruleset: the mount topology cannot change at all.
    assert.equal(await run(true, []), 'end\n');
  });

  test('native_network = "host": the proxy on the host loopback, raw connections not blocked (the documented weaker mode)', async () => {
    writeFile(join(t.sbHome, 'agents', 'host.toml'), `[sandbox]\nnative_network = "host"\n[network]\negress_hosts = ["local.test"]\n[network.hosts]\n"local.test" = "127.0.0.1:${port}"\n`);
    const r = await cli(['agent', 'run', '--profile', 'host', '--silent', '--', 'sh', '-c', `echo "$HTTPS_PROXY"; curl -sS http://local.test:${port}/; curl -sS -o /dev/null -w '%{http_code}\\n' http://other.test/; curl -sS --noproxy '*' http://127.0.0.1:${port}/`], { env: t.env, cwd: t.dir });
    const lines = r.stdout.split('\n');
    assert.match(lines[0]!, /^http:\/\/stashbase:[0-9a-f]{36}@127\.0\.0\.1:\d+$/);
    assert.doesNotMatch(lines[0]!, /:18080$/);
    assert.deepEqual(lines.slice(1), ['LOCAL-OK', '403', 'LOCAL-OK', '']);
  });

  test('a pattern that walks past 200,000 entries warns naming the pattern, and the run goes on', async () => {
    const tree = join(t.dir, 'big');
    for (let d = 0; d < 201; d++) {
      mkdirSync(join(tree, `d${d}`), { recursive: true });
      for (let f = 0; f < 999; f++) writeFileSync(join(tree, `d${d}`, `f${f}`), '');
    }
    writeFile(join(tree, 'd200', 'zz.secret'), 'S');
    writeFile(join(t.sbHome, 'agents', 'walk.toml'), `[filesystem]\ndeny_read = ['re:^${tree}/.*\\.secret$']\n`);
    const r = await cli(['agent', 'run', '--profile', 'walk', '--', 'echo', 'ran'], { env: t.env, cwd: t.dir, timeoutMs: 60_000 });
    assert.equal(r.stdout, 'ran\n');
    assert.match(r.stderr, new RegExp(`warning: re:\\^${tree.replace(/[/.]/g, '\\$&')}/\\.\\*\\\\\\.secret\\$: stopped after 200000 entries under ${tree.replace(/[/.]/g, '\\$&')}; paths beyond them are not protected \\(start the pattern deeper\\)`));
  });
});

describe('native setup failing at run time fails closed', needs('bwrap'), () => {
  const t = tempHome();
  // Stand-in tools outside the runs' working directory: stashbase takes no tool from a folder under it (the agent's).
  const tools = mkdtempSync(join(tmpdir(), 'sbtools-'));
  after(() => {
    t.cleanup();
    rmSync(tools, { recursive: true, force: true });
  });
  test('a bwrap that fails before its sandbox is up (as under a user-namespace restriction): the agent never runs, exit 4', async () => {
    const marker = join(t.dir, 'agent-ran');
    for (const [name, body] of [['fails', 'echo "bwrap: setting up uid map: Permission denied" >&2; exit 1'], ['killed', 'kill -9 $$']] as const) {
      const bin = join(tools, name);
      writeFile(join(bin, 'bwrap'), `#!/bin/sh\n${body}\n`);
      chmodSync(join(bin, 'bwrap'), 0o755);
      const r = await cli(['agent', 'run', '--silent', '--', 'touch', marker], { env: { ...t.env, PATH: `${bin}:${process.env.PATH}` } });
      assert.equal(r.code, 4, `${name}: ${r.stderr}`);
      assert.match(r.stderr, /nothing was run/, name);
      assert.equal(existsSync(marker), false, name);
    }
  });

  test("a bwrap whose own setup fails after it reported its sandbox (a mount's source gone under it) is tried again, up to 3 times; the agent runs once; control: every try failing runs nothing and exits 4", async () => {
    const bwrap = spawnSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).stdout.trim();
    const bin = join(tools, 'flaky-bwrap');
    const tries = join(t.dir, 'bwrap-tries');
    // The real bwrap with a bind whose source is gone: it reports its sandbox's pid, then fails making its
    // mounts (as when a container's overlay is unmounted while it copies the mount table), until the
    // file of tries is as long as the number in the file of failures (bwrap runs with an environment of stashbase's making).
    writeFile(
      join(bin, 'bwrap'),
      `#!/bin/sh
if [ "$1" = "--version" ] || [ "$1" = "--help" ]; then exec ${bwrap} "$@"; fi
echo x >> ${tries}
if [ "$(wc -l < ${tries})" -le "$(cat ${tries}-failing)" ]; then exec ${bwrap} --ro-bind ${t.dir}/gone-under-it /gone "$@"; fi
exec ${bwrap} "$@"
`,
    );
    chmodSync(join(bin, 'bwrap'), 0o755);
    writeFile(join(t.sbHome, 'agents', 'hostnet.toml'), '[sandbox]\nnative_network = "host"\n');
    const failed = 'stashbase: bwrap exited (1) before setting up the sandbox; nothing was run';
    for (const profile of ['default', 'hostnet']) {
      for (const [fails, code, said] of [
        [2, 0, [`${failed}; trying again (2 of 3)`, `${failed}; trying again (3 of 3)`]],
        [3, 4, [`${failed}; trying again (2 of 3)`, `${failed}; trying again (3 of 3)`, failed]],
      ] as const) {
        const marker = join(t.dir, `ran-${profile}-${fails}`);
        writeFileSync(tries, '');
        writeFileSync(`${tries}-failing`, String(fails));
        const r = await cli(['agent', 'run', '--silent', '--profile', profile, '--', 'sh', '-c', `echo ran >> ${marker}; echo ran`], { env: { ...t.env, PATH: `${bin}:${process.env.PATH}` }, cwd: t.dir });
        const what = `${profile}, ${fails} failing: ${r.stderr}`;
        assert.equal(r.code, code, what);
        assert.deepEqual(r.stderr.split('\n').filter((l) => l.startsWith('stashbase:')), said, what);
        assert.equal(readFileSync(tries, 'utf8'), 'x\n'.repeat(3), what);
        assert.equal(r.stdout, code === 0 ? 'ran\n' : '', what);
        assert.equal(existsSync(marker) ? readFileSync(marker, 'utf8') : '', code === 0 ? 'ran\n' : '', what);
      }
    }
  });

  test("after a try whose bwrap failed once the proxy listened in its sandbox, the next try's proxy listens in the new one and keeps its limits (with a bound secret: the server itself): a connection that sends nothing or half a head is closed at head_timeout; control: the same run without the failed try", async () => {
    const bwrap = spawnSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).stdout.trim();
    const bin = join(tools, 'late-failing-bwrap');
    const tries = join(t.dir, 'late-tries');
    // The first try's bwrap copies a file from a pipe open for 0.7 s (the relay listens meanwhile), then binds a source that is gone.
    writeFile(join(bin, 'bwrap'), `#!/bin/bash\nif [ "$1" = "--version" ] || [ "$1" = "--help" ]; then exec ${bwrap} "$@"; fi\necho x >> ${tries}\nif [ "$(wc -l < ${tries})" -le "$(cat ${tries}-failing)" ]; then exec 200< <(sleep 0.7); exec ${bwrap} --file 200 /slow-setup --ro-bind ${t.dir}/gone-later /gone "$@"; fi\nexec ${bwrap} "$@"\n`);
    chmodSync(join(bin, 'bwrap'), 0o755);
    writeFile(join(t.sbHome, 'agents', 'limits.toml'), '[network]\negress_hosts = ["api.test"]\n[network.limits]\nhead_timeout = 1\n[secrets.ANTHROPIC_API_KEY]\nsource = "REAL_KEY"\nhosts = ["api.test"]\n');
    // Two connections to the proxy: one sends nothing, one half a head; how long each stays open (at most 6 s).
    const probe = `import os, socket, threading, time, urllib.parse
u = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
out = {}
def one(name, data):
    s = socket.create_connection((u.hostname, u.port)); s.settimeout(6); t0 = time.time()
    if data: s.sendall(data)
    try:
        while s.recv(4096): pass
        out[name] = "closed" if time.time() - t0 < 3 else "late"
    except socket.timeout:
        out[name] = "open"
ts = [threading.Thread(target=one, args=a) for a in (("silent", b""), ("half", b"GET http://api.test/ HTTP/1.1\\r\\nHost: api.test\\r\\n"))]
[t.start() for t in ts]; [t.join() for t in ts]
print(out["silent"], out["half"])
`;
    writeFile(join(t.dir, 'probe.py'), probe);
    for (const fails of [1, 0]) {
      writeFileSync(tries, '');
      writeFileSync(`${tries}-failing`, String(fails));
      const r = await cli(['agent', 'run', '--silent', '--profile', 'limits', '--', 'python3', join(t.dir, 'probe.py')], { env: { ...t.env, REAL_KEY: 'real-key-value', PATH: `${bin}:${process.env.PATH}` }, cwd: t.dir });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(readFileSync(tries, 'utf8'), 'x\n'.repeat(fails + 1), r.stderr);
      assert.deepEqual(r.stderr.split('\n').filter((l) => l.startsWith('stashbase:')), fails ? ['stashbase: bwrap exited (1) before setting up the sandbox; nothing was run; trying again (2 of 3)'] : []);
      assert.equal(r.stdout, 'closed closed\n', `${fails} failing: ${r.stderr}`);
    }
  });

  test("a signal to stashbase while bwrap sets up its sandbox (SIGTERM, SIGHUP of a closed terminal) ends the run: not tried again, the agent never runs; control: without the signal the same slow setup runs the agent", async () => {
    const bwrap = spawnSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).stdout.trim();
    const bin = join(tools, 'slow-bwrap');
    // The real bwrap, whose setup copies a file from a pipe that stays open for 3 s: it reported its sandbox and is
    // still making its mounts when the signal comes.
    writeFile(join(bin, 'bwrap'), `#!/bin/bash\nif [ "$1" = "--version" ] || [ "$1" = "--help" ]; then exec ${bwrap} "$@"; fi\nexec 200< <(sleep 3 2>/dev/null)\nexec ${bwrap} --file 200 /slow-setup "$@"\n`);
    chmodSync(join(bin, 'bwrap'), 0o755);
    for (const sig of ['SIGTERM', 'SIGHUP', null] as const) {
      const marker = join(t.dir, `ran-after-${sig ?? 'none'}`);
      const child = spawn(process.execPath, [BIN, 'agent', 'run', '--silent', '--', 'sh', '-c', `echo ran > ${marker}`], { env: { ...t.env, PATH: `${bin}:${process.env.PATH}` }, cwd: t.dir, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += String(d)));
      const closed = new Promise<number | null>((res) => child.on('close', res));
      if (sig !== null) {
        const bwrapUp = () => processesWhere((p, argv) => argv.split('\0')[0]!.endsWith('/bwrap') && argv.includes(marker) && descendsFrom(p, child.pid!)).length >= 2;
        for (let waited = 0; waited < 5000 && !bwrapUp(); waited += 50) await new Promise((res) => setTimeout(res, 50));
        assert.equal(bwrapUp(), true, `${sig}: bwrap is up`);
        await new Promise((res) => setTimeout(res, 300));
        child.kill(sig);
        // Ended at once, with nothing of the sandbox left (found in review: bwrap's child, not yet tied to bwrap's
        // end while it makes its mounts, outlived it, and stashbase waited on it).
        const signalled = Date.now();
        await closed;
        assert.ok(Date.now() - signalled < 1500, `${sig}: stashbase ended ${Date.now() - signalled} ms after the signal`);
        assert.deepEqual(processesWhere((_p, argv) => argv.includes(marker)), [], `${sig}: a process of the sandbox is left`);
      }
      const code = await closed;
      if (sig === null) {
        assert.equal(code, 0, stderr);
        assert.equal(readFileSync(marker, 'utf8'), 'ran\n');
        continue;
      }
      assert.equal(code, 4, `${sig}: ${stderr}`);
      assert.deepEqual(stderr.split('\n').filter((l) => l.startsWith('stashbase:')), [`stashbase: bwrap exited (${sig === 'SIGTERM' ? 143 : 129}) before setting up the sandbox; nothing was run`], sig);
      assert.equal(existsSync(marker), false, `${sig}: the agent ran`);
    }
  });

  test('a relay that cannot hand its socket over (sendmsg fails): the agent never runs, exit 4, the reason named', async () => {
    const marker = join(t.dir, 'agent-ran-relay');
    const bin = join(tools, 'bad-relay');
    const perl = spawnSync('sh', ['-c', 'command -v perl'], { encoding: 'utf8' }).stdout.trim();
    // The relay's sendmsg(2) number replaced by getpid(2)'s: the call "succeeds" with the wrong answer.
    const getpid = process.arch === 'arm64' ? 172 : 39;
    writeFile(
      join(bin, 'perl'),
      `#!/bin/sh\nif [ "$1" = "-e" ] && printf %s "$2" | grep -q '# stashbase relay'; then\n  s="$2"; shift 2; a=$1 b=$2 c=$3 d=$4; shift 5\n  exec ${perl} -e "$s" "$a" "$b" "$c" "$d" ${getpid} "$@"\nfi\nexec ${perl} "$@"\n`,
    );
    chmodSync(join(bin, 'perl'), 0o755);
    const r = await cli(['agent', 'run', '--silent', '--', 'touch', marker], { env: { ...t.env, PATH: `${bin}:${process.env.PATH}` } });
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /the network relay into the sandbox failed \(sendmsg sent \d+ of 70 bytes\); nothing was run/);
    assert.equal(existsSync(marker), false);
  });

  test('stashbase killed while bwrap waits to be released (the relay slow to listen): the agent never runs', async () => {
    const marker = join(t.dir, 'agent-ran-unreleased');
    const bin = join(tools, 'slow-relay');
    const perl = spawnSync('sh', ['-c', 'command -v perl'], { encoding: 'utf8' }).stdout.trim();
    // The relay sleeps before it listens: bwrap's sandbox is up and waits on its block descriptor meanwhile.
    writeFile(
      join(bin, 'perl'),
      `#!/bin/sh\nif [ "$1" = "-e" ] && printf %s "$2" | grep -q '# stashbase relay'; then\n  s=$(printf %s "$2" | sed 's/^listen(/select(undef, undef, undef, 8); listen(/'); shift 2\n  exec ${perl} -e "$s" "$@"\nfi\nexec ${perl} "$@"\n`,
    );
    chmodSync(join(bin, 'perl'), 0o755);
    const child = spawn(process.execPath, [BIN, 'agent', 'run', '--silent', '--', 'sh', '-c', `sleep 0.3; touch ${marker}; sleep 30`], { env: { ...t.env, PATH: `${bin}:${process.env.PATH}` }, cwd: t.dir, stdio: 'ignore' });
    // bwrap and the child it cloned into the new namespaces, both still bwrap (the child execs only once
    // released): the sandbox is being set up or waits. Matched on argv[0], not on any process carrying the
    // command: the wrapper above and its subshells carry it too, and vanish or exec while they are read.
    const bwrapWaiting = () => processesWhere((p, argv) => argv.split('\0')[0]!.endsWith('/bwrap') && argv.includes(marker) && descendsFrom(p, child.pid!)).length >= 2;
    for (let waited = 0; waited < 5000 && !bwrapWaiting(); waited += 50) await new Promise((res) => setTimeout(res, 50));
    assert.equal(bwrapWaiting(), true, 'bwrap is up and waiting');
    await new Promise((res) => setTimeout(res, 300));
    child.kill('SIGKILL');
    await new Promise((res) => child.on('close', res));
    await new Promise((res) => setTimeout(res, 1500));
    // Processes that carry the agent's command: the relay (asleep here; it exits once it finds stashbase
    // gone) and anything of the sandbox, which must not be left.
    const carrying = processesWhere((_p, argv) => argv.includes(marker));
    const left = processesWhere((p, argv) => carrying.includes(p) && !argv.includes('# stashbase relay'));
    for (const p of carrying) spawnSync('kill', ['-9', String(p)]);
    assert.equal(existsSync(marker), false, 'the agent ran after stashbase died');
    assert.deepEqual(left, [], 'nothing of the sandbox outlived stashbase');
  });
});

describe('native crash safety (real bwrap)', needs('bwrap'), () => {
  const t = tempHome();
  after(() => t.cleanup());

  test('after a SIGKILL of stashbase the agent dies with it, and the next run removes what was left', async () => {
    writeFile(join(t.sbHome, 'agents', 'k.toml'), '[filesystem]\ndeny_write = ["~/not-yet"]\n');
    const beat = join(t.dir, 'beat');
    const child = spawn(process.execPath, [BIN, 'agent', 'run', '--profile', 'k', '--silent', '--', 'sh', '-c', `date +%s%N > ${beat}; echo ready; while :; do date +%s%N > ${beat}; sleep 0.05; done`], { env: t.env, cwd: t.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    await new Promise<void>((res) => child.stdout.on('data', (d: Buffer) => String(d).includes('ready') && res()));
    assert.equal(existsSync(join(t.home, 'not-yet')), true, 'the stand-in exists while the run lives');
    // The relay that made the proxy's socket in the sandbox's namespace is gone before the agent starts:
    // no process of stashbase's outlives it in that namespace.
    const relays = () => processesWhere((p, argv) => argv.includes('# stashbase relay') && descendsFrom(p, child.pid!));
    const found = relays();
    child.kill('SIGKILL');
    assert.deepEqual(found, [], 'no relay while the agent runs');
    await new Promise((res) => child.on('close', res));
    // The agent writes every 50 ms while it lives: within 5 s the beat must stop for good.
    let stoppedFor = 0;
    let last = readFileSync(beat, 'utf8');
    for (let waited = 0; waited < 5000 && stoppedFor < 500; waited += 100) {
      await new Promise((res) => setTimeout(res, 100));
      const now = readFileSync(beat, 'utf8');
      stoppedFor = now === last ? stoppedFor + 100 : 0;
      last = now;
    }
    assert.ok(stoppedFor >= 500, 'the agent stopped with stashbase');
    assert.equal(readdirSync(join(t.sbHome, 'sessions')).length, 1);
    const r = await cli(['agent', 'run', '--profile', 'k', '--', 'true'], { env: t.env, cwd: t.dir });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /warning: removed what the killed run ags_[a-z2-7]{16} left behind \(stand-ins, run directory, session record\)\n/);
    assert.equal(existsSync(join(t.home, 'not-yet')), false);
    assert.deepEqual(readdirSync(join(t.sbHome, 'sessions')), []);
  });
});
