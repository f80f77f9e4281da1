// What a profile turns off of the native boundary, said at every run and by
// `agent validate`: a security tool names the convenience it was asked for.
import { storeOf } from '../profile/credential-stores.js';
import type { Profile } from '../profile/types.js';
import { MACOS_SERVICE_COST } from '../../templates/seatbelt-base.js';

export function weakerSettings(profile: Profile, cwd: string, home: string): string[] {
  const out: string[] = [];
  for (const path of profile.filesystem.allowRead) {
    const store = storeOf(path);
    out.push(`allow_read ${JSON.stringify(path)} is weaker: a built-in denial (${store ? `${store.kind}: ${store.from}` : 'credentials'}) is lifted, so the sandbox reads it`);
  }
  if (profile.filesystem.writes === 'deny-list') {
    out.push('writes = "deny-list" is weaker: everything your user can write is writable in the sandbox but deny_write (a plant in ~/.local/bin or a shell start-up file runs later on your machine)');
  }
  if (profile.sandbox.allowUnixSockets) {
    out.push('allow_unix_sockets = true is weaker: every Unix socket your user can open (tmux, an editor, Docker, ssh-agent) is reachable from the sandbox');
  }
  if (profile.sandbox.nativeNetwork === 'host') {
    out.push('native_network = "host" is weaker: the sandbox shares your network and only agents that honour HTTPS_PROXY go through the proxy');
  }
  for (const s of profile.sandbox.macosAllow) out.push(`macos_allow ${JSON.stringify(s)} is weaker on macOS: ${MACOS_SERVICE_COST[s]}`);
  if (profile.sandbox.agentSessions === 'shared') {
    out.push('agent_sessions = "shared" is weaker: the sandbox writes the sessions your own claude and codex resume and trust (a checkpoint in a transcript has your claude write or delete any file when you rewind it)');
  }
  if (profile.sandbox.buildNetwork) {
    out.push('build_network = true is weaker: the steps of the profile\'s Dockerfile build reach any network the Docker engine does');
  }
  if (profile.filesystem.writes === 'allow-list' && cwd === home) {
    out.push('the working directory is your home: all of it is writable in the sandbox but deny_write (run from a project folder instead)');
  }
  return out;
}
