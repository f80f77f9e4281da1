import { availableParallelism } from 'node:os';
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { join } from 'node:path';
import { DEFAULT_DENY_WRITE, defaultDenyRead } from '../../lib/profile/credential-stores.js';
import { defaultProfile } from '../../lib/profile/default.js';
import { loadProfile } from '../../lib/profile/load.js';
import { tempHome, writeFile } from '../helpers.js';

const t = tempHome();
after(() => t.cleanup());
const env = { ...t.env, GH: 'ghp_realvalue0123456789', BAD: 'a\r\nb', NUL: 'a\0b', SHORT: 'hunt3r', SEVEN: 'hunt3r!' };

/** Loads TOML as the global profile "p" and returns the error message (or "ok"). */
function check(toml: string, extraEnv: NodeJS.ProcessEnv = {}): string {
  writeFile(join(t.sbHome, 'agents', 'p.toml'), toml);
  try {
    loadProfile({ name: 'p', source: 'global', cwd: t.dir, env: { ...env, ...extraEnv } });
    return 'ok';
  } catch (e) {
    assert.equal((e as { exitCode: number }).exitCode, 2);
    return (e as Error).message;
  }
}

const F = () => join(t.sbHome, 'agents', 'p.toml');

test('a full valid profile loads with every key', () => {
  writeFile(F(), `
description = "d"
allow_hooks = ["secret_scan"]
[sandbox]
backend = "docker"
image = "myorg/agent:latest"
memory = "2g"
cpus = "1.5"
isolated_paths = ["node_modules", ".venv"]
native_network = "host"
allow_unix_sockets = true
build_network = true
home_volume_warn = "5g"
agent_sessions = "shared"
[filesystem]
deny_read = ["~/.ssh", "secrets/*.pem", 're:^~/\\.config/.*token']
allow_read = ["~/.docker"]
deny_write = ["~/.gitconfig", "~/.ssh/rc"]
allow_write = ["~/.npm-global", "~/.cache/*"]
keep_executables = ["node_modules"]
writes = "deny-list"
[network]
egress_hosts = ["api.anthropic.com", "*.githubusercontent.com"]
deny_hosts = ["gist.github.com"]
upstream_ca_file = "~/corp.pem"
[network.hosts]
"api.internal.test" = "127.0.0.1:8443"
[secrets.GITHUB_TOKEN]
source = "GH"
hosts = ["api.github.com"]
in_query = true
[config_env]
EDITOR = "vi"
[environment]
inherit = "core"
include = ["GOPATH", "MY_*"]
exclude = ["LC_?"]
[workspace]
worktree = true
[hooks.dependency_check]
min_age_days = 14
typosquat_distance = 1
on_unchecked = "deny"
[mcp.servers.ev]
url = "https://mcp.example.test/mcp"
allow_tools = ["get_*"]
deny_tools = ["delete_*"]
`);
  const { profile } = loadProfile({ name: 'p', source: 'global', cwd: t.dir, env });
  assert.deepEqual(profile, {
    name: 'p', source: 'global', file: F(), description: 'd', allowHooks: ['secret_scan'],
    sandbox: { backend: 'docker', image: 'myorg/agent:latest', dockerfile: undefined, memory: '2g', cpus: '1.5', isolatedPaths: ['node_modules', '.venv'], nativeNetwork: 'host', allowUnixSockets: true, buildNetwork: true, homeVolumeWarn: '5g', macosAllow: [], agentSessions: 'shared' },
    filesystem: { denyRead: [...defaultDenyRead().filter((e) => e !== '~/.docker'), 'secrets/*.pem', 're:^~/\\.config/.*token'], allowRead: ['~/.docker'], denyWrite: [...DEFAULT_DENY_WRITE, '~/.ssh/rc'], allowWrite: ['~/.npm-global', '~/.cache/*'], writes: 'deny-list', keepExecutables: ['node_modules'] },
    network: { egressHosts: ['api.anthropic.com', '*.githubusercontent.com', 'mcp.example.test'], denyHosts: ['gist.github.com'], upstreamCaFile: '~/corp.pem', hosts: { 'api.internal.test': '127.0.0.1:8443' }, allowUpgrades: [], limits: {} },
    secrets: { GITHUB_TOKEN: { source: 'GH', from: { kind: 'env', variable: 'GH' }, hosts: ['api.github.com'], inQuery: true, allowPlaintext: false } },
    configEnv: { EDITOR: 'vi' },
    environment: { inherit: 'core', include: ['GOPATH', 'MY_*'], exclude: ['LC_?'] },
    workspace: { worktree: true },
    hooks: { dependencyCheck: { minAgeDays: 14, typosquatDistance: 1, onUnchecked: 'deny' } },
    mcp: { servers: Object.assign(Object.create(null), { ev: { url: 'https://mcp.example.test/mcp', local: null, allowTools: ['get_*'], denyTools: ['delete_*'] } }) },
  });
});

