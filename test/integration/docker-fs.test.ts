// The Docker backend's filesystem and environment, attacked from inside a real
// agent container running as root without capabilities: shadow mounts, the
// allow-list, no host tokens, the CA key, limits, git identity, isolated paths.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cli, needs, tempHome, withIsolatedVolumes, writeFile } from '../helpers.js';
import { docker, DOCKER_MODE, leftoversOf, sessionOf } from '../docker-setup.js';

const SECRET = 'top-secret-value-42';
const HOST_TOKEN = 'ghp_hostTokenThatMustNeverEnterTheContainer01';

describe(`Docker backend: filesystem, environment and limits (real engine, ${DOCKER_MODE.name})`, needs('docker'), () => {
  const t = tempHome();
  const proj = join(t.dir, 'proj');
  const run = (args: string[], script: string, env: NodeJS.ProcessEnv = {}, cwd = proj) =>
    cli(['agent', 'run', '--profile', 'dk', ...DOCKER_MODE.flags, ...args, '--', 'bash', '-c', script], { env: { ...t.env, ...env }, cwd, timeoutMs: 90_000 });

  before(() => {
    writeFile(join(proj, '.env'), `API_KEY=${SECRET}\n`);
    writeFile(join(proj, 'secrets', 'key.pem'), SECRET);
    writeFile(join(proj, 'notes', 'deep', 'cert.pem'), SECRET);
    writeFile(join(proj, 'config.lock'), 'locked\n');
    writeFile(join(proj, 'src', 'main.txt'), 'visible\n');
    symlinkSync('.env', join(proj, 'link-to-env'));
    writeFile(join(t.dir, 'outside.txt'), SECRET);
    writeFile(join(t.home, '.gitconfig'), '[user]\n\tname = Host Person\n\temail = host@example.test\n');
    writeFile(join(t.sbHome, 'agents', 'dk.toml'), [
      '[sandbox]', 'backend = "docker"',
      '[filesystem]', 'deny_read = [".env", "secrets", "**/*.pem", "absent-secret.txt"]', 'deny_write = ["config.lock", "absent-dir"]',
      '[config_env]', 'EDITOR = "vi"',
    ].join('\n') + '\n');
  });
  after(() => t.cleanup());

  test('denied files unreadable for root and not chmod-able, denied dirs empty, deny_write read-only, outside invisible', async () => {
    const script = [
      'r() { "$@" >/dev/null 2>&1 && echo open || echo blocked; }',
      'echo "whoami=$(id -u)"',
      'echo "cat_env=$(r cat .env)"',
      'echo "cat_link=$(r cat link-to-env)"',
      'echo "proc_root=$(r cat /proc/self/root$PWD/.env)"',
      'echo "chmod_env=$(r chmod 644 .env)"',
      'echo "cat_after_chmod=$(r cat .env)"',
      'echo "ls_secrets=[$(ls -A secrets)]"',
      'echo "cat_glob=$(r cat notes/deep/cert.pem)"',
      'echo "write_lock=$(r sh -c "echo x > config.lock")"',
      'echo "create_absent=$(r sh -c "echo x > absent-secret.txt")"',
      'echo "create_absent_dir=$(r sh -c "echo x > absent-dir/hook")"',
      'echo "umount=$(r umount .env)"',
      'mv notes notes-moved 2>/dev/null; echo "moved_parent=$(r cat notes-moved/deep/cert.pem)"; mv notes-moved notes 2>/dev/null',
      'echo "outside=$(r cat ../outside.txt)"',
      'echo "visible=$(cat src/main.txt)"',
      'echo "write_src=$(r sh -c "echo y >> src/main.txt")"',
      `grep -rqs ${SECRET} . /home/agent /tmp && echo leak=yes || echo leak=no`,
    ].join('\n');
    const r = await run([], script);
    assert.equal(r.code, 0, r.stderr);
    const got = Object.fromEntries(r.stdout.trim().split('\n').map((l) => l.split('=') as [string, string]));
    assert.deepEqual(got, {
      whoami: String(process.getuid?.()),
      cat_env: 'blocked', cat_link: 'blocked', proc_root: 'blocked', chmod_env: 'blocked', cat_after_chmod: 'blocked',
      ls_secrets: '[]', cat_glob: 'blocked', write_lock: 'blocked', create_absent: 'blocked', create_absent_dir: 'blocked',
      umount: 'blocked', moved_parent: 'blocked', outside: 'blocked', visible: 'visible', write_src: 'open', leak: 'no',
    });
    assert.equal(readFileSync(join(proj, '.env'), 'utf8'), `API_KEY=${SECRET}\n`, 'the host copy is untouched');
    assert.equal(readFileSync(join(proj, 'config.lock'), 'utf8'), 'locked\n');
    assert.equal(existsSync(join(proj, 'absent-secret.txt')), false, 'stand-ins are removed after the run');
    assert.equal(existsSync(join(proj, 'absent-dir')), false);
    assert.deepEqual(leftoversOf(sessionOf(r.stderr)), []);
  });

  test('a parent of a protected path cannot be renamed away to plant a new one (.git/config, a deny_write file deeper down)', async () => {
    const repo = join(t.dir, 'gitproj');
    writeFile(join(repo, 'conf', 'app.toml'), 'safe = true\n');
    const git = (args: string[]) => spawnSync('git', ['-C', repo, ...args], { env: t.env, encoding: 'utf8' });
    assert.equal(git(['init', '-q']).status, 0);
    writeFile(join(t.sbHome, 'agents', 'dkgit.toml'), '[sandbox]\nbackend = "docker"\n[filesystem]\ndeny_write = [".git/config", ".git/hooks", "conf/app.toml"]\n');
    const configBefore = readFileSync(join(repo, '.git', 'config'), 'utf8');
    const script = [
      'try() { if eval "$1" >/dev/null 2>&1; then echo "DONE $2"; else echo "blocked $2"; fi; }',
      `try 'mv .git .git-old && mkdir .git && echo "[core] fsmonitor = touch /tmp/PWNED" > .git/config' git`,
      `try 'mv .git/hooks .git/hooks-old && mkdir .git/hooks && echo "touch /tmp/PWNED" > .git/hooks/pre-commit' hooks`,
      `try 'mv conf conf-old && mkdir conf && echo "safe = false" > conf/app.toml' conf`,
      'git status --short >/dev/null && echo status-ok',
      // .git/commondir would send git to another directory's config: here it lands in the run's own git directory, never in yours.
      `try 'echo /tmp > .git/commondir' commondir`,
      `try 'printf "[core]\\n\\tfsmonitor = x\\n" > .git/config.worktree' config.worktree`,
    ].join('\n');
    const r = await cli(['agent', 'run', '--profile', 'dkgit', ...DOCKER_MODE.flags, '--', 'bash', '-c', script], { env: t.env, cwd: repo, timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'blocked git\nblocked hooks\nblocked conf\nstatus-ok\nDONE commondir\nDONE config.worktree\n');
    assert.equal(existsSync(join(repo, '.git', 'commondir')), false, 'the run\'s commondir never reaches your .git');
    assert.equal(existsSync(join(repo, '.git', 'config.worktree')), false, 'nor its config.worktree');
    // (.stashbase: where worktree runs make their worktrees, made by stashbase before the run, read-only in it.)
    assert.deepEqual(readdirSync(repo).sort(), ['.git', '.stashbase', 'conf']);
    assert.equal(readFileSync(join(repo, '.git', 'config'), 'utf8'), configBefore);
    assert.equal(readFileSync(join(repo, 'conf', 'app.toml'), 'utf8'), 'safe = true\n');
    assert.equal(existsSync(join(repo, '.git', 'hooks-old')), false);
    // The control: the same renames work outside.
    const outside = spawnSync('bash', ['-c', 'mv conf conf-old && mv conf-old conf && mv .git .git-old && mv .git-old .git && echo ok'], { cwd: repo, encoding: 'utf8' });
    assert.equal(outside.stdout, 'ok\n', outside.stderr);
    assert.deepEqual(leftoversOf(sessionOf(r.stderr)), []);
  });

  test('exactly the listed environment: no host token in env or /proc/1/environ; git identity forwarded; git commit works', async () => {
    const script = 'env -0 | tr "\\0" "\\n" | cut -d= -f1 | sort | tr "\\n" " "; echo; tr "\\0" "\\n" < /proc/1/environ | grep -c ghp_ || true; git init -q repo && cd repo && git commit -q --allow-empty -m sandboxed && git log --format=%an/%ae/%cn/%ce';
    const r = await run([], script, { GITHUB_TOKEN: HOST_TOKEN, OPENAI_API_KEY: 'sk-host-secret', TERM: 'xterm-256color', COLORTERM: 'truecolor', SSH_AUTH_SOCK: '/tmp/agent.sock' });
    assert.equal(r.code, 0, r.stderr);
    const [names = '', procCount, identity] = r.stdout.trim().split('\n');
    const set = new Set(names.trim().split(' '));
    for (const bad of ['GITHUB_TOKEN', 'OPENAI_API_KEY', 'SSH_AUTH_SOCK', 'STASHBASE_HOME', 'LANG']) assert.equal(set.has(bad), false, `${bad} reached the container`);
    const ours = ['HOME', 'IS_SANDBOX', 'TERM', 'COLORTERM', 'GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL', 'HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy', 'NO_PROXY', 'no_proxy', 'EDITOR',
      // Set empty (review, round 36): the docker CLI would add your config.json's proxies for any it left unset.
      'FTP_PROXY', 'ftp_proxy', 'GRPC_PROXY', 'grpc_proxy'];
    // The rest is the image's own ENV and what Docker and bash set themselves.
    const image = ['PATH', 'NPM_CONFIG_PREFIX', 'DISABLE_AUTOUPDATER', 'CODEX_DISABLE_UPDATE_CHECK', 'PIP_BREAK_SYSTEM_PACKAGES', 'HOSTNAME', 'PWD', 'SHLVL', '_'];
    assert.deepEqual([...set].sort(), [...ours, ...image].sort());
    assert.equal(procCount, '0');
    assert.equal(identity, 'Host Person/host@example.test/Host Person/host@example.test');
    rmSync(join(proj, 'repo'), { recursive: true, force: true });
  });

  test("(review) the container's environment is on no process's command line while the agent runs (every user of the machine reads them in /proc; the proxy's URL holds the run's token): the docker CLI reads it from a file of yours alone; control: given as --env, it is on the CLI's command line", async () => {
    const holding = (needle: string) => readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'latin1').includes(needle);
      } catch {
        return false;
      }
    }).length;
    const running = run([], 'echo "$HTTPS_PROXY" > proxy-url.txt; sleep 2');
    for (let i = 0; i < 200 && !existsSync(join(proj, 'proxy-url.txt')); i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    const url = readFileSync(join(proj, 'proxy-url.txt'), 'utf8').trim();
    assert.match(url, /^http:\/\/stashbase:[0-9a-f]{16,}@/);
    // (This run's token alone: the other Docker modes' files run beside this one.)
    assert.equal(holding(url), 0);
    const r = await running;
    assert.equal(r.code, 0, r.stderr);
    rmSync(join(proj, 'proxy-url.txt'));
    // Control: a process given it as an argument (as --env gave it to the docker CLI) holds it where any user reads it.
    const ctl = (await import('node:child_process')).spawn('sh', ['-c', 'sleep 1', 'sh', '--env', `HTTPS_PROXY=${url}`]);
    await new Promise((r) => setTimeout(r, 300));
    assert.notEqual(holding(url), 0);
    await new Promise((r) => ctl.on('exit', r));
  });

  test("the run's CA key and stashbase state stay hidden even when the working directory holds them", async () => {
    // A profile with a secret makes the run mint its CA; running from HOME puts $STASHBASE_HOME in view.
    writeFile(join(t.sbHome, 'agents', 'dkca.toml'), '[sandbox]\nbackend = "docker"\n[network]\negress_hosts = ["api.test"]\n[secrets.TOKEN]\nsource = "HOST_TOKEN"\nhosts = ["api.test"]\n');
    // Listed by Python: coreutils' ls fails with EINVAL on every path under Debian's runsc (its statx flags), python's stat works on both runtimes.
    const list = (dir: string) => `python3 -c 'import os, sys; print(" ".join(sorted(os.listdir(sys.argv[1]))))' ${dir} 2>&1`;
    const script = `echo "state=[$(${list(t.sbHome)})]"; ${list('/etc/stashbase')}; grep -rls "PRIVATE KEY" /etc/stashbase /home/agent ${t.home} 2>/dev/null | wc -l`;
    const r = await cli(['agent', 'run', '--profile', 'dkca', '--profile-source', 'global', ...DOCKER_MODE.flags, '--', 'bash', '-c', script], { env: { ...t.env, HOST_TOKEN: 'real-token' }, cwd: t.home, timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.stderr);
    // The key lived in stashbase's memory only: no file of it on the host either.
    assert.equal(existsSync(join(t.sbHome, 'ca')), false);
    assert.equal(spawnSync('grep', ['-rlsE', 'BEGIN [A-Z ]*PRIVATE KEY-----', t.sbHome], { encoding: 'utf8' }).stdout, '');
    assert.deepEqual(r.stdout.trim().split('\n'), ['state=[]', 'agent-versions ca-bundle.pem ca.pem', '0']);
  });

  test("socket families by allow-list in the agent container: AF_VSOCK and the rest refused, and (unnamed) the 32-bit socketcall path too; threads and git still work; control: Docker's own profile lets both through", async () => {
    const families = [
      'import socket, errno',
      'for name, fam, typ, proto in [("inet",2,1,0),("inet6",10,1,0),("unix",1,1,0),("netlink-route",16,3,0),("netlink-uevent",16,3,15),("vsock",40,1,0),("xdp",44,3,0),("alg",38,5,0)]:',
      '    try:',
      '        socket.socket(fam, typ, proto).close(); print(name, "ok")',
      '    except OSError as e:',
      '        print(name, errno.errorcode.get(e.errno, e.errno))',
      'import threading',
      't = threading.Thread(target=lambda: print("thread ok")); t.start(); t.join()',
    ].join('\n');
    // socket(AF_VSOCK) through the i386 socketcall(2), which no filter can read: int 0x80 from 32-bit addressable memory.
    const socketcall = [
      'import ctypes, struct',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'libc.mmap.restype = ctypes.c_void_p',
      'libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]',
      'mem = libc.mmap(None, 4096, 7, 0x22 | 0x40, -1, 0)',
      'struct.pack_into("<III", (ctypes.c_char * 4096).from_address(mem), 256, 40, 1, 0)',
      'code = b"\\x53\\xb8" + struct.pack("<I", 102) + b"\\xbb" + struct.pack("<I", 1) + b"\\xb9" + struct.pack("<I", mem + 256) + b"\\xcd\\x80\\x5b\\xc3"',
      'ctypes.memmove(mem, code, len(code))',
      'r = ctypes.CFUNCTYPE(ctypes.c_int)(mem)()',
      // gVisor runs int 0x80 as a 64-bit call (102: getuid): only a socket of the family asked for counts.
      'import socket',
      'try:',
      '    ok = r >= 0 and socket.socket(fileno=r).family == 40',
      'except OSError:',
      '    ok = False',
      'print("socketcall-vsock", "ok" if ok else ("not-a-socket" if r >= 0 else -r), flush=True)',
    ].join('\n');
    writeFile(join(proj, 'families.py'), families);
    writeFile(join(proj, 'socketcall.py'), socketcall);
    const parse = (t: string) => Object.fromEntries(t.trim().split('\n').map((l) => l.split(' ') as [string, string]));
    // The control: the same image under Docker's own profile.
    const ctl = spawnSync('docker', ['run', '--rm', '--network', 'none', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges', '-v', `${proj}:/p:ro`, '-w', '/p', 'stashbase-sandbox:latest', 'sh', '-c', 'python3 families.py; python3 socketcall.py'], { encoding: 'utf8' });
    const outside = parse(ctl.stdout);
    assert.equal(outside.vsock, 'ok', `Docker's own profile lets AF_VSOCK through on this engine: ${ctl.stdout}${ctl.stderr}`);
    if (process.arch === 'x64') assert.equal(outside['socketcall-vsock'], 'ok', 'and socketcall on every engine');
    const r = await run([], `python3 families.py; git --version >/dev/null && echo git ok; ${process.arch === 'x64' ? 'python3 socketcall.py; echo "socketcall-exit $?"' : ''}`);
    const inside = parse(r.stdout);
    assert.deepEqual([inside.inet, inside.inet6, inside.unix, inside['netlink-route'], inside.thread, inside.git], ['ok', 'ok', 'ok', 'ok', 'ok', 'ok'], r.stdout + r.stderr);
    for (const f of ['netlink-uevent', 'vsock', 'xdp', 'alg']) assert.equal(inside[f], 'EPERM', f);
    // A foreign ABI is no ABI of the profile: the process is stopped by SIGSYS before the call (gVisor has no 32-bit ABI: no socket either).
    if (process.arch === 'x64' && !DOCKER_MODE.gvisor) assert.equal(inside['socketcall-exit'], '159', r.stdout);
    if (process.arch === 'x64' && DOCKER_MODE.gvisor) assert.equal(inside['socketcall-vsock'], 'not-a-socket', r.stdout);
  });

  // Under gVisor there are no cgroup files inside: the limits are read from the engine, and a fork bomb ends the run (gVisor's kernel stops at the host's pids limit), not the host.
  const gvisorLimits = async () => {
    const running = run(['--docker-memory', '1g', '--docker-cpus', '0.5'], 'sleep 4');
    let limits = '';
    for (let i = 0; i < 80 && limits === ''; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const id = docker(['ps', '--filter', `volume=${proj}`, '--format', '{{.ID}}']).trim().split('\n')[0] ?? '';
      if (id) limits = spawnSync('docker', ['inspect', '--format', '{{.HostConfig.Runtime}} {{.HostConfig.Memory}} {{.HostConfig.NanoCpus}} {{.HostConfig.PidsLimit}}', id], { encoding: 'utf8' }).stdout.trim();
    }
    assert.equal((await running).code, 0);
    assert.equal(limits, 'runsc 1073741824 500000000 2048');
    writeFile(join(proj, 'bomb.py'), 'import os, time\nwhile True:\n  if os.fork() == 0:\n    time.sleep(60); os._exit(0)\n');
    const r = await run([], 'setsid python3 bomb.py; echo survived');
    assert.notEqual(r.code, 0);
    assert.doesNotMatch(r.stdout, /survived/);
    assert.deepEqual(leftoversOf(sessionOf(r.stderr)), []);
  };

  test(`limits: memory and cpus reach the container, a fork bomb stops at the pids limit${DOCKER_MODE.gvisor ? ' (gVisor: read from the engine; the bomb ends the run, not the host)' : ''}`, async () => {
    if (DOCKER_MODE.gvisor) return gvisorLimits();
    const bomb = 'import os, time\nn = 0\ntry:\n  while n < 5000:\n    if os.fork() == 0:\n      time.sleep(60); os._exit(0)\n    n += 1\nexcept OSError:\n  pass\nprint(n, flush=True)\nos.killpg(0, 9)\n';
    writeFile(join(proj, 'bomb.py'), bomb);
    const r = await run(['--docker-memory', '1g', '--docker-cpus', '0.5'], 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max; cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us 2>/dev/null || cut -d" " -f1 /sys/fs/cgroup/cpu.max; setsid python3 bomb.py; true');
    assert.equal(r.code, 0, r.stderr);
    const [mem, quota, forks] = r.stdout.trim().split('\n');
    assert.equal(mem, String(1024 * 1024 * 1024));
    assert.equal(quota, '50000');
    assert.ok(Number(forks) > 100 && Number(forks) < 2048, `forks before the limit: ${forks}`);
  });

  test('isolated paths: a folder above one cannot be renamed away (found in review: the host copy would then be where a local MCP server writes); control: outside it can', async () => withIsolatedVolumes(async () => {
    // (Whole, under the volumes' lock: the other Docker modes' files list and remove isolated volumes engine-wide.)
    writeFile(join(proj, 'web', 'node_modules', 'keep.txt'), 'host\n');
    const r = await run(['--docker-isolated-paths', 'web/node_modules'], 'mv web web2 2>/dev/null && echo moved || echo refused');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'refused\n');
    assert.equal(readFileSync(join(proj, 'web', 'node_modules', 'keep.txt'), 'utf8'), 'host\n');
    const { renameSync } = await import('node:fs');
    renameSync(join(proj, 'web'), join(proj, 'web2'));
    renameSync(join(proj, 'web2'), join(proj, 'web'));
    rmSync(join(proj, 'web'), { recursive: true, force: true });
    const removed = await cli(['agent', 'docker', 'cleanup', '--isolated-paths', '--yes'], { env: t.env, timeoutMs: 60_000 });
    assert.equal(removed.code, 0, removed.stderr);
  }));

  test("isolated paths: a folder above one that an earlier run replaced by a link to your files is refused, nothing mounted (found in review: Docker bound the link's target read-write); control: without the link the run goes on", async () => withIsolatedVolumes(async () => {
    // (Whole, under the volumes' lock: the other Docker modes' files list and remove isolated volumes engine-wide.)
    const victim = join(t.dir, 'victim');
    writeFile(join(victim, 'secret.txt'), SECRET);
    // An earlier run (no isolated paths then) swaps the folder for a link.
    const plant = await run([], `mkdir -p app && mv app app.orig && ln -s ${victim} app && echo planted`);
    assert.equal(plant.code, 0, plant.stderr);
    assert.equal(plant.stdout, 'planted\n');
    const r = await run(['--docker-isolated-paths', 'app/node_modules'], `cat ${victim}/secret.txt; echo x > ${victim}/pwned.txt; echo ran`);
    assert.equal(r.code, 4, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, new RegExp(`stashbase: ${proj}/app is reached through a link \\(it leads to ${victim}\\), and the run binds it into the sandbox, which would show what the link names instead: remove the link, or name the real path in the profile; nothing was run`));
    assert.deepEqual(readdirSync(victim), ['secret.txt'], 'nothing was made or written in the folder the link names');
    // Control: the folder itself again, and the same run goes on.
    rmSync(join(proj, 'app'));
    renameSync(join(proj, 'app.orig'), join(proj, 'app'));
    // test, not ls: coreutils' statx fails under Debian's runsc.
    const ok = await run(['--docker-isolated-paths', 'app/node_modules'], 'test -d app/node_modules && echo ran');
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout, 'ran\n');
    rmSync(join(proj, 'app'), { recursive: true, force: true });
    const removed = await cli(['agent', 'docker', 'cleanup', '--isolated-paths', '--yes'], { env: t.env, timeoutMs: 60_000 });
    assert.equal(removed.code, 0, removed.stderr);
  }));

  test('isolated paths: one volume per repository and entry, persists across runs, the host copy untouched', async () => withIsolatedVolumes(async () => {
    // (Whole, under the volumes' lock: the other Docker modes' files list and remove isolated volumes engine-wide.)
    writeFile(join(proj, 'node_modules', 'host-only.txt'), 'host\n');
    // Python, not ls: coreutils' statx fails under Debian's runsc.
    const first = await run(['--docker-isolated-paths', 'node_modules'], `python3 -c 'import os; print(" ".join(os.listdir("node_modules")))'; echo sandbox > node_modules/inside.txt; python3 -c 'import os, stat; print(stat.filemode(os.stat("node_modules").st_mode))'`);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, '\ndrwxr-xr-x\n', 'the volume starts empty, owned by the agent\'s user');
    assert.deepEqual(readdirSync(join(proj, 'node_modules')), ['host-only.txt']);
    const second = await run(['--docker-isolated-paths', 'node_modules'], 'cat node_modules/inside.txt');
    assert.equal(second.stdout, 'sandbox\n');
    const volumes = docker(['volume', 'ls', '--filter', `label=stashbase.repo=${proj}`, '--format', '{{.Name}} {{.Label "stashbase.isolated-path"}}']).trim().split('\n');
    assert.equal(volumes.length, 1);
    assert.match(volumes[0] as string, /^stashbase-isolated-proj-[0-9a-f]{10}-node-modules-[0-9a-f]{6} node_modules$/);
    const name = (volumes[0] as string).split(' ')[0] as string;
    const listed = await cli(['agent', 'docker', 'cleanup', '--isolated-paths'], { env: t.env });
    assert.equal(listed.code, 1, 'without a terminal or --yes nothing is removed');
    assert.match(listed.stdout, new RegExp(`^${name}\t${proj}\tnode_modules$`, 'm'));
    assert.equal(docker(['volume', 'ls', '--quiet', '--filter', `name=${name}`]).trim(), name);
    const removed = await cli(['agent', 'docker', 'cleanup', '--isolated-paths', '--yes'], { env: t.env, timeoutMs: 60_000 });
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(docker(['volume', 'ls', '--quiet', '--filter', `name=${name}`]).trim(), '');
  }));

  test('(review, round 26) a deny_read glob whose fixed folder is a link (~/code/**/*.key, ~/code a link to the real folder): a run started in it hides the file; control: outside the sandbox it is there', async () => {
    const realCode = join(t.dir, 'real-code');
    writeFile(join(realCode, 'app', 'id.key'), SECRET);
    writeFile(join(realCode, 'app', 'notes.txt'), 'notes\n');
    symlinkSync(realCode, join(t.home, 'code'));
    writeFile(join(t.sbHome, 'agents', 'linked.toml'), ['[sandbox]', 'backend = "docker"', '[filesystem]', 'deny_read = ["~/code/**/*.key"]'].join('\n') + '\n');
    assert.equal(readFileSync(join(t.home, 'code', 'app', 'id.key'), 'utf8'), SECRET, 'control: the file is there');
    const r = await cli(['agent', 'run', '--silent', '--profile', 'linked', ...DOCKER_MODE.flags, '--', 'bash', '-c', 'cat id.key 2>&1 || true; cat notes.txt'], { env: t.env, cwd: join(t.home, 'code', 'app'), timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, new RegExp(SECRET.trim()));
    assert.match(r.stdout, /^cat: id\.key: Permission denied\nnotes\n$/);
  });

  test('isolated paths: labels another user of the engine wrote are shown escaped, one row each, and add no volume to what cleanup removes (found in review)', async () => withIsolatedVolumes(async () => {
    // (Whole, under the volumes' lock: the other Docker modes' files list and remove isolated volumes engine-wide.)
    const hostile = `stashbase-isolated-labels-${process.pid}`;
    const bystander = `stashbase-isolated-bystander-${process.pid}`;
    docker(['volume', 'create', bystander]);
    docker(['volume', 'create', '--label', 'stashbase.isolated-path=/x\u001b]0;PWNED\u0007\u001b[2J', '--label', `stashbase.repo=r\u001b[31mRED\t\n${bystander}|a|b\n  indented`, hostile]);
    try {
      // Control: Docker keeps the labels as written.
      assert.equal(docker(['volume', 'inspect', '--format', '{{.Labels}}', hostile]).includes('\u001b[31m'), true);
      const listed = await cli(['agent', 'docker', 'cleanup', '--isolated-paths'], { env: t.env });
      assert.equal(listed.code, 1, listed.stderr);
      assert.equal(/[\u0000-\u0008\u000b-\u001f\u007f]/.test(listed.stdout), false, JSON.stringify(listed.stdout));
      const rows = listed.stdout.split('\n').filter((l) => l.startsWith('stashbase-isolated-') || l.startsWith(' '));
      assert.deepEqual(rows, [`${hostile}\tr\\x1b[31mRED\\x09\\x0a${bystander}|a|b\\x0a  indented\t/x\\x1b]0;PWNED\\x07\\x1b[2J`]);
      const removed = await cli(['agent', 'docker', 'cleanup', '--isolated-paths', '--yes'], { env: t.env, timeoutMs: 60_000 });
      assert.equal(removed.code, 0, removed.stderr);
      assert.equal(docker(['volume', 'ls', '--quiet', '--filter', `name=${hostile}`]).trim(), '');
      assert.equal(docker(['volume', 'ls', '--quiet', '--filter', `name=${bystander}`]).trim(), bystander, 'a volume without the label is not removed');
    } finally {
      spawnSync('docker', ['volume', 'rm', '--force', hostile, bystander], { encoding: 'utf8' });
    }
  }));
  test("(review, round 33) what your git config names in the tree is read-only: a clean filter's script, and the file a missing include names (a file stands in while the run lasts and is gone after); control: outside, both are written and your git add runs the planted filter", async () => {
    const repo = join(t.dir, 'named-repo');
    writeFile(join(repo, 'scripts', 'clean.sh'), 'cat\n');
    writeFile(join(repo, '.gitattributes'), '*.txt filter=strip\n');
    const g = (args: string[]) => spawnSync('git', args, { cwd: repo, env: t.env, encoding: 'utf8' });
    assert.equal(g(['init', '-q']).status, 0);
    assert.equal(g(['config', 'filter.strip.clean', 'sh scripts/clean.sh']).status, 0);
    assert.equal(g(['config', 'include.path', '../missing.cfg']).status, 0);
    const script = [
      'r() { "$@" >/dev/null 2>&1 && echo open || echo blocked; }',
      'echo "filter=$(r sh -c "echo \\"touch /tmp/x; cat\\" > scripts/clean.sh")"',
      'echo "include=$(r sh -c "printf \\"[core]\\\\n\\\\tfsmonitor = x\\\\n\\" > missing.cfg")"',
      'echo "other=$(r sh -c "echo x > scripts/other")"',
    ].join('\n');
    const r = await run([], script, {}, repo);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'filter=blocked\ninclude=blocked\nother=open\n');
    assert.equal(readFileSync(join(repo, 'scripts', 'clean.sh'), 'utf8'), 'cat\n');
    assert.equal(existsSync(join(repo, 'missing.cfg')), false, 'the stand-in is gone');
    // The control: outside, both are written, and your git add runs the filter.
    const marker = join(t.dir, 'CLEANED');
    writeFile(join(repo, 'scripts', 'clean.sh'), `touch ${marker}; cat\n`);
    writeFile(join(repo, 'a.txt'), 'a\n');
    assert.equal(g(['add', 'a.txt']).status, 0);
    assert.equal(existsSync(marker), true);
  });
});
