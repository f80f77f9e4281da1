// Attacks on the native backend's boundary with the default writes (an
// allow-list), real bwrap: control sockets, kernel interfaces, plants that a
// host program runs later, inherited descriptors. Each has its control
// outside the sandbox, where the same attack works.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { BIN, cli, needs, needsRoot, outsideTempBase, REPO, writeFile } from '../helpers.js';
import { attackHome } from '../native-setup.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(check: () => boolean, ms = 5000): Promise<boolean> {
  for (let waited = 0; waited < ms; waited += 50) {
    if (check()) return true;
    await sleep(50);
  }
  return check();
}

/** A Unix socket listener that counts connections: a stand-in for any control channel (it would run what it is sent). */
function listener(path: string): Promise<{ server: Server; hits: () => number }> {
  let hits = 0;
  const server = createServer((s) => {
    hits++;
    s.end('CONTROL\n');
  });
  return new Promise((resolve) => server.listen(path, () => resolve({ server, hits: () => hits })));
}

describe('native boundary: control sockets (real bwrap)', needs('bwrap'), () => {
  const a = attackHome();
  const h = a.home;
  after(() => a.cleanup());
  const connect = (path: string) => `python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(99))' ${path}`;

  test("a profile's [config_env] reaches the agent only: what starts the sandbox outside it (env, the relay's perl, bwrap) runs with your environment; control: the same variables make a perl outside run their code", async () => {
    const marker = join(h, 'escaped-by-env');
    const db = `BEGIN { open(F, ">>${marker}") and print F "outside\\n"; close F; } sub DB::DB {}`;
    writeFile(join(a.sbHome, 'agents', 'envx.toml'), `[config_env]\nPERL5OPT = "-d"\nPERL5DB = ${JSON.stringify(db)}\nLD_PRELOAD = "${h}/no-such.so"\n`);
    const r = await cli(['agent', 'run', '--silent', '--profile', 'envx', '--', 'sh', '-c', 'echo "$PERL5OPT"'], { env: a.env, cwd: a.proj });
    assert.equal(existsSync(marker), false, "the run's own perl outside the sandbox ran the profile's PERL5DB");
    // The agent still gets them.
    assert.equal(r.stdout, '-d\n', r.stderr);
    const c = spawnSync('perl', ['-e', '1'], { env: { ...a.env, PERL5OPT: '-d', PERL5DB: db }, encoding: 'utf8' });
    assert.equal(existsSync(marker) && readFileSync(marker, 'utf8'), 'outside\n', `${c.status} ${c.stderr}`);
  });

  test("the agent's environment runs nothing inside the sandbox before the agent: a module in the working directory named by PERL5LIB and PERL5OPT, and PERL5DB, are not loaded by the gate (whose socket to stashbase is open) nor before Landlock; the agent gets them; control: the agent's own perl runs them", async () => {
    const marker = join(a.proj, 'planted-ran');
    // Each records the process that loaded it and whether the gate's descriptor (8) was a live socket then.
    const record = `open(F, ">>", "${marker}") and print F "$0 ", (-S "/proc/self/fd/8" ? "fd8" : "-"), "\\n"; close F;`;
    writeFile(join(a.proj, 'lib', 'planted.pm'), `package planted; ${record} 1;\n`);
    writeFile(join(a.proj, 'lib', 'Errno.pm'), `package Errno; ${record} 1;\n`);
    writeFile(join(a.sbHome, 'agents', 'perlenv.toml'), `[config_env]\nPERL5LIB = "lib"\nPERL5OPT = "-Mplanted"\n`);
    const db = `BEGIN { ${record} } sub DB::DB {}`;
    writeFile(join(a.sbHome, 'agents', 'perldb.toml'), `[config_env]\nPERL5OPT = "-d"\nPERL5DB = ${JSON.stringify(db)}\n`);
    for (const profile of ['perlenv', 'perldb']) {
      rmSync(marker, { force: true });
      // PWD as bwrap sets it, the working directory, whatever yours said.
      const r = await cli(['agent', 'run', '--silent', '--profile', profile, '--', 'sh', '-c', 'echo "$PERL5OPT|$PERL5LIB|$PWD"'], { env: { ...a.env, PWD: '/elsewhere' }, cwd: a.proj });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `${profile === 'perlenv' ? '-Mplanted|lib' : '-d|'}|${a.proj}\n`, r.stderr);
      assert.equal(existsSync(marker) ? readFileSync(marker, 'utf8') : '', '', `${profile}: code of the agent's ran before the agent`);
      // Control: the agent's own perl, in the same sandbox, loads them (once: nothing else of the run did).
      const c = await cli(['agent', 'run', '--silent', '--profile', profile, '--', 'perl', '-e', '1'], { env: a.env, cwd: a.proj });
      assert.equal(c.code, 0, c.stderr);
      assert.equal(readFileSync(marker, 'utf8'), '-e -\n', profile);
    }
  });

  test("a folder on your PATH that the agent writes runs nothing it left there on your side: relative ones (node_modules/.bin, ., an empty entry), absolute ones under the working directory (direnv's), a link into it, and one the agent makes during the run; the tools stashbase runs (env, bwrap, perl, git) come from the others, and its children get none of these folders; control: the same PATH runs the planted git outside", async () => {
    const repo = join(h, 'pathrepo');
    mkdirSync(repo);
    for (const args of [['init', '-q'], ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'init']]) spawnSync('git', args, { cwd: repo });
    const marker = join(repo, 'planted-tool-ran');
    const plant = (dir: string) => {
      for (const tool of ['env', 'bwrap', 'perl', 'git', 'ssh', 'systemctl', 'id']) {
        writeFile(join(dir, tool), `#!/bin/sh\necho ${tool} >> ${marker}\nexit 1\n`);
        chmodSync(join(dir, tool), 0o755);
      }
    };
    for (const dir of [join(repo, 'node_modules', '.bin'), repo, join(repo, 'bin'), join(repo, 'tools')]) plant(dir);
    symlinkSync(join(repo, 'tools'), join(h, 'linkbin'));
    const PATH = `node_modules/.bin:.::${repo}/bin:${repo}/later:${h}/linkbin:${process.env.PATH}`;
    // The agent makes a folder on your PATH with a git in it; its own command by its full name (the agent's PATH is its own).
    const make = `mkdir later && printf '#!/bin/sh\\necho git-made-during-the-run >> ${marker}\\nexit 1\\n' > later/git && chmod 755 later/git && echo ran && echo "$PATH"`;
    const r = await cli(['agent', 'run', '--silent', '--', '/bin/sh', '-c', make], { env: { ...a.env, PATH }, cwd: repo });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `ran\n${PATH}\n`, r.stderr);
    assert.equal(existsSync(join(repo, 'later', 'git')), true, 'the agent made its git');
    assert.equal(existsSync(marker) ? readFileSync(marker, 'utf8') : '', '', 'a planted tool ran on your side');
    // Control: outside, the same PATH runs the planted git (the first folder's).
    const c = spawnSync('git', ['--version'], { env: { PATH }, cwd: repo, encoding: 'utf8' });
    assert.equal(readFileSync(marker, 'utf8'), 'git\n', `${c.status} ${c.stderr}`);
  });

  test("a library folder of your LD_LIBRARY_PATH that the agent writes (an empty entry, as `$LD_LIBRARY_PATH:/opt/lib` with it unset, is the current folder) loads nothing the agent left into stashbase's git on your side; the agent still gets the variable; control: the same variable has git load it outside", needs('gcc'), async () => {
    const repo = join(h, 'ldrepo');
    mkdirSync(repo);
    for (const args of [['init', '-q'], ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'init']]) spawnSync('git', args, { cwd: repo });
    const marker = join(h, 'ld-planted-ran');
    // A libz that records who loaded it, left in the repository (git links libz).
    writeFile(join(h, 'plant.c'), `#include <stdio.h>\n#include <unistd.h>\n__attribute__((constructor)) static void planted(void) { FILE *f = fopen("${marker}", "a"); if (f) { fprintf(f, "loaded\\n"); fclose(f); } }\n`);
    const cc = spawnSync('gcc', ['-shared', '-fPIC', '-o', join(repo, 'libz.so.1'), join(h, 'plant.c')], { encoding: 'utf8' });
    assert.equal(cc.status, 0, cc.stderr);
    const LD_LIBRARY_PATH = ':/opt/none/lib';
    const r = await cli(['agent', 'run', '--silent', '--', '/bin/sh', '-c', 'echo "[$LD_LIBRARY_PATH]"'], { env: { ...a.env, LD_LIBRARY_PATH }, cwd: repo });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `[${LD_LIBRARY_PATH}]\n`, r.stderr);
    assert.equal(existsSync(marker) ? readFileSync(marker, 'utf8') : '', '', 'the agent\'s library was loaded on your side');
    spawnSync('git', ['status', '--short'], { env: { PATH: process.env.PATH, LD_LIBRARY_PATH }, cwd: repo });
    assert.equal(existsSync(marker) && readFileSync(marker, 'utf8').startsWith('loaded\n'), true, 'control: git loads it outside');
  });

  test("a folder on your PATH that a profile's allow_write lets the agent write is passed over as the working directory is: no bwrap, env, perl or git the agent left there runs, at a run's start (git asked of the repository first) or in `agent validate`, nor a docker `agent validate --backend docker` finds in node_modules/.bin; control: the same PATH runs the planted tools outside", needs('git'), async () => {
    const tools = join(h, 'npm-global', 'bin');
    const marker = join(h, 'allowed-tool-ran');
    for (const tool of ['bwrap', 'env', 'perl', 'git', 'docker', 'systemctl']) {
      writeFile(join(tools, tool), `#!/bin/sh\necho ${tool} >> ${marker}\nexit 1\n`);
      chmodSync(join(tools, tool), 0o755);
    }
    writeFile(join(a.sbHome, 'agents', 'npmg.toml'), '[filesystem]\nallow_write = ["~/npm-global"]\n');
    const repo = join(h, 'npmg-repo');
    mkdirSync(repo);
    for (const args of [['init', '-q'], ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'init']]) spawnSync('git', args, { cwd: repo });
    const PATH = `${tools}:${process.env.PATH}`;
    for (const extra of [[], ['--worktree']]) {
      const r = await cli(['agent', 'run', '--silent', '--profile', 'npmg', ...extra, '--', '/bin/sh', '-c', 'echo ran'], { env: { ...a.env, PATH }, cwd: repo });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'ran\n', extra.join(' '));
    }
    const v = await cli(['agent', 'validate', '--profile', 'npmg'], { env: { ...a.env, PATH }, cwd: repo });
    assert.match(v.stdout, /bubblewrap at \/usr\/bin\/bwrap works/, v.stdout);
    writeFile(join(a.proj, 'node_modules', '.bin', 'docker'), `#!/bin/sh\necho docker >> ${marker}\nexit 1\n`);
    chmodSync(join(a.proj, 'node_modules', '.bin', 'docker'), 0o755);
    await cli(['agent', 'validate', '--backend', 'docker'], { env: { ...a.env, PATH: `node_modules/.bin:${process.env.PATH}` }, cwd: a.proj });
    assert.equal(existsSync(marker) ? readFileSync(marker, 'utf8') : '', '', 'a planted tool ran on your side');
    // Control: outside, these PATHs run them.
    spawnSync('git', ['--version'], { env: { PATH } });
    spawnSync('docker', ['version'], { env: { PATH: `node_modules/.bin:${process.env.PATH}` }, cwd: a.proj });
    assert.equal(readFileSync(marker, 'utf8'), 'git\ndocker\n');
  });

  test("tmux: new-window through your server's socket runs nothing on the host", async () => {
    const sock = join(h, 'tmux-sock');
    const pwned = join(a.dir, 'PWNED-tmux');
    assert.equal(spawnSync('tmux', ['-S', sock, 'new-session', '-d', 'sleep 60']).status, 0);
    try {
      const r = await a.inside(`tmux -S ${sock} new-window -d 'touch ${pwned}'; echo "rc=$?"`);
      assert.equal(r.stdout, 'rc=1\n');
      assert.match(r.stderr, /Operation not permitted/);
      await sleep(300);
      assert.equal(existsSync(pwned), false);
      // The control: the same command outside runs it.
      assert.equal(spawnSync('tmux', ['-S', sock, 'new-window', '-d', `touch ${pwned}`]).status, 0);
      assert.equal(await until(() => existsSync(pwned)), true);
    } finally {
      spawnSync('tmux', ['-S', sock, 'kill-server']);
      rmSync(pwned, { force: true });
    }
  });

  test('a listener in the home, and one in the working directory made after the run started: neither reachable', async () => {
    const inHome = await listener(join(h, 'kitty-control.sock'));
    let late: Awaited<ReturnType<typeof listener>> | null = null;
    const go = join(a.proj, 'go');
    const running = a.inside(`${connect(join(h, 'kitty-control.sock'))}; while [ ! -e ${go} ]; do sleep 0.05; done; ${connect(join(a.proj, 'late.sock'))}; echo end`);
    try {
      await sleep(500);
      late = await listener(join(a.proj, 'late.sock'));
      writeFileSync(go, '');
      const r = await running;
      assert.equal(r.stdout, 'end\n');
      assert.equal(r.stderr.match(/PermissionError: \[Errno 1\] Operation not permitted/g)?.length, 2, r.stderr);
      assert.deepEqual([inHome.hits(), late.hits()], [0, 0]);
      // The control: the same connects outside reach both.
      const out = await a.outside(`${connect(join(h, 'kitty-control.sock'))}; ${connect(join(a.proj, 'late.sock'))}`);
      assert.equal(out.stdout, "b'CONTROL\\n'\nb'CONTROL\\n'\n");
    } finally {
      inHome.server.close();
      late?.server.close();
      rmSync(go, { force: true });
    }
  });

  test('host network mode: the abstract socket namespace is shared, and still unreachable', async () => {
    writeFile(join(a.sbHome, 'agents', 'hostnet.toml'), '[sandbox]\nnative_network = "host"\n');
    const name = `sbtest-${process.pid}`;
    const abstract = await listener(`\0${name}`);
    // Node binds the whole 108-byte sun_path, NUL-padded: the name to connect to is that long too.
    const py = `python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(b"\\0${name}".ljust(108, b"\\0")); print(s.recv(99))'`;
    try {
      const r = await cli(['agent', 'run', '--profile', 'hostnet', '--silent', '--', 'sh', '-c', py], { env: a.env, cwd: a.proj });
      assert.match(r.stderr, /PermissionError: \[Errno 1\] Operation not permitted/);
      assert.equal(abstract.hits(), 0);
      assert.equal((await a.outside(py)).stdout, "b'CONTROL\\n'\n");
    } finally {
      abstract.server.close();
    }
  });

  test("another run's proxy: nothing of it is on the filesystem or in reach, and a run allowed Unix sockets gets no service with that run's credential", async () => {
    const go = join(a.proj, 'release');
    const first = spawn(process.execPath, [BIN, 'agent', 'run', '--silent', '--', 'sh', '-c', `echo "$HTTPS_PROXY"; while [ ! -e ${go} ]; do sleep 0.05; done`], { env: a.env, cwd: a.proj, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const proxyUrl = await new Promise<string>((res) => first.stdout.once('data', (d: Buffer) => res(String(d).trim())));
      const session = readFileSync(join(a.sbHome, 'sessions', spawnSync('ls', [join(a.sbHome, 'sessions')], { encoding: 'utf8' }).stdout.trim()), 'utf8');
      const runDir = (JSON.parse(session) as { runDir: string }).runDir;
      assert.equal(runDir.startsWith(join(a.sbHome, 'runs') + '/'), true, 'the run directory is under $STASHBASE_HOME/runs, which every sandbox is denied');
      // The proxy accepts in the first run's own network namespace: no socket of it anywhere on disk.
      assert.equal(existsSync(runDir), true);
      assert.equal(spawnSync('find', [runDir, '-type', 's'], { encoding: 'utf8' }).stdout, '');
      const inside = await a.inside(`ls ${runDir}`);
      assert.match(inside.stderr, /No such file or directory/);
      // A second run, allowed Unix sockets, with the first run's credential: its 127.0.0.1:18080 is its own proxy, which refuses it.
      const { username, password } = new URL(proxyUrl);
      const auth = Buffer.from(`${decodeURIComponent(username)}:${decodeURIComponent(password)}`).toString('base64');
      const ask = `python3 -c 'import socket; s=socket.create_connection(("127.0.0.1", 18080)); s.sendall(b"CONNECT api.anthropic.com:443 HTTP/1.1\\r\\nHost: api.anthropic.com:443\\r\\nProxy-Authorization: Basic ${auth}\\r\\n\\r\\n"); print(s.recv(200).split(b"\\r\\n")[0])'; find /tmp -maxdepth 2 -type s -path '/tmp/stashbase-*' | wc -l`;
      writeFile(join(a.sbHome, 'agents', 'sockets.toml'), '[sandbox]\nallow_unix_sockets = true\n[filesystem]\nwrites = "deny-list"\n');
      const open = await cli(['agent', 'run', '--profile', 'sockets', '--silent', '--', 'sh', '-c', ask], { env: a.env, cwd: a.proj });
      assert.equal(open.stdout, "b'HTTP/1.1 407 Proxy Authentication Required'\n0\n", open.stderr);
    } finally {
      writeFileSync(go, '');
      await new Promise((res) => first.on('close', res));
      rmSync(go, { force: true });
    }
  });

  test("another run's folders stay out of reach of a run whose working directory holds them (its git directory, views and their records, its private /tmp), though outside they are there and writable", async () => {
    const repo = join(a.dir, 'runs-repo');
    mkdirSync(repo, { recursive: true });
    spawnSync('git', ['init', '-q'], { cwd: repo });
    spawnSync('git', ['-c', 'user.name=a', '-c', 'user.email=a@b', 'commit', '-q', '--allow-empty', '-m', 'x'], { cwd: repo });
    const go = join(a.home, 'release-runs');
    const first = spawn(process.execPath, [BIN, 'agent', 'run', '--silent', '--', 'sh', '-c', `echo mine > /tmp/private.txt; echo started; while [ ! -e ${go} ]; do sleep 0.05; done`], { env: a.env, cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      await new Promise<void>((res) => first.stdout.on('data', (d: Buffer) => String(d).includes('started') && res()));
      const sessions = join(a.sbHome, 'sessions');
      const rec = JSON.parse(readFileSync(join(sessions, spawnSync('ls', [sessions], { encoding: 'utf8' }).stdout.trim().split('\n')[0] as string), 'utf8')) as { runDir: string; gitDirs: string[] };
      const record = rec.gitDirs[0] as string;
      // The control: outside, the first run's records and private /tmp are there, and writable.
      const out = await a.outside(`test -w ${record} && cat ${rec.runDir}/tmp-0/private.txt`);
      assert.equal(out.stdout, 'mine\n', out.stderr);
      // A second run from a folder that holds all of it ($STASHBASE_HOME is under it, as it is under the temp folder, where run
      // folders used to be). Not the temp folder itself: its end would check every repository other tests make there meanwhile.
      const probe = `ls ${rec.runDir} >/dev/null 2>&1 && echo listed; echo '{}' > ${record} 2>/dev/null && echo wrote; cat ${rec.runDir}/tmp-0/private.txt 2>/dev/null; echo end`;
      const r = await cli(['agent', 'run', '--silent', '--', 'sh', '-c', probe], { env: a.env, cwd: a.dir });
      assert.equal(r.stdout, 'end\n', r.stderr);
      assert.equal(rec.runDir.startsWith(a.dir + '/'), true, 'the run folder is under the temp folder the second run binds');
    } finally {
      writeFileSync(go, '');
      await new Promise((res) => first.on('close', res));
      rmSync(go, { force: true });
    }
  });

  test('as an ordinary user (bwrap in a user namespace): no Unix socket, no plant in the home, no inherited descriptor', needsRoot('it runs the agent as nobody'), async () => {
    const home = join(a.dir, 'nobody-home');
    mkdirSync(join(home, 'proj'), { recursive: true });
    writeFile(join(home, '.ssh', 'id_ed25519'), 'PRIVATE-KEY\n');
    spawnSync('chown', ['-R', 'nobody', home]);
    spawnSync('chmod', ['755', a.dir, h]);
    const ctl = await listener(join(home, 'ctl.sock'));
    spawnSync('chown', ['nobody', join(home, 'ctl.sock')]);
    try {
      const script = `${connect(join(home, 'ctl.sock'))}; echo plant > ~/.bash_aliases && echo planted; cat /proc/self/fd/200${home}/.ssh/id_ed25519; echo end`;
      // Asynchronous: the listener answers from this process.
      const run = (cmd: string[]) =>
        new Promise<{ stdout: string; stderr: string }>((resolve) => {
          const child = spawn('runuser', ['-u', 'nobody', '--', 'env', `HOME=${home}`, `PATH=${process.env.PATH}`, 'bash', '-c', 'exec 200</; exec "$0" "$@"', ...cmd], { cwd: join(home, 'proj') });
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (d: Buffer) => (stdout += String(d)));
          child.stderr.on('data', (d: Buffer) => (stderr += String(d)));
          child.on('close', () => resolve({ stdout, stderr }));
        });
      const r = await run([process.execPath, BIN, 'agent', 'run', '--silent', '--', 'sh', '-c', script]);
      assert.equal(r.stdout, 'end\n', r.stderr);
      assert.match(r.stderr, /PermissionError: \[Errno 1\] Operation not permitted[\s\S]*bash_aliases: Read-only file system[\s\S]*fd\/200.*No such file or directory/);
      assert.deepEqual([ctl.hits(), existsSync(join(home, '.bash_aliases'))], [0, false]);
      // The control: the same script as nobody outside the sandbox does all three.
      assert.equal((await run(['sh', '-c', script])).stdout, "b'CONTROL\\n'\nplanted\nPRIVATE-KEY\nend\n");
      // No descriptor inside is a live socket to stashbase (bwrap never closes its user-namespace block descriptor).
      const live = `python3 -c "import os,stat,time
time.sleep(0.3)
live=[]
for fd in range(3, 64):
    try:
        st=os.fstat(fd)
    except OSError:
        continue
    if stat.S_ISSOCK(st.st_mode):
        try:
            os.write(fd, b'x'); live.append(fd)
        except OSError:
            pass
print('live', live)"`;
      const lr = await run([process.execPath, BIN, 'agent', 'run', '--silent', '--', 'sh', '-c', live]);
      assert.equal(lr.stdout, 'live []\n', lr.stderr);
    } finally {
      ctl.server.close();
    }
  });
});

