import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { formatCommand } from '../../templates/command.js';
import { buildFirewallScript, DESKTOP_HOST } from '../../templates/docker-firewall.js';
import { buildDockerPlan, type DockerPlanInput } from '../../templates/docker-plan.js';
import { leaseUid } from '../../templates/remote-run.js';
import { agentCommand, envFileText, relayExecCommand, relayUid, sealedAgentCommand, type SealedInput, type AgentInput, holderCommand, type HolderInput, mountArg, networkCreateCommand, teardownCommands } from '../../templates/docker-run.js';
import { defaultBuildCommand, shellCommand } from '../../templates/docker-image.js';
import { agentsSource } from '../../lib/docker/agents-source.js';
import { volumeMeasureCommand, volumeOwnCommand, volumeSizeCommand } from '../../templates/docker-volumes.js';
import { growthWarning } from '../../lib/docker/home-volume.js';
import { sizeBytes } from '../../lib/profile/docker-values.js';
import { formatPlan, planToJson } from '../../templates/plan.js';
import { isDesktop } from '../../lib/docker/engine.js';
import { dockerfileTag } from '../../lib/docker/image.js';
import { golden } from '../golden.js';

const S = 'ags_aaaaaaaaaaaaaaaa';
const NET = `stashbase-agent-run-${S}`;
const holder: HolderInput = { docker: 'docker', session: S, pid: 4242, image: 'stashbase-sandbox:latest', desktop: false, proxyHost: '172.18.0.1', proxyPort: 40001, canaryPort: 40002 };
const agent: AgentInput = {
  docker: 'docker',
  session: S,
  pid: 4242,
  image: 'stashbase-sandbox:latest',
  user: '1000:1000',
  cwd: '/home/u/my project',
  env: { HOME: '/home/agent', TERM: 'xterm-256color', HTTPS_PROXY: 'http://172.18.0.1:40001', GITHUB_TOKEN: 'ghp_SBPHxxxxxxxxxxxxxxxxxxxx' },
  mounts: [
    { type: 'bind', source: '/home/u/my project', target: '/home/u/my project', readonly: false },
    { type: 'volume', source: 'stashbase-agent-home', target: '/home/agent', readonly: false },
    { type: 'bind', source: '/tmp/stashbase-x/denied', target: '/home/u/my project/.env', readonly: true },
  ],
  memory: '2g',
  cpus: '1.5',
  tty: true,
  command: ['claude', '--model', "it's $x"],
  hostEnv: { HERDR_AGENT: 'claude' },
  seccomp: `/h/.stashbase/runs/${S}/seccomp.json`,
  envFile: `/h/.stashbase/runs/${S}/container.env`,
};

test('holder: the whole argument list (NET_ADMIN and SETPCAP, dropped once the rules are in, blackholed DNS, no IPv6)', () => {
  const cmd = holderCommand(holder);
  assert.equal(cmd.file, 'docker');
  assert.deepEqual(cmd.args, [
    'run', '--name', `${NET}-net`, '--label', `stashbase.session=${S}`, '--label', 'stashbase.pid=4242', '--network', NET,
    '--cap-drop', 'ALL', '--cap-add', 'NET_ADMIN', '--cap-add', 'SETPCAP', '--security-opt', 'no-new-privileges', '--pids-limit', '64',
    '--dns', '0.0.0.0', '--sysctl', 'net.ipv6.conf.all.disable_ipv6=1', '--user', '0:0', '--entrypoint', 'bash',
    'stashbase-sandbox:latest', '-c', buildFirewallScript(holder),
  ]);
});

