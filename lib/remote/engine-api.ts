// A remote engine's API, spoken by stashbase itself (lib/docker/api.ts) where
// the docker CLI would reach it without TLS: over ssh://, each connection one
// `docker system dial-stdio` on the run's SSH connection (lib/remote/ssh-mux.ts),
// as the CLI makes its own; over plain tcp://, the address itself. Anything
// with TLS (the environment's, or a context's certificates or skip-verify), an
// SSH connection that did not start, or a context stashbase cannot read is
// left to the CLI: slower, never weaker.
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { type EngineApi, plainTcpApi } from '../docker/api.js';
import { dockerConfigDir } from '../docker/endpoint.js';
import { readBackText } from '../readback/file.js';
import { goReadsAsWritten, isJsonObject, parseJson } from '../readback/json.js';
import { sha256 } from '../util/sha256.js';
import type { SshMux } from './ssh-mux.js';
import type { RemoteTarget } from './target.js';

/** Whether the CLI reaches a context's engine without TLS: its metadata read (bounded), no skip-verify, no certificates stored. */
function contextPlain(context: string, host: string, env: NodeJS.ProcessEnv, home: string): boolean {
  const store = join(dockerConfigDir(env, home), 'contexts');
  const id = sha256(context);
  const parsed = parseJson(readBackText(join(store, 'meta', id, 'meta.json'), 1 << 20) ?? '');
  const meta = parsed === null ? null : parsed.value;
  // The CLI (Go's encoding/json) matches these names in any case and by Unicode folding, the last one winning: only
  // metadata whose names Go reads as written is read here (found in review: "ſkipTLSVerify" was TLS for the CLI).
  if (!isJsonObject(meta) || !goReadsAsWritten(meta, ['Endpoints'])) return false;
  const endpoints = Object.hasOwn(meta, 'Endpoints') ? meta.Endpoints : null;
  const d = isJsonObject(endpoints) && Object.hasOwn(endpoints, 'docker') ? endpoints.docker : null;
  if (!isJsonObject(d) || !goReadsAsWritten(d, ['Host', 'SkipTLSVerify']) || !Object.hasOwn(d, 'Host') || d.Host !== host) return false;
  if (Object.hasOwn(d, 'SkipTLSVerify') && d.SkipTLSVerify !== false) return false;
  // Anything stored for its TLS (certificates, a key): the CLI may speak TLS.
  try {
    lstatSync(join(store, 'tls', id));
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/** The API of a remote run's engine where stashbase can speak to it as the CLI would, else null (the CLI). */
export function remoteEngineApi(t: RemoteTarget, env: NodeJS.ProcessEnv, home: string, mux: SshMux | null): EngineApi | null {
  if (t.host.startsWith('ssh://')) return mux?.dial ? { dial: mux.dial, address: t.host } : null;
  const api = plainTcpApi(t.host, env);
  // A context's address (named, DOCKER_CONTEXT's or the current one): plain only as its stored settings say.
  if (api === null || (t.settings !== null && !contextPlain(t.settings, t.host, env, home))) return null;
  return api;
}