describe('native boundary: kernel interfaces, plants, descriptors (real bwrap)', needs('bwrap'), () => {
  const a = attackHome();
  const h = a.home;
  after(() => a.cleanup());

  test('as root, /proc/sys and /sys are read-only inside (the current value written back)', needsRoot('writing kernel interfaces needs root'), async () => {
    const files = ['/proc/sys/kernel/core_pattern', '/sys/module/printk/parameters/time'];
    const script = files.map((f) => `v=$(cat ${f}); echo "$v" > ${f} && echo "wrote ${f}" || echo "refused ${f}"`).join('; ');
    const r = await a.inside(script);
    assert.equal(r.stdout, files.map((f) => `refused ${f}\n`).join(''));
    assert.equal(r.stderr.match(/Read-only file system/g)?.length, 2, r.stderr);
    assert.equal((await a.outside(script)).stdout, files.map((f) => `wrote ${f}\n`).join(''));
  });

  test('plants outside the working directory that a host program runs later: none can be made', async () => {
    const plants = [
      '.local/bin/git', '.local/lib/python3.11/site-packages/zz-plant.pth', '.bash_aliases', '.cargo/env',
      '.gitconfig-extra', '.vimrc', '.config/nvim/init.lua', '.config/systemd/user/plant.service',
      // Members of the class no rule names: IPython's startup folder, the desktop's autostart.
      '.ipython/profile_default/startup/00-plant.py', '.config/autostart/plant.desktop',
    ].map((p) => join(h, p));
    const script = (paths: string[]) => paths.map((p) => `(mkdir -p ${dirname(p)} && echo plant > ${p}) 2>/dev/null && echo "made ${p}" || echo "refused ${p}"`).join('; ');
    const r = await a.inside(script(plants));
    assert.equal(r.stdout, plants.map((p) => `refused ${p}\n`).join(''));
    assert.deepEqual(plants.filter((p) => existsSync(p)), []);
    assert.equal((await a.outside(script(plants))).stdout, plants.map((p) => `made ${p}\n`).join(''));
    rmSync(join(h, '.local'), { recursive: true });
  });

  test('as root, system folders and stashbase itself cannot be planted', needsRoot('the plants are root-owned folders'), async () => {
    const tag = `sbtest-${process.pid}`;
    const targets = ['/etc/ld.so.preload', `/etc/profile.d/${tag}.sh`, `/etc/cron.d/${tag}`, `/usr/local/bin/${tag}`, join(REPO, 'bin', 'stashbase.cjs')];
    const existed = targets.filter((p) => existsSync(p));
    // Opened for appending, nothing written: should the sandbox ever fail here, no host file changes (a new one is empty, and removed).
    try {
      // In a subshell: sh exits on a failed redirection of a special built-in such as ":".
      const r = await a.inside(targets.map((p) => `(: >> ${p}) 2>/dev/null && echo "made ${p}" || echo "refused ${p}"`).join('; '));
      assert.equal(r.stdout, targets.map((p) => `refused ${p}\n`).join(''));
      assert.deepEqual(targets.filter((p) => existsSync(p)), existed);
    } finally {
      for (const p of targets) if (!existed.includes(p)) rmSync(p, { force: true });
    }
    // The control, harmless files only: the same folders take a new file outside.
    const harmless = [`/etc/${tag}`, `/usr/local/bin/${tag}`, join(REPO, 'bin', `.${tag}`)];
    assert.equal((await a.outside(harmless.map((p) => `echo x > ${p} && rm ${p} && echo ok`).join('; '))).stdout, 'ok\nok\nok\n');
  });

  test('as root, no setuid or setgid file can be left in the working directory (chmod, install, open with the mode, a tar archive)', needsRoot('a setuid-root shell needs a run as root'), async () => {
    const dir = join(a.proj, 'suid');
    mkdirSync(dir);
    // The archive is made outside: tar keeps the mode of what it extracts (with fchmod), a way no rule names.
    writeFileSync(join(a.dir, 'payload'), '#!/bin/sh\n');
    spawnSync('chmod', ['4755', join(a.dir, 'payload')]);
    spawnSync('tar', ['-C', a.dir, '-cf', join(a.proj, 'payload.tar'), 'payload']);
    const script = [
      'cp /bin/sh suid/a && chmod 4755 suid/a',
      'install -m 2755 /bin/sh suid/b',
      `python3 -c 'import os; os.close(os.open("suid/c", os.O_CREAT | os.O_WRONLY, 0o6755))'`,
      'tar -C suid -xpf payload.tar',
      'find suid -perm /6000 | sort',
    ].join('; ');
    const setid = () => spawnSync('find', [dir, '-perm', '/6000'], { encoding: 'utf8' }).stdout;
    try {
      const r = await a.inside(script);
      assert.equal(r.stdout, '');
      assert.equal(setid(), '', 'no setuid or setgid file on the host');
      assert.match(r.stderr, /chmod: changing permissions of 'suid\/a': Operation not permitted/);
      // The control: outside, every one of them is made.
      spawnSync('rm', ['-rf', dir]);
      mkdirSync(dir);
      assert.equal((await a.outside(script)).stdout, 'suid/a\nsuid/b\nsuid/c\nsuid/payload\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(join(a.proj, 'payload.tar'), { force: true });
    }
  });

  test('a descriptor the caller left open on / does not reach the sandbox', async () => {
    writeFile(join(h, '.ssh', 'id_ed25519'), 'PRIVATE-KEY\n');
    const read = `cat /proc/self/fd/200${h}/.ssh/id_ed25519`;
    // bash: dash takes no descriptor above 9.
    const outside = spawnSync('bash', ['-c', `exec 200</; ${read}`], { encoding: 'utf8' });
    assert.equal(outside.stdout, 'PRIVATE-KEY\n');
    const inside = spawnSync('bash', ['-c', `exec 200</; exec "$0" "$@"`, process.execPath, BIN, 'agent', 'run', '--silent', '--', 'sh', '-c', `${read}; ls /proc/self/fd`], { encoding: 'utf8', env: a.env, cwd: a.proj });
    assert.doesNotMatch(inside.stdout, /PRIVATE-KEY/);
    assert.match(inside.stderr, /\/proc\/self\/fd\/200.*No such file or directory/);
    assert.deepEqual(inside.stdout.trim().split('\n').map(Number).filter((fd) => fd > 2 && fd !== 3), [], 'only 0-2 (and ls\'s own) open inside');
    rmSync(join(h, '.ssh'), { recursive: true });
  });

  test('the default denials cover credential stores and histories nobody listed before; a hard link into a denied folder is named', async () => {
    const files = [
      '.config/git/credentials', '.pgpass', '.bash_history', '.zsh_history', '.python_history', '.psql_history', '.terraformrc',
      '.config/containers/auth.json', '.config/rclone/rclone.conf', '.m2/settings.xml', '.gradle/gradle.properties',
    ];
    for (const f of files) writeFile(join(h, f), `SECRET ${f}\n`);
    writeFile(join(h, '.aws', 'credentials'), 'AWS-SECRET\n');
    spawnSync('ln', [join(h, '.aws', 'credentials'), join(h, 'innocent-name')]);
    const r = await cli(['agent', 'run', '--', 'sh', '-c', files.map((f) => `cat ${h}/${f}`).join('; ')], { env: { ...a.env, DATABASE_URL: 'postgres://app:hunter2@db.internal/app', REAL_OPENAI_KEY: 'sk-x', DEPLOY_KEY: 'k' }, cwd: a.proj });
    assert.equal(r.stdout, '');
    assert.equal(r.stderr.match(/Permission denied|No such file or directory/g)?.length, files.length, r.stderr);
    assert.match(r.stderr, new RegExp(`${h}/\\.aws/credentials \\(in the denied ${h}/\\.aws\\) has other hard links: the sandbox can read it through them`));
    assert.match(r.stderr, /not passed to the agent, as they look like credentials: DATABASE_URL, DEPLOY_KEY, REAL_OPENAI_KEY \(/);
    assert.equal((await a.outside(`cat ${h}/.pgpass`)).stdout, 'SECRET .pgpass\n');
    for (const f of files) rmSync(join(h, f));
    rmSync(join(h, '.aws'), { recursive: true });
    rmSync(join(h, 'innocent-name'));
  });

  test('as root, /etc/shadow and /etc/gshadow are unreadable', needsRoot('only root reads them'), async () => {
    const r = await a.inside('cat /etc/shadow /etc/gshadow');
    assert.equal(r.stdout, '');
    assert.equal(r.stderr.match(/Permission denied/g)?.length, 2, r.stderr);
    assert.match((await a.outside('cat /etc/shadow')).stdout, /^root:/);
  });
});

describe('native boundary: renames on your side during the run (real bwrap)', needs('bwrap', 'git'), () => {
  // The home outside the temp folders, which the sandbox sees private ones of (Landlock covers the home's files there).
  const a = attackHome('', outsideTempBase());
  const h = a.home;
  after(() => a.cleanup());

  /**
   * The agent runs `first`, says it has started and waits; meanwhile your side does `yours`; then the
   * agent runs `then`. What the run printed and how it ended.
   */
  const whileRunning = async (first: string[], yours: () => void, then: string[]) => {
    const started = join(a.proj, 'started');
    const go = join(a.proj, 'go');
    const script = [...first, `touch ${started}; while [ ! -e ${go} ]; do sleep 0.05; done`, ...then].join('\n');
    const child = spawn(process.execPath, [BIN, 'agent', 'run', '--silent', '--', 'sh', '-c', script], { env: a.env, cwd: a.proj });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const exited = new Promise<number | null>((r) => child.on('close', r));
    while (!existsSync(started)) {
      assert.equal(child.exitCode, null, `the run ended before the agent started: ${err}`);
      await sleep(50);
    }
    yours();
    writeFileSync(go, '');
    const code = await exited;
    rmSync(started);
    rmSync(go);
    return { code, out, err };
  };

  test('with denied files under Landlock, files still move and link across folders (REFER), and a denied file stays unreadable after a rename on your side, its temp file there from the start', async () => {
    writeFile(join(h, '.pgpass'), 'db:5432:*:me:hunter2\n');
    writeFile(join(h, '.netrc'), 'machine x login me password old\n');
    // Writers' temp files, already there when the sandbox starts: git/zsh style and renameio style.
    writeFile(join(h, '.pgpass.new'), '');
    writeFile(join(h, '..netrc8f3a'), '');
    const r = await whileRunning([
      'rm -rf a b; mkdir a b; echo x > a/f',
      'mv a/f b/f && ln b/f a/g && echo moved',
      'python3 -c "import os; os.rename(\'b/f\', \'a/h\'); print(\'renamed\')"',
      'echo t > /tmp/t && mv /tmp/t ./t && echo from-tmp',
    ], () => {
      // Once the agent runs, your side rewrites both denied files through their temp files, as a tool rotating a token would.
      writeFileSync(join(h, '.pgpass.new'), 'db:5432:*:me:rotated\n');
      spawnSync('mv', [join(h, '.pgpass.new'), join(h, '.pgpass')]);
      writeFileSync(join(h, '..netrc8f3a'), 'machine x login me password rotated\n');
      spawnSync('mv', [join(h, '..netrc8f3a'), join(h, '.netrc')]);
    }, ['cat ~/.pgpass || echo unreadable', 'cat ~/.netrc || echo unreadable']);
    assert.equal(r.code, 0);
    assert.equal(r.out, 'moved\nrenamed\nfrom-tmp\nunreadable\nunreadable\n');
    rmSync(join(h, '.pgpass'));
    rmSync(join(h, '.netrc'));
  });

  test('a credential store your side creates during the run, where nothing was at the start, stays unreadable (Landlock: missing denied paths are never granted)', async () => {
    // At the start: ~/.config and ~/.cargo exist (fully readable folders before this fix), the stores in them do not.
    mkdirSync(join(h, '.config', 'foo'), { recursive: true });
    writeFile(join(h, '.config', 'foo', 'ok.txt'), 'OK\n');
    mkdirSync(join(h, '.cargo'), { recursive: true });
    const r = await whileRunning([], () => {
      // Once the agent runs, your side logs in: gh auth login and cargo login write their stores.
      writeFile(join(h, '.config', 'gh', 'hosts.yml'), 'github.com:\n  oauth_token: gho_NEWTOKEN\n');
      writeFile(join(h, '.cargo', 'credentials.toml'), '[registry]\ntoken = "cio_NEWTOKEN"\n');
    }, ['cat ~/.config/gh/hosts.yml || echo unreadable', 'cat ~/.cargo/credentials.toml || echo unreadable', 'cat ~/.config/foo/ok.txt']);
    assert.equal(r.code, 0);
    assert.equal(r.out, 'unreadable\nunreadable\nOK\n');
    rmSync(join(h, '.config'), { recursive: true });
    rmSync(join(h, '.cargo'), { recursive: true });
  });

  test('the same through a symlinked folder (~/.config -> dotfiles/config, as dotfiles setups have it): still unreadable', async () => {
    mkdirSync(join(h, 'dotfiles', 'config', 'foo'), { recursive: true });
    writeFile(join(h, 'dotfiles', 'config', 'foo', 'ok.txt'), 'OK\n');
    symlinkSync('dotfiles/config', join(h, '.config'));
    const r = await whileRunning([], () => {
      writeFile(join(h, 'dotfiles', 'config', 'gh', 'hosts.yml'), 'github.com:\n  oauth_token: gho_NEWTOKEN\n');
    }, ['cat ~/.config/gh/hosts.yml || echo unreadable', 'cat ~/dotfiles/config/gh/hosts.yml || echo unreadable', 'cat ~/.config/foo/ok.txt']);
    assert.equal(r.code, 0);
    assert.equal(r.out, 'unreadable\nunreadable\nOK\n');
    rmSync(join(h, '.config'));
    rmSync(join(h, 'dotfiles'), { recursive: true });
  });

  test('a denied store that is a dangling symlink (~/.aws -> dotfiles/aws, not made yet): the run starts, and what your side makes there during it stays unreadable', async () => {
    mkdirSync(join(h, 'dotfiles'), { recursive: true });
    symlinkSync('dotfiles/aws', join(h, '.aws'));
    const r = await whileRunning([], () => {
      writeFile(join(h, 'dotfiles', 'aws', 'credentials'), '[default]\naws_secret_access_key = NEWSECRET\n');
    }, ['cat ~/.aws/credentials || echo unreadable', 'cat ~/dotfiles/aws/credentials || echo unreadable']);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, 'unreadable\nunreadable\n');
    rmSync(join(h, '.aws'));
    rmSync(join(h, 'dotfiles'), { recursive: true });
  });

  test('git config on your side renames .git/config and ~/.gitconfig mid-run: the agent still cannot plant core.fsmonitor, nor read a rotated denied file', async () => {
    const repo = join(a.proj, 'repo');
    const git = (args: string[]) => spawnSync('git', args, { cwd: repo, env: a.env, encoding: 'utf8' });
    mkdirSync(repo);
    assert.equal(git(['init', '-q']).status, 0);
    writeFileSync(join(h, '.gitconfig'), '[user]\n\tname = Me\n\temail = me@x\n');
    writeFileSync(join(h, '.pgpass'), 'db:5432:*:me:OLD\n');
    const pwned = join(a.dir, 'PWNED-fsmonitor');
    const renamed = join(repo, 'renamed');
    const script = [
      `while [ ! -e ${renamed} ]; do sleep 0.05; done`,
      `git config core.fsmonitor "touch ${pwned}"; printf '[core]\\n\\tfsmonitor = touch ${pwned}\\n' >> .git/config`,
      `printf '[core]\\n\\tfsmonitor = touch ${pwned}\\n' >> ~/.gitconfig 2>/dev/null && echo planted-global || echo refused-global`,
      'cat ~/.pgpass',
    ].join('; ');
    const running = cli(['agent', 'run', '--silent', '--', 'sh', '-c', script], { env: a.env, cwd: repo });
    await sleep(700);
    // Your side: both git configs rewritten by a rename, a rotated credential file.
    assert.equal(git(['config', 'user.extra', 'mine']).status, 0);
    assert.equal(git(['config', '--global', 'user.extra', 'mine']).status, 0);
    writeFileSync(join(h, '.pgpass.new'), 'db:5432:*:me:NEW\n');
    spawnSync('mv', [join(h, '.pgpass.new'), join(h, '.pgpass')]);
    writeFileSync(renamed, '');
    const r = await running;
    assert.equal(r.stdout, 'refused-global\n');
    assert.match(r.stderr, /\.pgpass: Permission denied/);
    assert.doesNotMatch(readFileSync(join(repo, '.git', 'config'), 'utf8') + readFileSync(join(h, '.gitconfig'), 'utf8'), /fsmonitor/);
    assert.equal(git(['config', 'user.extra']).stdout, 'mine\n', 'your change is kept');
    git(['status']);
    assert.equal(existsSync(pwned), false, 'your git status ran nothing');
    // The control: outside, the same append lands and your git status runs it.
    appendFileSync(join(repo, '.git', 'config'), `[core]\n\tfsmonitor = touch ${pwned}\n`);
    git(['status']);
    assert.equal(existsSync(pwned), true);
  });
});