test('agent: the whole argument list (no capabilities, the holder\'s namespace, only what is listed)', () => {
  const cmd = agentCommand(agent);
  assert.deepEqual(cmd.env, { HERDR_AGENT: 'claude' });
  assert.deepEqual(cmd.args, [
    'run', '--rm', '--name', `${NET}-agent`, '--label', `stashbase.session=${S}`, '--label', 'stashbase.pid=4242', '--network', `container:${NET}-net`,
    '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges', '--security-opt', `seccomp=/h/.stashbase/runs/${S}/seccomp.json`, '--init', '--pids-limit', '2048',
    '--memory', '2g', '--cpus', '1.5', '--user', '1000:1000', '-it', '--workdir', '/home/u/my project',
    '--mount', 'type=bind,source=/home/u/my project,target=/home/u/my project',
    '--mount', 'type=volume,source=stashbase-agent-home,target=/home/agent',
    '--mount', 'type=bind,source=/tmp/stashbase-x/denied,target=/home/u/my project/.env,readonly',
    '--env-file', `/h/.stashbase/runs/${S}/container.env`,
    'stashbase-sandbox:latest', 'claude', '--model', "it's $x",
  ]);
  // The environment in that file, never on the command line every user reads in /proc (review: the proxy's token); a
  // value on two lines, which such a file cannot hold, on it as --env.
  assert.equal(envFileText(agent.env), 'HOME=/home/agent\nTERM=xterm-256color\nHTTPS_PROXY=http://172.18.0.1:40001\nGITHUB_TOKEN=ghp_SBPHxxxxxxxxxxxxxxxxxxxx\n');
  // (Review) a name docker would read otherwise (Go trims U+0085 too) goes as --env.
  const lines = agentCommand({ ...agent, env: { A: 'one\ntwo', B: 'b', '#C': 'c', '\u0085D': 'd' } });
  assert.deepEqual(lines.args.slice(lines.args.indexOf('--env-file'), -4), ['--env-file', `/h/.stashbase/runs/${S}/container.env`, '--env', 'A=one\ntwo', '--env', '#C=c', '--env', '\u0085D=d']);
  assert.equal(envFileText({ A: 'one\ntwo', B: 'b', '#C': 'c', '\u0085D': 'd' }), 'B=b\n');
  const plain = agentCommand({ ...agent, tty: false, memory: undefined, cpus: undefined, user: null, hostEnv: {} });
  assert.equal(plain.env, undefined);
  assert.deepEqual(plain.args.slice(19, 22), ['-i', '--workdir', '/home/u/my project']);
});

test('--mount fields are CSV: commas and quotes in paths are quoted, never split', () => {
  assert.equal(mountArg({ type: 'bind', source: '/a,b/"c"', target: '/t', readonly: true }), 'type=bind,"source=/a,b/""c""",target=/t,readonly');
  assert.equal(mountArg({ type: 'bind', source: '/a:b c', target: '/x:y', readonly: false }), 'type=bind,source=/a:b c,target=/x:y');
});

test('firewall: one atomic ruleset per family, then the self-check, then it holds the namespace', () => {
  golden('docker-firewall.sh', buildFirewallScript(holder) + '\n');
  const syntax = spawnSync('bash', ['-n', '-c', buildFirewallScript(holder)]);
  assert.equal(syntax.status, 0, String(syntax.stderr));
  assert.throws(() => buildFirewallScript({ ...holder, proxyHost: '1.2.3.4; rm -rf /' }), /must be an IPv4 literal/);
  assert.throws(() => buildFirewallScript({ ...holder, proxyPort: '80; true' }), /bad port/);
  assert.throws(() => buildFirewallScript({ ...holder, canaryPort: 70000 }), /bad port/);
});

test('Docker Desktop: no --internal network, host.docker.internal from /etc/hosts, proxy resolved inside', () => {
  assert.deepEqual(networkCreateCommand('docker', S, 4242, true).args, ['network', 'create', '--driver', 'bridge', '--label', `stashbase.session=${S}`, '--label', 'stashbase.pid=4242', NET]);
  assert.deepEqual(networkCreateCommand('docker', S, 4242, false).args, ['network', 'create', '--driver', 'bridge', '--internal', '--label', `stashbase.session=${S}`, '--label', 'stashbase.pid=4242', NET]);
  const desk = holderCommand({ ...holder, desktop: true, proxyHost: DESKTOP_HOST });
  const i = desk.args.indexOf('--add-host');
  assert.deepEqual(desk.args.slice(i, i + 2), ['--add-host', 'host.docker.internal:host-gateway']);
  const script = desk.args[desk.args.length - 1] as string;
  assert.match(script, /proxy=\$\(getent ahostsv4 host\.docker\.internal \| awk 'NR==1\{print \$1\}'\)/);
  assert.equal(holderCommand(holder).args.includes('--add-host'), false);
  assert.equal(isDesktop('darwin', ''), true);
  assert.equal(isDesktop('win32', ''), true);
  assert.equal(isDesktop('linux', 'Docker Desktop'), true);
  assert.equal(isDesktop('linux', 'Debian GNU/Linux 12 (bookworm)'), false);
});

test('teardown: containers, then the network', () => {
  assert.deepEqual(teardownCommands('docker', S).map((c) => c.args), [
    ['rm', '--force', `${NET}-agent`, `${NET}-net`],
    ['network', 'rm', NET],
  ]);
});