test("a profile's lists add to the built-in denials: a deny_read of its own never gives back what the default hides; allow_read lifts one by its exact name, and nothing else", () => {
  writeFile(F(), '[filesystem]\ndeny_read = ["~/.ssh", "~/.aws"]\n');
  const { profile } = loadProfile({ name: 'p', source: 'global', cwd: t.dir, env });
  assert.deepEqual(profile.filesystem.denyRead, defaultProfile().filesystem.denyRead);
  for (const e of ['~/.npmrc', '~/.docker', '~/.*hist*']) assert.ok(profile.filesystem.denyRead.includes(e), e);
  assert.deepEqual(profile.filesystem.denyWrite, defaultProfile().filesystem.denyWrite);
  // An empty list is no way out either.
  writeFile(F(), '[filesystem]\ndeny_read = []\ndeny_write = []\n');
  assert.deepEqual(loadProfile({ name: 'p', source: 'global', cwd: t.dir, env }).profile.filesystem.denyRead, defaultDenyRead());
  const label = 'home/.stashbase/agents/p.toml';
  assert.equal(check('[filesystem]\nallow_read = ["~/.docker/config.json"]\n'), `${label}:2 filesystem.allow_read[0]: "~/.docker/config.json" is not one of the built-in read denials; allow_read lifts one of them by its exact name (stashbase profile show lists them)`);
  assert.equal(check('[filesystem]\nallow_read = ["~/.npmrc"]\ndeny_read = ["~/.npmrc"]\n'), `${label}:3 filesystem.deny_read[0]: "~/.npmrc" is in allow_read too`);
  assert.equal(check('[filesystem]\nallow_read = ["~/.npmrc"]\n'), 'ok');
  assert.equal(check('[environment]\ninherit = "some"\n'), `${label}:2 environment.inherit: "some" is not one of "all", "core", "none"`);
  assert.equal(check('[sandbox]\nagent_sessions = "yours"\n'), `${label}:2 sandbox.agent_sessions: "yours" is not one of "sandbox", "shared"`);
  assert.equal(check('[environment]\ninclude = ["MY-VAR"]\n'), `${label}:2 environment.include[0]: "MY-VAR" is not a variable name or a glob of one (letters, digits, "_", "*" and "?")`);
  // Every value is shown before it is trusted: a line break, a tab or an escape could forge the prompt (a review scrolled the real egress away with 60 of them).
  assert.equal(check('[filesystem]\ndeny_read = ["~/x\\n\\n  egress: api.anthropic.com"]\n'), `${label}:2 filesystem.deny_read[0]: "~/x\\n\\n  egress: api.anthropic.com" holds a line break, a tab, a control or an invisible character`);
  assert.equal(check('description = "fine\\u001b[8m"\n'), `${label}:1 description: "fine\\u001b[8m" holds a line break, a tab, a control or an invisible character`);
  assert.equal(check('description = "x\\u202eevil"\n'), `${label}:1 description: "x\u202eevil" holds a line break, a tab, a control or an invisible character`);
  assert.equal(check('[config_env]\nMULTI = "a\\nb"\n'), 'ok');
  // A table named __proto__ became the parsed object's prototype: the binding vanished without a word.
  assert.equal(check('[secrets.__proto__]\nsource = "GH"\nhosts = ["a.com"]\n'), `${label}:1: "__proto__" cannot be a key or a table's name`);
  assert.equal(check('description = "about __proto__ keys"\n'), 'ok');
  // Unnamed spellings: escaped in a quoted key, and dotted: caught by what the parser made of them, not by their text.
  assert.equal(check('[secrets."\\u005f_proto__"]\nsource = "GH"\nhosts = ["a.com"]\n'), `${label}:1: "__proto__" cannot be a key or a table's name`);
  assert.equal(check('network.__proto__.x = 1\n'), `${label}:1: "__proto__" cannot be a key or a table's name`);
  // A name DNS cannot carry (over 253 characters) would also leave the run's CA without its name constraint.
  const long = `${'a'.repeat(60)}.`.repeat(5) + 'test';
  assert.equal(check(`[network]\negress_hosts = ["${long}"]\n`), `${label}:2 network.egress_hosts[0]: "${long}" is not a host name or *.wildcard`);
});

