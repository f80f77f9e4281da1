// Attacks on the native backend's network boundary and process isolation, and
// its environment, signals, exit codes and terminal, with real bwrap.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, cli, needs, REQUIRED } from '../helpers.js';
import { attackHome, PTY } from '../native-setup.js';

describe('native network, processes and terminal (real bwrap)', needs('bwrap'), () => {
  let tcpPort = 0;
  let httpPort = 0;
  let udpPort = 0;
  const udpSeen: string[] = [];
  const tcp = createServer((s) => s.end('HOSTSERVICE\n'));
  const http = createHttpServer((_req, res) => res.end('LOCAL-OK\n'));
  const udp = createSocket('udp4');
  let a: ReturnType<typeof attackHome>;

  before(async () => {
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r));
    udp.on('message', (m) => udpSeen.push(String(m)));
    tcpPort = (tcp.address() as AddressInfo).port;
    httpPort = (http.address() as AddressInfo).port;
    udpPort = udp.address().port;
    a = attackHome(`[network]\negress_hosts = ["local.test"]\n[network.hosts]\n"local.test" = "127.0.0.1:${httpPort}"\n[secrets.GITHUB_TOKEN]\nsource = "REAL_GH"\nhosts = ["api.github.com"]\n[config_env]\nEDITOR = "vi"\n`);
    a.env.REAL_GH = 'ghp_realrealrealrealrealreal0123';
  });
  after(() => {
    tcp.close();
    http.close();
    udp.close();
    a.cleanup();
  });

  test('raw TCP to a host loopback service fails inside, works outside', async () => {
    const script = `curl -sS --noproxy '*' --max-time 3 http://127.0.0.1:${tcpPort}/ 2>&1; python3 -c "import socket; s=socket.create_connection(('127.0.0.1', ${tcpPort}), 3); print(s.recv(100))" 2>&1 | tail -1; (exec 3<>/dev/tcp/127.0.0.1/${tcpPort} && cat <&3) 2>&1; echo end`;
    assert.match((await a.outside(`bash -c "${script.replace(/"/g, '\\"')}"`)).stdout, /HOSTSERVICE/);
    const r = await a.inside(`bash -c "${script.replace(/"/g, '\\"')}"`);
    assert.doesNotMatch(r.stdout, /HOSTSERVICE/);
    assert.match(r.stdout, /Connection refused/);
    assert.match(r.stdout, /end\n$/);
  });

  test('IPv6 loopback, the proxy port on another address, and UDP do not leave', async () => {
    const r = await a.inside(
      `curl -sS --noproxy '*' --max-time 2 'http://[::1]:${tcpPort}/' 2>&1 | tail -1; ` +
        `python3 -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'LEAK', ('127.0.0.1', ${udpPort}))"; ` +
        `curl -sS --noproxy '*' --max-time 2 http://127.0.0.1:18081/ 2>&1 | tail -1; echo end`,
    );
    assert.doesNotMatch(r.stdout, /HOSTSERVICE/);
    assert.match(r.stdout, /end\n$/);
    await new Promise((res) => setTimeout(res, 200));
    assert.deepEqual(udpSeen, []);
    // the datagram does arrive from outside
    spawnSync('python3', ['-c', `import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'OUTSIDE', ('127.0.0.1', ${udpPort}))`]);
    await new Promise((res) => setTimeout(res, 200));
    assert.deepEqual(udpSeen, ['OUTSIDE']);
  });

  test('raw TCP to a service listening on the host\'s IPv6 loopback fails inside, works outside', async () => {
    const v6 = createServer((s) => s.end('V6SERVICE\n'));
    await new Promise<void>((r) => v6.listen(0, '::1', r));
    const port = (v6.address() as AddressInfo).port;
    try {
      const script = `python3 -c "import socket; s=socket.create_connection(('::1', ${port}), 3); print(s.recv(100).decode(), end='')" 2>&1 | tail -1; echo end`;
      assert.equal((await a.outside(script)).stdout, 'V6SERVICE\nend\n');
      const r = await a.inside(script);
      assert.doesNotMatch(r.stdout, /V6SERVICE/);
      assert.match(r.stdout, /(Connection refused|Cannot assign requested address|Network is unreachable)\nend\n$/);
    } finally {
      v6.close();
    }
  });

  test('the proxy is the only way out: allowed hosts through it, others refused with the rule', async () => {
    const r = await a.inside(`curl -sS http://local.test:${httpPort}/; curl -sS -i http://other.test/ | tr -d '\\r' | grep -E '^(HTTP|X-Stashbase)'; curl -sS http://other.test/`);
    assert.equal(r.stdout, 'LOCAL-OK\nHTTP/1.1 403 Forbidden\nX-Stashbase-Denied: not in egress_hosts\nstashbase proxy refused other.test:80: not in egress_hosts. This sandbox reaches only the hosts its profile allows; if the task needs this one, ask the user to add it to the profile\'s [network] egress_hosts.\n');
    const audit = readdirSync(join(a.sbHome, 'audit')).map((f) => readFileSync(join(a.sbHome, 'audit', f), 'utf8')).join('');
    assert.match(audit, /"type":"proxy","method":"GET","host":"local\.test","port":\d+,"path":"\/","decision":"allow"/);
    assert.match(audit, /"host":"other\.test","port":80,"path":"\/","decision":"deny","rule":"not in egress_hosts","status":403/);
    // agent audit shows the latest run, the denials marked
    const shown = await cli(['agent', 'audit'], { env: a.env });
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^Audit session: ags_[a-z2-7]{16}\n/);
    assert.match(shown.stdout, /  allow  GET local\.test:\d+ "\/"  egress_hosts "local\.test"  \(200\)\n/);
    assert.match(shown.stdout, /  DENY   GET other\.test:80 "\/"  not in egress_hosts  \(403\)\n/);
    // The second, identical denial is counted, not written again.
    assert.match(shown.stdout, /  DENY   GET other\.test:80  not in egress_hosts  \(the same 1 more time\)\n/);
    assert.match(shown.stdout, /\n3 proxy decisions: 1 allowed, 2 denied, 0 errors\n$/);
  });

  test('killing everything the agent can see leaves the way out in stashbase and the run intact', async () => {
    const r = await a.inside(`for p in /proc/[0-9]*; do cat $p/comm; done | sort -u | tr '\\n' ' '; echo; kill -9 -1; pkill -9 node; pkill -9 nsenter; pkill -9 perl; curl -sS http://local.test:${httpPort}/`);
    // bwrap's own init is the sandbox's PID 1; nothing of stashbase's side (node, the perl relay) is there.
    assert.doesNotMatch(r.stdout.split('\n')[0]!, /node|nsenter|perl/);
    assert.match(r.stdout, /LOCAL-OK\n$/);
    assert.equal(r.code, 0);
  });

  test("the relay's channel to stashbase never reaches the sandbox: no NODE_CHANNEL_* variable, no descriptor but the standard three, and node starts", async () => {
    // A channel left open would let the agent speak Node's IPC to stashbase (hand it descriptors, or
    // messages); a variable naming a closed one would make every node inside fail at start.
    const r = await a.inside(`env | grep -c '^NODE_CHANNEL' ; ls /proc/self/fd | sort -n | tr '\\n' ' '; echo; node -e 'console.log("node ok")'`);
    assert.equal(r.stdout, '0\n0 1 2 3 \nnode ok\n');
  });

  test('no capabilities inside, even as root, and no way to gain them (no_new_privs)', async () => {
    const r = await a.inside('grep -E "^(Cap(Inh|Prm|Eff|Amb)|NoNewPrivs|Seccomp):" /proc/self/status');
    assert.equal(r.stdout, 'CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\n');
  });

  test("the kernel keyrings are out of reach (keyctl refused), though they work outside", async () => {
    const nr = process.arch === 'arm64' ? 219 : 250;
    const probe = `python3 -c "import ctypes,os; libc=ctypes.CDLL(None,use_errno=True); r=libc.syscall(${nr},0,-3,1); print('keyctl', 'ok' if r>=0 else os.strerror(ctypes.get_errno()))"`;
    assert.equal((await a.outside(probe)).stdout, 'keyctl ok\n');
    assert.equal((await a.inside(probe)).stdout, 'keyctl Operation not permitted\n');
  });

  test('socket families by allow-list: IPv4, IPv6 and netlink route queries open; AF_VSOCK (a VM\'s channel to its host), packet, XDP, netlink uevents and the rest do not, though they do outside', async () => {
    // Each family as the kernel here knows it: "ok" or the errno name.
    const probe = [
      'import socket, errno',
      'for name, fam, typ, proto in [("inet",2,1,0),("inet6",10,1,0),("netlink-route",16,3,0),("netlink-uevent",16,3,15),("vsock",40,1,0),("packet",17,3,0),("xdp",44,3,0),("unix",1,1,0)]:',
      '    try:',
      '        socket.socket(fam, typ, proto).close(); print(name, "ok")',
      '    except OSError as e:',
      '        print(name, errno.errorcode.get(e.errno, e.errno))',
    ].join('\n');
    const script = `python3 -c '${probe}'`;
    const out = await a.outside(script);
    const parse = (t: string) => Object.fromEntries(t.trim().split('\n').map((l) => l.split(' ') as [string, string]));
    const outside = parse(out.stdout);
    // The control: outside, families beyond the three open here (on this machine, a Firecracker guest, vsock among them).
    const others = Object.keys(outside).filter((f) => !['inet', 'inet6', 'netlink-route'].includes(f) && outside[f] === 'ok');
    assert.ok(others.length >= 3, `outside, other families open: ${out.stdout}${out.stderr}`);
    const r = await a.inside(script);
    assert.equal(r.code, 0, r.stderr);
    const inside = parse(r.stdout);
    assert.deepEqual([inside.inet, inside.inet6, inside['netlink-route']], ['ok', 'ok', 'ok']);
    for (const f of Object.keys(outside).filter((x) => !['inet', 'inet6', 'netlink-route'].includes(x))) assert.equal(inside[f], 'EPERM', f);
  });

  test("(review, round 35) a datagram socket pair (whose end connect(2) points at any socket path) is refused, so a host datagram socket is not reached; stream pairs still open; the terminal's line discipline cannot be changed (TIOCSETD); controls: outside, the pair reaches the host socket, and the ioctl gets the terminal's own answer", async () => {
    const sock = join(a.home, 'dgram-ctl.sock');
    const got = join(a.home, 'dgram-got.txt');
    // A host datagram service (journald's and syslog's kind), in your home: readable in the sandbox, as the default profile leaves it.
    const listener = spawn('python3', ['-c', `import socket,sys\ns=socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\ns.bind(sys.argv[1])\nprint("ready", flush=True)\nwhile True:\n    open(sys.argv[2], "ab").write(s.recv(100) + b"\\n")`, sock, got], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve) => listener.stdout.once('data', () => resolve()));
      const probe = `python3 -c '
import socket, errno, fcntl, struct, sys
def tryit(name, f):
    try:
        f(); print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
def dgram():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.connect(sys.argv[1]); a.send(sys.argv[2].encode())
tryit("stream-pair", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM))
tryit("dgram-pair", dgram)
def raw():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_RAW)
    a.connect(sys.argv[1]); a.send(sys.argv[2].encode() + b"-raw")
tryit("raw-pair", raw)
tryit("tiocsetd", lambda: fcntl.ioctl(0, 0x5423, struct.pack("i", 0)))
' ${sock} `;
      const out = await a.outside(`${probe} FROM-OUTSIDE </dev/null`);
      assert.equal(out.stdout, 'stream-pair ok\ndgram-pair ok\nraw-pair ok\ntiocsetd ENOTTY\n', out.stderr);
      const r = await a.inside(`${probe} FROM-INSIDE </dev/null`);
      assert.equal(r.stdout, 'stream-pair ok\ndgram-pair EPERM\nraw-pair EPERM\ntiocsetd EPERM\n', r.stderr);
      await new Promise((res) => setTimeout(res, 200));
      assert.equal(readFileSync(got, 'utf8'), 'FROM-OUTSIDE\nFROM-OUTSIDE-raw\n');
    } finally {
      listener.kill();
    }
  });

  test("(review, round 35) the agent's kill(0, SIGKILL) reaches its own process group only: stashbase survives it and still runs its end-of-run checks (a planted repository's fsmonitor is moved aside); control: outside, a kill(0) reaches the shell that started the killer", { timeout: 120_000 }, async () => {
    // Each started in a session of its own: a regression kills that one, never the test runner.
    const run = (file: string, args: string[], cwd: string) => new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(file, args, { env: a.env, cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    });
    const control = await run('sh', ['-c', "sh -c 'kill -KILL 0'; echo survived"], a.proj);
    assert.deepEqual([control.signal, control.stdout], ['SIGKILL', '']);
    const plant = 'mkdir -p killsub && git -C killsub init -q && git -C killsub config core.fsmonitor "touch PWNED #" && kill -KILL 0';
    const r = await run(process.execPath, [BIN, 'agent', 'run', '--silent', '--', 'sh', '-c', plant], a.proj);
    assert.deepEqual([r.signal, r.code], [null, 137], r.stderr);
    assert.match(r.stderr, /killsub\/\.git/);
    assert.equal(existsSync(join(a.proj, 'killsub', '.git')), false, 'moved aside by the end-of-run check');
  });

  test("(review, round 35) an agent that takes the terminal (TIOCSPGRP) and sets tostop, in a run whose input is a pipe from an interactive shell: stashbase takes the terminal back, shows its warnings and moves a planted repository aside; control: the agent's TIOCSPGRP succeeded", { timeout: 120_000 }, async () => {
    const dir = join(a.home, 'tty-proj');
    spawnSync('mkdir', ['-p', dir]);
    spawnSync('git', ['init', '-q', dir]);
    const grab = `$SIG{TTOU}="IGNORE"; open(T,"+<","/dev/tty") or die "tty: $!"; print STDERR "agent: TIOCSPGRP=", (ioctl(T,0x5410,pack("i",getpgrp(0))) ? "ok" : "fail"), "\\n"; system("stty tostop </dev/tty");`;
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, 'grab.pl'), grab.replaceAll('\\\\n', '\\n'));
    writeFileSync(join(dir, 'atk.sh'), "mkdir -p sub && git -C sub init -q && git -C sub config core.fsmonitor 'echo PWNED; false' && perl grab.pl\n");
    const inner = `true | ${process.execPath} ${BIN} agent run -- sh atk.sh; echo EXIT=$?; stty -tostop`;
    const r = spawnSync('script', ['-qfec', `bash --norc -i -c '${inner}'`, '/dev/null'], { cwd: dir, env: { ...a.env, TERM: 'dumb' }, encoding: 'utf8', timeout: 90_000 });
    assert.match(r.stdout, /agent: TIOCSPGRP=ok/, r.stdout);
    assert.match(r.stdout, /EXIT=0/, r.stdout);
    assert.match(r.stdout, /the agent left a nested repository at .*\/sub/);
    assert.equal(existsSync(join(dir, 'sub', '.git')), false);
  });

  test('no host processes in /proc', async () => {
    const r = await a.inside(`ls /proc | grep -cE '^[0-9]+$'; cat /proc/${process.pid}/cmdline; echo`);
    const count = Number(r.stdout.split('\n')[0]);
    assert.ok(count > 0 && count <= 6, `saw ${count} processes`);
    assert.doesNotMatch(r.stdout, /node/);
    assert.match((await a.outside(`cat /proc/${process.pid}/cmdline`)).stdout, /node/);
  });

  test('control sockets are unreachable: the Docker socket', async () => {
    const sock = existsSync('/run/docker.sock') ? '/run/docker.sock' : existsSync('/var/run/docker.sock') ? '/var/run/docker.sock' : null;
    if (sock === null) {
      assert.equal(REQUIRED, false, 'CI runs dockerd: its socket must exist for this test');
      return;
    }
    assert.match((await a.outside(`curl -sS --unix-socket ${sock} http://d/version`)).stdout, /ApiVersion/);
    const r = await a.inside(`curl -sS --unix-socket ${sock} http://d/version 2>&1`);
    assert.doesNotMatch(r.stdout, /ApiVersion/);
  });

  test('environment: inherited minus the documented variables, plus the sandbox settings', async () => {
    const r = await a.inside('env | sort', { STASHBASE_API_KEY: 'sk-stash', REAL_GH: 'ghp_realrealrealrealrealreal0123', HTTPS_PROXY: 'http://evil:1', INHERITED_X: '1' });
    const env = Object.fromEntries(r.stdout.trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    assert.equal(env.STASHBASE_API_KEY, undefined);
    assert.equal(env.REAL_GH, undefined);
    assert.doesNotMatch(r.stdout, /ghp_realreal/);
    assert.match(env.GITHUB_TOKEN ?? '', /^ghp_SBPH[A-Za-z0-9]{24}$/);
    assert.equal(env.INHERITED_X, '1');
    assert.equal(env.EDITOR, 'vi');
    // Claude Code allows --dangerously-skip-permissions as root only with it.
    assert.equal(env.IS_SANDBOX, '1');
    assert.match(env.HTTPS_PROXY ?? '', /^http:\/\/stashbase:[0-9a-f]{36}@127\.0\.0\.1:18080$/);
    for (const v of ['HTTP_PROXY', 'https_proxy', 'http_proxy', 'ALL_PROXY']) assert.equal(env[v], env.HTTPS_PROXY, v);
    // Writes are an allow-list: temp files go to the run's private /tmp, Claude Code's config to its view.
    assert.deepEqual([env.TMPDIR, env.CLAUDE_CONFIG_DIR], ['/tmp', `${a.home}/.claude`]);
    assert.equal(env.NO_PROXY, 'localhost,127.0.0.1,::1');
  });

  test("exit codes are the agent's, 128+N for a signal", async () => {
    assert.equal((await a.inside('exit 7')).code, 7);
    assert.equal((await a.inside('kill -TERM $$')).code, 143);
    assert.equal((await a.inside('kill -KILL $$')).code, 137);
  });

  test('SIGTERM reaches the agent; the session record lives exactly as long as the run', async () => {
    const marker = join(a.proj, 'term-marker');
    const child = spawn(process.execPath, [BIN, 'agent', 'run', '--profile', 'attack', '--silent', '--', 'sh', '-c', `trap 'echo TERM > ${marker}; exit 42' TERM; echo ready; while :; do sleep 0.1; done`], { env: a.env, cwd: a.proj, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += String(d)));
    const closed = new Promise<number | null>((res) => child.on('close', (c) => res(c)));
    await Promise.race([new Promise<void>((res) => child.stdout.on('data', (d: Buffer) => String(d).includes('ready') && res())), closed]);
    assert.equal(child.exitCode, null, stderr);
    const records = readdirSync(join(a.sbHome, 'sessions'));
    assert.equal(records.length, 1);
    assert.equal(JSON.parse(readFileSync(join(a.sbHome, 'sessions', records[0]!), 'utf8')).pid, child.pid);
    child.kill('SIGTERM');
    assert.equal(await closed, 42);
    assert.equal(readFileSync(marker, 'utf8'), 'TERM\n');
    assert.deepEqual(readdirSync(join(a.sbHome, 'sessions')), []);
    const id = records[0]!.replace('.json', '');
    const events = readFileSync(join(a.sbHome, 'audit', `${id}.jsonl`), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual([events[0]!.type, events[0]!.profile, events[0]!.backend], ['start', 'attack', 'native']);
    assert.deepEqual([events.at(-1)!.type, events.at(-1)!.exitCode], ['end', 42]);
  });

  test('the proxy closing a connection the agent still writes to does not take the relay down: later requests still reach the proxy', async () => {
    // A large upload to a refused host: the proxy answers 403 and closes while the body still streams in, so the
    // relay writes to a closed socket (EPIPE, and SIGPIPE unless ignored: that killed the relay, and with it every
    // later request of the run; Codex met it after a refused WebSocket upgrade).
    const py = [
      'import base64, os, socket, urllib.parse',
      'u = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])',
      'auth = base64.b64encode(f"{u.username}:{u.password}".encode()).decode()',
      'for i in range(3):',
      '    s = socket.create_connection((u.hostname, u.port), 5)',
      '    s.sendall(f"POST http://denied.test/ HTTP/1.1\\r\\nHost: denied.test\\r\\nProxy-Authorization: Basic {auth}\\r\\nContent-Length: 100000000\\r\\n\\r\\n".encode())',
      '    try:',
      '        for _ in range(2000): s.sendall(b"x" * 50000)',
      '    except OSError:',
      '        pass',
      '    s.close()',
      'print("uploads cut")',
    ].join('\n');
    const r = await a.inside(`python3 -c '${py}'; curl -sS --max-time 5 http://local.test/ 2>&1`);
    assert.equal(r.stdout, 'uploads cut\nLOCAL-OK\n', r.stderr);
  });

  const pty = (args: string[], script: string) => {
    const r = spawnSync('python3', [PTY, ...args, '--', process.execPath, BIN, 'agent', 'run', '--profile', 'attack', '--silent', '--', 'sh', '-c', script], { env: a.env, cwd: a.proj, encoding: 'utf8' });
    return JSON.parse(r.stdout) as { output: string; exit: number | null };
  };

  test('Ctrl+C in the terminal reaches the agent, which handles it, and the relay to the proxy survives it', () => {
    const probe = `curl -s -o /dev/null -w "code=%{http_code}\\n" http://denied.test/`;
    const r = pty(['--at', '0', 'wait:ready', '--at', '0.2', 'send:03'], `${probe}; trap 'echo got-INT; ${probe}; exit 43' INT; echo ready; while :; do sleep 0.1; done`);
    // 403: the proxy answered (and refused the host); 000 would be no proxy at all.
    assert.match(r.output, /^code=403\r\nready\r\n(\^C)?got-INT\r\ncode=403\r\n/);
    assert.equal(r.exit, 43);
    assert.deepEqual(readdirSync(join(a.sbHome, 'sessions')), []);
  });

  test('a full-screen program gets a real terminal: size, resize and raw mode', () => {
    const r = pty(['--size', '30', '100', '--at', '0', 'wait:ready', '--at', '0.3', 'resize:40:120'], "tty; stty size; trap 'stty size; exit 0' WINCH; stty raw -echo; stty -raw echo; echo ready; while :; do sleep 0.1; done");
    // bwrap shows the terminal as /dev/console in its own /dev.
    assert.match(r.output, /^\/dev\/console\r\n30 100\r\n/);
    assert.match(r.output, /ready\r\n40 120\r\n/);
    assert.equal(r.exit, 0);
  });

  test('TIOCSTI cannot type into the terminal', () => {
    const sti = `python3 -c "import fcntl,termios,sys; fcntl.ioctl(sys.stdin.fileno(), termios.TIOCSTI, b'x'); print('INJECTED')"`;
    const outside = spawnSync('python3', [PTY, '--', 'sh', '-c', sti], { encoding: 'utf8' });
    assert.match(outside.stdout, /INJECTED/);
    const r = pty([], `${sti}; echo rc=$?`);
    assert.doesNotMatch(r.output, /INJECTED/);
    assert.match(r.output, /PermissionError: \[Errno 1\] Operation not permitted/);
  });
});
