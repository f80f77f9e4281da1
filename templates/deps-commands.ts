// The commands through which the dependency check asks each package manager
// where its registry is, so that no registry's address is written in
// stashbase: npm's configuration, pip's configuration and its built-in
// default, cargo's index (cargo prints it nowhere, so it is read from the
// error cargo gives when its proxy refuses), go env GOPROXY.
//
// Each runs in `/`, never in the project: what a package manager's wrapper
// reads from its directory upward would be the agent's to choose (pyenv's
// .python-version naming any folder as a Python, rustup's rust-toolchain.toml
// naming a toolchain path, corepack's packageManager, go.mod's toolchain), and
// Python puts its directory first on the import path. The project's own
// settings are passed explicitly instead (npm --prefix, cargo --config).
import type { Command } from './command.js';

/** Where the commands run: a folder only root can write, with nothing of the project above it. */
export const NEUTRAL_CWD = '/';

/**
 * npm config get: the registry and each scope's (one value alone, else key=value lines).
 * npm 11 ignores NO_UPDATE_NOTIFIER: without its own setting, a fresh HOME (as the
 * confined check has) makes it ask the registry for npm's latest version on every check.
 */
export function npmRegistryCommand(npm: string, project: string, scopes: string[]): Command {
  return {
    file: npm,
    args: ['config', 'get', 'registry', ...scopes.map((s) => `${s}:registry`), '--prefix', project],
    cwd: NEUTRAL_CWD,
    env: { NO_UPDATE_NOTIFIER: '1', npm_config_update_notifier: 'false', COREPACK_ENABLE_DOWNLOAD_PROMPT: '0' },
  };
}

/** pip's index settings (its configuration files and PIP_* variables) and the index it uses when none is set, as JSON. */
export const PIP_INDEX_SCRIPT = [
  'import json',
  'items = {}',
  'try:',
  '    from pip._internal.configuration import Configuration',
  '    c = Configuration(isolated=False); c.load(); items = dict(c.items())',
  'except Exception:',
  '    pass',
  'from pip._internal.models.index import PyPI',
  "out = {k: v for k, v in items.items() if k.split('.')[-1] in ('index-url', 'extra-index-url', 'find-links')}",
  "out['default'] = PyPI.simple_url",
  'print(json.dumps(out))',
].join('\n');

/** -I: no directory of the caller's on the import path, no PYTHON* variables, no user site. */
export function pipIndexCommand(python: string): Command {
  return { file: python, args: ['-I', '-c', PIP_INDEX_SCRIPT], cwd: NEUTRAL_CWD, env: { PIP_DISABLE_PIP_VERSION_CHECK: '1' } };
}

/** An address that refuses at once: cargo's attempt goes nowhere, and its error names the index. */
export const DEAD_PROXY = 'http://127.0.0.1:9';

/**
 * cargo add --dry-run of a probe name into a throwaway manifest, with the
 * project's cargo configuration files (nearest last) given by --config, and
 * every proxy variable pointing at DEAD_PROXY.
 */
export function cargoIndexCommand(cargo: string, configs: string[], manifest: string): Command {
  return {
    file: cargo,
    args: [...configs.flatMap((c) => ['--config', c]), 'add', '--dry-run', '--quiet', '--manifest-path', manifest, 'stashbase-registry-probe'],
    cwd: NEUTRAL_CWD,
    env: { CARGO_HTTP_PROXY: DEAD_PROXY, HTTPS_PROXY: DEAD_PROXY, https_proxy: DEAD_PROXY, HTTP_PROXY: DEAD_PROXY, http_proxy: DEAD_PROXY, ALL_PROXY: DEAD_PROXY, CARGO_NET_RETRY: '0', CARGO_HTTP_TIMEOUT: '2', CARGO_TERM_COLOR: 'never' },
    unsetEnv: ['NO_PROXY', 'no_proxy', 'CARGO_NET_OFFLINE'],
  };
}

export const PROBE_MANIFEST = '[package]\nname = "stashbase-probe"\nversion = "0.0.0"\nedition = "2021"\n[lib]\npath = "lib.rs"\n';

/** GOTOOLCHAIN=local: no other Go is fetched and run for this. */
export function goProxyCommand(go: string): Command {
  return { file: go, args: ['env', 'GOPROXY'], cwd: NEUTRAL_CWD, env: { GOTOOLCHAIN: 'local' } };
}