test('unknown keys name file, line and key path', () => {
  const label = 'home/.stashbase/agents/p.toml';
  assert.equal(check('[sandbox]\nbackend = "native"\nimagee = "x"\n'), `${label}:3 sandbox.imagee: unknown key (known here: backend, image, dockerfile, memory, cpus, isolated_paths, native_network, allow_unix_sockets, build_network, home_volume_warn, macos_allow, network, runtime, remote, agent_sessions)`);
  assert.equal(check('colour = "red"\n'), `${label}:1 colour: unknown key (known here: description, allow_hooks, sandbox, filesystem, network, secrets, config_env, environment, workspace, hooks, mcp)`);
  assert.equal(check('[secrets.X]\nsource = "GH"\nhosts = ["a.com"]\nhost = "b"\n'), `${label}:4 secrets.X.host: unknown key (known here: source, hosts, in_query, allow_plaintext)`);
});

test('wrong types', () => {
  const label = 'home/.stashbase/agents/p.toml';
  assert.equal(check('[sandbox]\nmemory = 2\n'), `${label}:2 sandbox.memory: expected a string, got an integer (2)`);
  assert.equal(check('[filesystem]\ndeny_read = "~/.ssh"\n'), `${label}:2 filesystem.deny_read: expected an array of strings, got a string ("~/.ssh")`);
  assert.equal(check('[filesystem]\ndeny_read = [\n  "~/.ssh",\n  3,\n]\n'), `${label}:2 filesystem.deny_read[1]: expected a string, got an integer (3)`);
  assert.equal(check('sandbox = 1\n'), `${label}:1 sandbox: expected a table, got an integer (1)`);
  assert.equal(check('[sandbox]\nhome_volume_warn = "2 GB"\n'), `${label}:2 sandbox.home_volume_warn: "2 GB" is not a size (a number with an optional unit b, k, m, g or t, such as "2g"; "0" never warns)`);
  assert.equal(check('[workspace]\nworktree = "yes"\n'), `${label}:2 workspace.worktree: expected true or false, got a string ("yes")`);
  assert.equal(check('[sandbox]\nbackend = "vm"\n'), `${label}:2 sandbox.backend: "vm" is not one of "native", "docker"`);
  assert.equal(check('[filesystem]\nwrites = "open"\n'), `${label}:2 filesystem.writes: "open" is not one of "allow-list", "deny-list"`);
  assert.equal(check('[filesystem]\nallow_write = "~/x"\n'), `${label}:2 filesystem.allow_write: expected an array of strings, got a string ("~/x")`);
  assert.equal(check('[sandbox]\nallow_unix_sockets = "yes"\n'), `${label}:2 sandbox.allow_unix_sockets: expected true or false, got a string ("yes")`);
});

test('remote: a Docker context\'s name, nothing a shell or a URL would read', () => {
  const label = 'home/.stashbase/agents/p.toml';
  assert.equal(check('[sandbox]\nremote = "build-box"\n'), 'ok');
  for (const bad of ['ssh://build-box', '-H', 'a b', '']) {
    assert.equal(check(`[sandbox]\nremote = "${bad}"\n`), `${label}:2 sandbox.remote: "${bad}" is not a Docker context's name (make one with: docker context create NAME --docker host=ssh://user@host)`);
  }
});

test('image with dockerfile', () => {
  assert.equal(check('[sandbox]\nimage = "a"\ndockerfile = "b"\n'), `home/.stashbase/agents/p.toml:3 sandbox.dockerfile: set at most one of sandbox.image and sandbox.dockerfile`);
});