test('images: default build, --force refreshes, agents from npm, a Dockerfile is tagged from its path', () => {
  const b = { docker: 'docker', tag: 'stashbase-sandbox:latest', dockerfile: '/h/docker/Dockerfile.sandbox', context: '/h/docker/context', force: false, builtAt: '2026-01-01T00:00:00.000Z', dockerfileSha256: 'abc', buildArgs: { BASE_IMAGE: 'local:base' }, agents: { from: 'installer' as const } };
  assert.deepEqual(defaultBuildCommand(b).args, ['build', '--tag', 'stashbase-sandbox:latest', '--file', '/h/docker/Dockerfile.sandbox', '--label', 'stashbase.built=2026-01-01T00:00:00.000Z', '--label', 'stashbase.dockerfile-sha256=abc', '--label', 'stashbase.agents-from=installer', '--build-arg', 'BASE_IMAGE=local:base', '/h/docker/context']);
  assert.deepEqual(defaultBuildCommand({ ...b, force: true, buildArgs: {} }).args.slice(9), ['--pull', '--build-arg', 'AGENTS_REFRESH=2026-01-01T00:00:00.000Z', '--label', 'stashbase.agents-from=installer', '/h/docker/context']);
  const npm = { from: 'npm' as const, claude: '2.1.197', codex: '0.171.0', registry: 'https://registry.example.test/' };
  assert.deepEqual(defaultBuildCommand({ ...b, buildArgs: {}, agents: npm }).args.slice(9), [
    '--label', 'stashbase.agents-from=npm', '--label', 'stashbase.claude-version=2.1.197', '--label', 'stashbase.codex-version=0.171.0',
    '--build-arg', 'AGENTS_FROM=npm', '--build-arg', 'CLAUDE_VERSION=2.1.197', '--build-arg', 'CODEX_VERSION=0.171.0', '--build-arg', 'NPM_REGISTRY=https://registry.example.test/',
    '/h/docker/context',
  ]);
  assert.deepEqual(agentsSource({}, {}), { from: 'installer' });
  assert.deepEqual(agentsSource({ agentsFrom: 'npm' }, {}), { from: 'npm', claude: 'latest', codex: 'latest' });
  assert.deepEqual(agentsSource({}, { STASHBASE_SANDBOX_AGENTS_FROM: 'npm', STASHBASE_SANDBOX_CODEX_VERSION: '0.171.0' }), { from: 'npm', claude: 'latest', codex: '0.171.0' });
  assert.throws(() => agentsSource({ claudeVersion: '2.1.197' }, {}), /need --agents-from npm/);
  assert.throws(() => agentsSource({ agentsFrom: 'npm', codexVersion: '1.0 && curl x' }, {}), /not an npm version or dist-tag/);
  assert.throws(() => agentsSource({ agentsFrom: 'pip' }, {}), /neither "installer" nor "npm"/);
  assert.deepEqual(shellCommand('docker', 'img', '1000:1000', true, '/usr/bin:/bin').args, ['run', '--rm', '-it', '--init', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges', '--user', '1000:1000', '--env', 'PATH=/usr/bin:/bin', '--env', 'PYTHONNOUSERSITE=1', '--mount', 'type=volume,source=stashbase-agent-home,target=/home/agent', '--env', 'HOME=/home/agent', '--env', 'INPUTRC=/dev/null', '--workdir', '/home/agent', '--entrypoint', 'bash', 'img', '--noprofile', '--norc']);
  // No network namespace of its own, and no socket call at all (its seccomp profile).
  assert.deepEqual(volumeSizeCommand('docker', 'img', 'stashbase-agent-home', 'n-du', ['--label', 'a=b'], '/s/m.json').args, [
    'run', '--rm', '--name', 'n-du', '--label', 'a=b', '--network', 'host', '--security-opt', 'seccomp=/s/m.json', '--cap-drop', 'ALL', '--cap-add', 'DAC_READ_SEARCH', '--security-opt', 'no-new-privileges',
    '--user', '0:0', '--read-only', '--mount', 'type=volume,source=stashbase-agent-home,target=/v,readonly', '--entrypoint', 'du', 'img', '-skx', '/v',
  ]);
  // Held until told: one line on its stdin, then du; end of input without one ends it unmeasured.
  assert.deepEqual(volumeMeasureCommand('docker', 'img', 'stashbase-agent-home', 'n-du', ['--label', 'a=b'], '/s/m.json').args, [
    'run', '-i', '--rm', '--name', 'n-du', '--label', 'a=b', '--network', 'host', '--security-opt', 'seccomp=/s/m.json', '--cap-drop', 'ALL', '--cap-add', 'DAC_READ_SEARCH', '--security-opt', 'no-new-privileges',
    '--user', '0:0', '--read-only', '--mount', 'type=volume,source=stashbase-agent-home,target=/v,readonly', '--entrypoint', 'sh', 'img', '-c', 'read -r _ && exec du -skx /v',
  ]);
  const gb = 1024 ** 3;
  assert.equal(growthWarning('v', null, 2 * gb, gb, '1g'), 'the agents\' home volume v now holds 2.1 GB, past home_volume_warn = "1g": look with stashbase agent docker shell (du -sh ~/.[!.]* ~/*), or start it afresh with docker volume rm v');
  assert.equal(growthWarning('v', gb, 2 * gb, gb, '1g'), 'the agents\' home volume v now holds 2.1 GB, 1.1 GB more than after the last run, past home_volume_warn = "1g": look with stashbase agent docker shell (du -sh ~/.[!.]* ~/*), or start it afresh with docker volume rm v');
  assert.equal(growthWarning('v', 3 * gb, 2 * gb, gb, '1g'), null);
  assert.equal(growthWarning('v', 0, gb, gb, '1g'), null);
  assert.equal(growthWarning('v', 0, 9 * gb, 0, '0'), null);
  assert.deepEqual(['1g', '512m', '0', '1.5k', '2 GB', 'lots'].map(sizeBytes), [gb, 512 * 1024 ** 2, 0, 1536, null, null]);
  assert.deepEqual(volumeOwnCommand('docker', 'img', '1000:1000', ['v1', 'v2']).args, ['run', '--rm', '--network', 'none', '--cap-drop', 'ALL', '--cap-add', 'CHOWN', '--security-opt', 'no-new-privileges', '--user', '0:0', '--mount', 'type=volume,source=v1,target=/v/0', '--mount', 'type=volume,source=v2,target=/v/1', '--entrypoint', 'chown', 'img', '1000:1000', '/v/0', '/v/1']);
});

test('docker plan: golden dry-run, every command in order with teardown, JSON equal to text', () => {
  const input: DockerPlanInput = {
    session: S, profile: 'coding', sessionFile: `/h/.stashbase/sessions/${S}.json`, auditFile: `/h/.stashbase/audit/${S}.jsonl`, runDir: `/tmp/stashbase-${S}`,
    image: 'the agent runs stashbase-sandbox:latest too',
    newVolumes: [{ name: 'stashbase-isolated-proj-0123456789-node-modules-abcdef', entry: 'node_modules', target: '/home/u/my project/node_modules', repo: '/home/u/my project' }],
    gitDir: { dir: `/tmp/stashbase-${S}/git`, at: '/home/u/my project/.git', copies: ['HEAD', 'index', 'refs'], readOnly: ['config', 'hooks'], admin: null, otherWorktrees: [], shared: '/home/u/my project/.git/stashbase-objects' },
    placeholders: ['/home/u/my project/.env'], fileStandIns: [], warnings: [], proxyBind: '<gateway>', interceptTls: true,
    holder: { ...holder, proxyHost: '<gateway>', proxyPort: '<proxy-port>', canaryPort: '<canary-port>' },
    agent, sealed: null,
  };
  const plan = buildDockerPlan(input);
  golden('docker-plan.txt', formatPlan(plan));
  const json = planToJson(plan);
  const commands = json.steps.filter((s) => s.type === 'command');
  assert.deepEqual(commands.map((s) => s.id), ['watchdog', 'volume-measure', 'network', 'gateway', 'holder', 'volume-create', 'volume-own', 'agent', 'teardown', 'teardown']);
  for (const s of commands) if (s.type === 'command') assert.ok(formatPlan(plan).includes(s.shell));
  assert.equal(formatCommand(agentCommand(agent)), (commands[7] as { shell: string }).shell);
});

test('docker plan, sealed: no network, holder or canary; the agent with --network none, its runtime, the relay read-only as its process (a terminal of the size given, or pipes), before the entrypoint and command, no exec; a remote run\'s gate, its relay exec\'d as a user of its own', () => {
  const sealed: SealedInput = { ...agent, env: { ...agent.env, HTTPS_PROXY: 'http://127.0.0.1:3128' }, relay: '/pkg/dist/relay/linux-amd64/stashbase-relay', entrypoint: ['/ep.sh', '-x'], runtime: 'runsc', relayStreams: 256, size: '30x100' };
  const local = (size: string, tty: string) => [
    'run', '--rm', '--name', `stashbase-agent-run-${S}-agent`, '--label', `stashbase.session=${S}`, '--label', 'stashbase.pid=4242',
    '--network', 'none', '--runtime', 'runsc',
    '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges', '--security-opt', `seccomp=/h/.stashbase/runs/${S}/seccomp.json`, '--init', '--pids-limit', '2048',
    '--memory', '2g', '--cpus', '1.5', '--user', '1000:1000', tty, '--workdir', '/home/u/my project',
    '--mount', 'type=bind,source=/home/u/my project,target=/home/u/my project', '--mount', 'type=volume,source=stashbase-agent-home,target=/home/agent',
    '--mount', 'type=bind,source=/tmp/stashbase-x/denied,target=/home/u/my project/.env,readonly',
    '--mount', 'type=bind,source=/pkg/dist/relay/linux-amd64/stashbase-relay,target=/.stashbase-relay,readonly',
    '--env-file', `/h/.stashbase/runs/${S}/container.env`,
    '--entrypoint', '/.stashbase-relay', 'stashbase-sandbox:latest', ...(size === 'gate' ? ['gate', '3128'] : ['supervise', '3128', '320', size]), '--', '/ep.sh', '-x', 'claude', '--model', "it's $x",
  ];
  // The terminal is the relay's (a pseudo-terminal inside, 30 rows and 100 columns): never -t, whatever the agent's terminal.
  assert.equal(sealed.tty, true);
  assert.deepEqual(sealedAgentCommand(sealed).args, local('30x100', '-i'));
  assert.deepEqual(sealedAgentCommand({ ...sealed, tty: false, size: '-' }).args, local('-', '-i'));
  // Without a size, the gate (the form a remote run's agent takes, its relay in the lease).
  assert.deepEqual(sealedAgentCommand({ ...sealed, size: undefined }).args, local('gate', '-it'));
  // The relay closes at once any connection past the run's limit of streams and some room.
  assert.deepEqual(relayExecCommand('docker', S, relayUid('1000:1000'), 256).args, ['exec', '-i', '--user', '2147483646:2147483646', '--workdir', '/', `stashbase-agent-run-${S}-agent`, '/.stashbase-relay', 'serve', '3128', '320']);
  // A remote run's: the agent in the lease's process and network namespaces (loopback alone), the relay exec'd into the lease's container.
  const lease = `stashbase-agent-run-${S}-lease`;
  const remote = sealedAgentCommand({ ...sealed, size: undefined, runtime: undefined, pidNamespace: lease, networkOf: lease, relayInside: '/etc/stashbase/stashbase-relay' }).args;
  assert.deepEqual(remote.slice(8, 21), ['--network', `container:${lease}`, '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges', '--security-opt', `seccomp=/h/.stashbase/runs/${S}/seccomp.json`, '--pid', `container:${lease}`, '--pids-limit', '2048', '--memory']);
  assert.ok(!remote.includes('--init') && !remote.includes('none') && !remote.some((a) => a.includes('/pkg/dist/relay')));
  assert.deepEqual(relayExecCommand('docker', S, 2147483646, 1000, '/etc/stashbase/stashbase-relay', lease).args, ['exec', '-i', '--user', '2147483646:2147483646', '--workdir', '/', lease, '/etc/stashbase/stashbase-relay', 'serve', '3128', '1064']);
  // Found in review: nobody's uid could be an image's USER (the agent's user on Docker Desktop): the relay's is one nobody uses.
  assert.equal(relayUid('65534:65534'), 2147483646);
  assert.equal(relayUid(null), 2147483646);
  assert.equal(relayUid('2147483646:1'), 2147483644);
  // Never the lease's either (found in review: the relay's second choice was the lease's uid), nor the agent's.
  for (const agentUid of [1000, 2147483643, 2147483644, 2147483645, 2147483646]) {
    const a = `${agentUid}:${agentUid}`;
    assert.equal(new Set([agentUid, relayUid(a), leaseUid(a)]).size, 3, a);
  }
  const plan = buildDockerPlan({
    session: S, profile: 'coding', sessionFile: `/h/.stashbase/sessions/${S}.json`, auditFile: `/h/.stashbase/audit/${S}.jsonl`, runDir: `/tmp/stashbase-${S}`,
    image: 'the agent runs stashbase-sandbox:latest too', newVolumes: [], gitDir: null, placeholders: [], fileStandIns: [], warnings: [], proxyBind: '127.0.0.1', interceptTls: true,
    holder: { ...holder, proxyHost: '127.0.0.1', proxyPort: 0, canaryPort: 0 }, agent, sealed,
  });
  const commands = planToJson(plan).steps.filter((x) => x.type === 'command');
  // No exec: the relay is the container's process.
  assert.deepEqual(commands.map((x) => x.id), ['watchdog', 'volume-measure', 'agent', 'teardown']);
  assert.deepEqual(commands.map((x) => (x as { shell: string }).shell).slice(1), [formatCommand(volumeMeasureCommand('docker', 'stashbase-sandbox:latest', 'stashbase-agent-home', `stashbase-agent-run-${S}-du`, ['--label', `stashbase.session=${S}`, '--label', 'stashbase.pid=4242'], '<measure-seccomp.json>')), formatCommand(sealedAgentCommand(sealed)), `docker rm --force stashbase-agent-run-${S}-agent`]);
  assert.match((planToJson(plan).steps.find((x) => x.id === 'agent-sealed') as { description: string }).description, /on a terminal of its own \(30 rows, 100 columns; your terminal raw meanwhile, its size followed\).*no exec:$/);
  // The watchdog removes the agent's container alone: there is no network or holder. On a terminal (the size given) it
  // keeps your terminal's settings and, stashbase killed, sets them back at once while they are still exactly the raw
  // ones stashbase told it of.
  assert.doesNotMatch((commands[0] as { shell: string }).shell, /network rm|-net/);
  assert.deepEqual((commands[0] as { args: string[] }).args, ['-c', `saved=$(stty -g <&3 2>/dev/null); raw=; while read -r line; do case "$line" in done) exit 0;; raw:*) raw=\${line#raw:};; esac; done; [ -n "$saved" ] && [ -n "$raw" ] && [ "$(stty -g <&3 2>/dev/null)" = "$raw" ] && stty "$saved" <&3 2>/dev/null; docker rm --force stashbase-agent-run-${S}-agent >/dev/null 2>&1; exit 0`]);
  // home_volume_warn = "0": the volume is not measured, and the plan says so.
  const unmeasured = planToJson(buildDockerPlan({
    session: S, profile: 'coding', sessionFile: '/s', auditFile: '/a', runDir: '/r', image: 'i', newVolumes: [], gitDir: null, placeholders: [], fileStandIns: [], warnings: [], proxyBind: '127.0.0.1', interceptTls: true,
    holder: { ...holder, proxyHost: '127.0.0.1', proxyPort: 0, canaryPort: 0 }, agent, sealed, measureHome: false,
  }));
  assert.deepEqual(unmeasured.steps.filter((x) => x.type === 'command').map((x) => x.id), ['watchdog', 'agent', 'teardown']);
  assert.deepEqual(unmeasured.steps.find((x) => x.id === 'volume-measure'), { type: 'internal', id: 'volume-measure', description: 'home_volume_warn = "0": stashbase-agent-home is not measured after the run (and the size kept after an earlier one is dropped)' });
});

test('network mode: firewall unless asked; a runtime other than runc runs sealed (said), refuses firewall, and must be registered', async () => {
  const { chooseNetwork } = await import('../../lib/docker/sealed.js');
  const { defaultProfile } = await import('../../lib/profile/default.js');
  const base = defaultProfile();
  const withRuntime = { ...base, sandbox: { ...base.sandbox, dockerRuntime: 'runsc' } };
  const { runtimesOf } = await import('../../lib/docker/engine.js');
  const runc = runtimesOf('{"runc":{"path":"runc"}}');
  const both = runtimesOf('{"runc":{"path":"runc"},"runsc":{"path":"/usr/bin/runsc","runtimeArgs":["--network=none","--oci-seccomp"]}}');
  assert.deepEqual(chooseNetwork(base, {}, runc), { network: 'firewall' });
  assert.deepEqual(chooseNetwork(base, { dockerNetwork: 'sealed' }, runc), { network: 'sealed' });
  assert.deepEqual(chooseNetwork(base, { dockerRuntime: 'runc' }, runc), { network: 'firewall', runtime: 'runc' });
  assert.deepEqual(chooseNetwork(withRuntime, {}, both), { network: 'sealed', runtime: 'runsc', note: "the runtime runsc runs sealed: no network interface, the relay the only way out (the firewall holder's iptables rules do not bind its network stack)" });
  assert.throws(() => chooseNetwork(withRuntime, { dockerNetwork: 'firewall' }, both), /the runtime runsc cannot be confined by the firewall holder/);
  assert.throws(() => chooseNetwork(withRuntime, {}, runc), /the Docker engine has no runtime "runsc" \(it has runc\): register it in \/etc\/docker\/daemon\.json and reload dockerd \(bash scripts\/install-runsc\.sh does it for gVisor, as root\)/);
  // gVisor without --oci-seccomp would ignore the agent's seccomp profile: refused, whatever the runtime is called.
  const lax = runtimesOf('{"gvisor":{"path":"/opt/bin/runsc","runtimeArgs":["--network=none"]}}');
  assert.throws(() => chooseNetwork(base, { dockerRuntime: 'gvisor' }, lax), /the runtime gvisor \(gVisor\) is registered without --oci-seccomp, so it would ignore the agent container's seccomp profile/);
  // A hostile engine's answer: a runtime named __proto__ never becomes a prototype (nor a runtime of an object's).
  const odd = runtimesOf('{"__proto__":{"path":"x","runtimeArgs":["--oci-seccomp"]},"runc":{"path":"runc"}}');
  assert.equal(Object.getPrototypeOf(odd), null);
  assert.throws(() => chooseNetwork(base, { dockerRuntime: 'toString' }, odd), /has no runtime "toString"/);
});

test('image choice: a per-run flag replaces the profile\'s image or Dockerfile; a Dockerfile is resolved from the working directory', async () => {
  const { mkdtempSync, writeFileSync, realpathSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { chooseImage } = await import('../../lib/docker/image.js');
  const { defaultProfile } = await import('../../lib/profile/default.js');
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'sbimg-')));
  writeFileSync(join(dir, 'sandbox.Dockerfile'), 'FROM x\n');
  const base = defaultProfile();
  const withImage = { ...base, sandbox: { ...base.sandbox, image: 'org/img:1' } };
  const withFile = { ...base, sandbox: { ...base.sandbox, dockerfile: './sandbox.Dockerfile' } };
  const at = (env: NodeJS.ProcessEnv) => ({ cwd: dir, env, home: '/nonexistent-home', stashbaseHome: '/nonexistent-home/.stashbase' });
  assert.deepEqual(chooseImage(base, {}, at({})), { kind: 'default', ref: 'stashbase-sandbox:latest' });
  assert.deepEqual(chooseImage(base, {}, at({ STASHBASE_DOCKER_IMAGE: 'mirror/sb:2' })), { kind: 'default', ref: 'mirror/sb:2' });
  assert.deepEqual(chooseImage(withImage, {}, at({})), { kind: 'image', ref: 'org/img:1' });
  const file = join(dir, 'sandbox.Dockerfile');
  const chosen = chooseImage(withFile, {}, at({}));
  assert.ok(chosen.kind === 'dockerfile');
  assert.deepEqual([chosen.ref, chosen.file, chosen.network, chosen.profile], [dockerfileTag(chosen.digest), { path: file, context: dir, text: 'FROM x\n' }, false, null]);
  assert.match(chosen.ref, /^stashbase-dockerfile:[0-9a-f]{32}$/);
  assert.deepEqual(chooseImage(withFile, { dockerImage: 'flag/img:2' }, at({})), { kind: 'image', ref: 'flag/img:2' });
  assert.deepEqual(chooseImage(withImage, { dockerDockerfile: 'sandbox.Dockerfile' }, at({})).kind, 'dockerfile');
  assert.throws(() => chooseImage(base, { dockerDockerfile: 'missing.Dockerfile' }, at({})), { message: `--docker-dockerfile: ${join(dir, 'missing.Dockerfile')} is missing` });
});

test("the agent container's seccomp profile: the allow-list and what it leaves out never meet; sockets, clone, clone3 and personality by argument; no foreign ABI", async () => {
  const { agentSeccompProfile, ALLOWED, LEFT_OUT } = await import('../../templates/docker-seccomp.js');
  const left = Object.values(LEFT_OUT).flat();
  assert.deepEqual(ALLOWED.filter((n) => left.includes(n)), []);
  for (const n of ['read', 'openat', 'execve', 'ptrace', 'wait4', 'fchmodat2', 'socketpair', 'connect']) assert.ok(ALLOWED.includes(n), n);
  for (const n of ['socket', 'clone', 'clone3', 'keyctl', 'io_uring_setup', 'unshare', 'setns', 'bpf', 'mount', 'socketcall']) assert.ok(!ALLOWED.includes(n), n);
  const p = agentSeccompProfile();
  assert.equal(p.defaultAction, 'SCMP_ACT_ERRNO');
  assert.deepEqual(p.archMap, [{ architecture: 'SCMP_ARCH_X86_64', subArchitectures: [] }, { architecture: 'SCMP_ARCH_AARCH64', subArchitectures: [] }]);
  assert.deepEqual(p.syscalls.slice(1), [
    { names: ['socket'], action: 'SCMP_ACT_ALLOW', args: [{ index: 0, value: 1, valueTwo: 0, op: 'SCMP_CMP_EQ' }] },
    { names: ['socket'], action: 'SCMP_ACT_ALLOW', args: [{ index: 0, value: 2, valueTwo: 0, op: 'SCMP_CMP_EQ' }] },
    { names: ['socket'], action: 'SCMP_ACT_ALLOW', args: [{ index: 0, value: 10, valueTwo: 0, op: 'SCMP_CMP_EQ' }] },
    { names: ['socket'], action: 'SCMP_ACT_ALLOW', args: [{ index: 0, value: 16, valueTwo: 0, op: 'SCMP_CMP_EQ' }, { index: 2, value: 0, valueTwo: 0, op: 'SCMP_CMP_EQ' }] },
    { names: ['clone'], action: 'SCMP_ACT_ALLOW', args: [{ index: 0, value: 0x7e020000, valueTwo: 0, op: 'SCMP_CMP_MASKED_EQ' }] },
    { names: ['clone3'], action: 'SCMP_ACT_ERRNO', errnoRet: 38 },
    ...[0, 8, 0x20000, 0x20008, 0xffffffff].map((v) => ({ names: ['personality'], action: 'SCMP_ACT_ALLOW', args: [{ index: 0, value: v, valueTwo: 0, op: 'SCMP_CMP_EQ' }] })),
  ]);
});

test('which engine is this machine\'s: local sockets and pipes, TCP to loopback; not ssh or TCP elsewhere', async () => {
  const { isLocalHost } = await import('../../lib/docker/endpoint.js');
  for (const h of ['', 'unix:///var/run/docker.sock', 'unix:///home/u/.docker/run/docker.sock', 'npipe:////./pipe/docker_engine', 'tcp://127.0.0.1:2375', 'tcp://localhost:2376', 'tcp://[::1]:2375']) assert.equal(isLocalHost(h), true, h);
  for (const h of ['ssh://me@build-box', 'tcp://10.0.0.5:2375', 'tcp://docker.example.test:2376', 'tcp://127.0.0.1.evil.test:2375', 'http://127.0.0.1:2375']) assert.equal(isLocalHost(h), false, h);
});

test("gVisor's release from runsc --version: Debian's and upstream's forms; from 2023-08 on it implements clone3", async () => {
  const { gvisorRelease, GVISOR_CLONE3_FROM } = await import('../../lib/docker/sealed.js');
  assert.equal(gvisorRelease('runsc version 0.0~20221219.0\nspec: 1.0.2-dev\n'), 20221219);
  assert.equal(gvisorRelease('runsc version release-20240212.0\nspec: 1.1.0\n'), 20240212);
  assert.equal(gvisorRelease('runsc version VERSION_MISSING\n'), null);
  assert.ok(20221219 < GVISOR_CLONE3_FROM && 20240212 >= GVISOR_CLONE3_FROM);
});

test("the home volume's measuring container: the agent's seccomp profile less every socket call (socket(2) itself, socketpair, connect, bind…) and reading another process; the rest as the agent's", async () => {
  const { agentSeccompProfile, measureSeccompProfile } = await import('../../templates/docker-seccomp.js');
  const m = measureSeccompProfile();
  const allowed = new Set(m.syscalls.filter((r) => r.action === 'SCMP_ACT_ALLOW').flatMap((r) => r.names));
  for (const n of ['socket', 'socketpair', 'connect', 'bind', 'listen', 'accept', 'accept4', 'sendto', 'sendmsg', 'sendmmsg', 'recvfrom', 'recvmsg', 'recvmmsg', 'setsockopt', 'getsockopt', 'shutdown', 'ptrace', 'process_vm_readv', 'io_uring_setup']) assert.equal(allowed.has(n), false, n);
  for (const n of ['openat', 'newfstatat', 'getdents64', 'execve', 'read', 'write', 'exit_group']) assert.equal(allowed.has(n), true, n);
  assert.equal(m.defaultAction, 'SCMP_ACT_ERRNO');
  assert.deepEqual(m.archMap, agentSeccompProfile().archMap);
});

test('gVisor\'s version is asked once for a program and kept with its identity: asked again when the program is rewritten or replaced, never when its path is relative (a file of the working folder)', async () => {
  const { gvisorNote } = await import('../../lib/docker/sealed.js');
  const { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync, renameSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'runsc-'));
  try {
    const prog = join(dir, 'runsc');
    const count = join(dir, 'count');
    const fake = (release: string) => {
      writeFileSync(`${prog}.new`, `#!/bin/sh\necho x >> ${count}\necho "runsc version release-${release}.0"\n`);
      chmodSync(`${prog}.new`, 0o755);
      renameSync(`${prog}.new`, prog);
    };
    const asked = () => readFileSync(count, 'utf8').split('\n').filter(Boolean).length;
    fake('20221219');
    const home = join(dir, 'home');
    assert.equal(await gvisorNote(prog, home), null);
    assert.equal(await gvisorNote(prog, home), null);
    assert.equal(asked(), 1, 'asked once, then kept');
    // Replaced by one that implements clone3: asked again, and said.
    fake('20240212');
    assert.match((await gvisorNote(prog, home)) ?? '', /gVisor 20240212\) implements clone3/);
    assert.equal(asked(), 2);
    // Without a home: asked each time (the control of the keeping).
    await gvisorNote(prog);
    assert.equal(asked(), 3);
    // A relative path is never run: the version is unread, and said so.
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      assert.match((await gvisorNote('./runsc', home)) ?? '', /could not read \.\/runsc's version/);
    } finally {
      process.chdir(cwd);
    }
    assert.equal(asked(), 3);
    // Third review: a bare name (as daemon.json may give it) is found on PATH as every tool is, and that program's
    // identity is kept, never a ./runsc of the working folder's (the agent's): rewritten on PATH, it is asked again.
    const { mkdirSync } = await import('node:fs');
    const tree = join(dir, 'tree');
    mkdirSync(tree);
    writeFileSync(join(tree, 'runsc'), `#!/bin/sh\necho tree >> ${count}\necho "runsc version release-20221219.0"\n`, { mode: 0o755 });
    const path = process.env.PATH;
    process.env.PATH = `${dir}:${path ?? ''}`;
    process.chdir(tree);
    try {
      fake('20221219');
      assert.equal(await gvisorNote('runsc', join(dir, 'home2')), null);
      fake('20240212');
      assert.match((await gvisorNote('runsc', join(dir, 'home2'))) ?? '', /gVisor 20240212\) implements clone3/);
      assert.doesNotMatch(readFileSync(count, 'utf8'), /tree/);
    } finally {
      process.chdir(cwd);
      process.env.PATH = path;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