test('memory and cpus values Docker would not accept', () => {
  const label = 'home/.stashbase/agents/p.toml';
  assert.equal(check('[sandbox]\nmemory = "2 GB"\n'), `${label}:2 sandbox.memory: "2 GB" is not a docker memory size (try "2g")`);
  assert.equal(check('[sandbox]\nmemory = "lots"\n'), `${label}:2 sandbox.memory: "lots" is not a docker memory size (a number with an optional unit b, k, m or g, such as "2g")`);
  assert.equal(check('[sandbox]\nmemory = "4m"\n'), `${label}:2 sandbox.memory: "4m" is below Docker's minimum memory limit of 6m`);
  assert.equal(check('[sandbox]\nmemory = "512m"\n'), 'ok');
  assert.equal(check('[sandbox]\ncpus = "1,5"\n'), `${label}:2 sandbox.cpus: "1,5" is not a docker cpus value (a decimal number of CPUs, such as "1.5")`);
  assert.equal(check('[sandbox]\ncpus = "0.001"\n'), `${label}:2 sandbox.cpus: "0.001" is below Docker's minimum of 0.01 CPUs`);
  assert.equal(check('[sandbox]\ncpus = "4096"\n'), `${label}:2 sandbox.cpus: "4096" is more than the ${availableParallelism()} CPUs this machine has`);
  assert.equal(check('[sandbox]\ncpus = 0.5\n'), 'ok');
});

test('secrets: unset source, CR/LF/NUL in the value, missing keys', () => {
  const label = 'home/.stashbase/agents/p.toml';
  assert.equal(check('[secrets.T]\nsource = "NOPE"\nhosts = ["a.com"]\n'), `${label}:2 secrets.T.source: the variable NOPE is not set in this environment`);
  assert.equal(check('[secrets.T]\nsource = "BAD"\nhosts = ["a.com"]\n'), `${label}:2 secrets.T.source: the value of BAD contains a carriage return, line feed or NUL character, which could split a request header`);
  assert.equal(check('[secrets.T]\nsource = "NUL"\nhosts = ["a.com"]\n'), `${label}:2 secrets.T.source: the value of NUL contains a carriage return, line feed or NUL character, which could split a request header`);
  // Six bytes: two of its base64 forms would be 7 characters, too short to look for; seven are bound.
  assert.equal(check('[secrets.T]\nsource = "SHORT"\nhosts = ["a.com"]\n'), `${label}:2 secrets.T.source: the value of SHORT is 6 bytes; a secret under 7 bytes cannot be bound: what comes back from its hosts could not be scrubbed of it reliably (its base64 forms are too short to look for)`);
  assert.equal(check('[secrets.T]\nsource = "SEVEN"\nhosts = ["a.com"]\n'), 'ok');
  assert.equal(check('[secrets.T]\nhosts = ["a.com"]\n'), `${label}:1 secrets.T.source: is required: where the real value comes from (a variable of your environment, file:, command: or keyring:)`);
  // The other sources are checked for their shape when the profile loads, read only once it is trusted.
  assert.equal(check('[secrets.T]\nsource = "file:~/.config/tok"\nhosts = ["a.com"]\n'), 'ok');
  assert.equal(check(`[secrets.T]\nsource = 'command:["gh", "auth", "token"]'\nhosts = ["a.com"]\n`), 'ok');
  assert.equal(check('[secrets.T]\nsource = "keyring:github/me"\nhosts = ["a.com"]\n'), 'ok');
  assert.equal(check('[secrets.T]\nsource = "command:gh auth token"\nhosts = ["a.com"]\n'), `${label}:2 secrets.T.source: "command:gh auth token": after "command:" a JSON array of the program and its arguments, such as 'command:["gh", "auth", "token"]' (no shell runs it)`);
  assert.equal(check('[secrets.T]\nsource = "keyring:github"\nhosts = ["a.com"]\n'), `${label}:2 secrets.T.source: "keyring:github": after "keyring:" a service and an account, SERVICE/ACCOUNT`);
  assert.equal(check('[secrets.T]\nsource = "file:"\nhosts = ["a.com"]\n'), `${label}:2 secrets.T.source: "file:" names no file`);
  // Relative to the working directory, a repository could plant what it names.
  assert.equal(check('[secrets.T]\nsource = "file:tokens/openai"\nhosts = ["a.com"]\n'), `${label}:2 secrets.T.source: "file:tokens/openai": after "file:" an absolute path or one in your home (~/…), never one relative to the working directory`);
  assert.equal(check('[secrets.T]\nsource = "not a var"\nhosts = ["a.com"]\n'), `${label}:2 secrets.T.source: "not a var" is not an environment variable name, nor file:, command: or keyring:`);
  assert.equal(check('[secrets.T]\nsource = "GH"\n'), `${label}:1 secrets.T.hosts: is required: the hosts that may receive this secret`);
  assert.equal(check('[secrets.HTTPS_PROXY]\nsource = "GH"\nhosts = ["a.com"]\n'), `${label}:1 secrets.HTTPS_PROXY: HTTPS_PROXY is set by the sandbox itself and cannot be a secret binding`);
});

test('(review, round 35) network.allow_upgrades with [secrets] is refused, saying why; control: either alone loads', () => {
  const label = 'home/.stashbase/agents/p.toml';
  assert.equal(check('[network]\nallow_upgrades = ["h2c"]\n[secrets.T]\nsource = "GH"\nhosts = ["a.com"]\n'), `${label}:2 network.allow_upgrades: cannot be used with [secrets]: an upgraded protocol frames its data, and a real value handed back in pieces would pass the proxy's scrubbing (WebSocket, whose frames the proxy reads, needs no entry)`);
  assert.equal(check('[network]\nallow_upgrades = ["h2c"]\n'), 'ok');
  assert.equal(check('[secrets.T]\nsource = "GH"\nhosts = ["a.com"]\n'), 'ok');
});

test('hosts, paths and environment names', () => {
  const label = 'home/.stashbase/agents/p.toml';
  assert.equal(check('[network]\negress_hosts = ["http://x.com"]\n'), `${label}:2 network.egress_hosts[0]: "http://x.com" is not a host name or *.wildcard`);
  assert.equal(check('[network.hosts]\n"a.test" = "localhost"\n'), `${label}:2 network.hosts."a.test": "localhost" is not an IP address with an optional port (such as "127.0.0.1:8443" or "[::1]:8443")`);
  assert.equal(check('[network.hosts]\n"a.test" = "[::1]:99999"\n'), `${label}:2 network.hosts."a.test": "[::1]:99999" is not an IP address with an optional port (such as "127.0.0.1:8443" or "[::1]:8443")`);
  assert.equal(check('[filesystem]\ndeny_read = ["re:(unclosed"]\n'), `${label}:2 filesystem.deny_read[0]: "re:(unclosed" is not a valid regular expression: Invalid regular expression: /(unclosed/: Unterminated group`);
  assert.equal(check('[sandbox]\nisolated_paths = ["../up"]\n'), `${label}:2 sandbox.isolated_paths[0]: "../up" must be a folder inside the working directory (relative, without "..")`);
  assert.equal(check('[sandbox]\nisolated_paths = ["."]\n'), `${label}:2 sandbox.isolated_paths[0]: "." must be a folder inside the working directory (relative, without "..")`);
  assert.equal(check('[config_env]\nHTTPS_PROXY = "x"\n'), `${label}:2 config_env.HTTPS_PROXY: HTTPS_PROXY is set by the sandbox itself`);
  assert.equal(check('[config_env]\n"1X" = "x"\n'), `${label}:2 config_env.1X: "1X" is not an environment variable name`);
  assert.equal(check('allow_hooks = ["rm_rf"]\n'), `${label}:1 allow_hooks[0]: "rm_rf" is not a known hook (known: secret_scan, dependency_check)`);
});

test('every problem is reported, one per line', () => {
  const label = 'home/.stashbase/agents/p.toml';
  assert.equal(check('[sandbox]\nmemory = "x"\ncpus = "y"\n'), [
    `${label}:2 sandbox.memory: "x" is not a docker memory size (a number with an optional unit b, k, m or g, such as "2g")`,
    `${label}:3 sandbox.cpus: "y" is not a docker cpus value (a decimal number of CPUs, such as "1.5")`,
  ].join('\n'));
});

test('TOML syntax errors name line and column', () => {
  assert.match(check('[sandbox]\nbackend = \n'), /^home\/\.stashbase\/agents\/p\.toml:2:11: invalid TOML: Expected /);
});
