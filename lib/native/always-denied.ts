// What no profile opens up on the native backend: control sockets, the
// user's runtime directory, stashbase's own state, and what only root may read.
import { resolve } from 'node:path';
import { expandedPaths } from '../paths/expand.js';
import { ROOT_CREDENTIAL_STORES } from '../profile/credential-stores.js';
import { executableGitState } from '../git/repo.js';

/** Paths no profile can open up: control sockets, stashbase's own state (the CA key), what only root may read. */
export function alwaysDenied(ctx: { env: NodeJS.ProcessEnv; cwd: string }): { read: string[]; write: string[] } {
  const uid = process.getuid?.() ?? 0;
  const read = [
    '/var/run/docker.sock', '/run/docker.sock', '/run/containerd/containerd.sock', '/run/podman/podman.sock',
    // Docker's own containerd (dockerd started without a system one; review, round 35), and the other runtimes' sockets.
    '/var/run/docker/containerd/containerd.sock', '/run/docker/containerd/containerd.sock', '/run/crio/crio.sock', '/var/run/crio/crio.sock', '/run/k3s/containerd/containerd.sock',
    '/run/dbus/system_bus_socket', '/var/run/dbus/system_bus_socket',
    // The user's runtime directory is where control channels live: the D-Bus
    // session bus, the systemd user manager, GnuPG, keyrings, Wayland, PulseAudio,
    // rootless Docker and Podman, ssh-agent. X11 and ICE sockets drive the desktop.
    `/run/user/${uid}`, '/tmp/.X11-unix', '/tmp/.ICE-unix',
  ];
  if (ctx.env.XDG_RUNTIME_DIR) read.push(resolve(ctx.env.XDG_RUNTIME_DIR));
  if (ctx.env.SSH_AUTH_SOCK) read.push(resolve(ctx.env.SSH_AUTH_SOCK));
  // What only root can read (password hashes, host keys): never the agent's, whatever the profile.
  if (uid === 0) read.push(...expandedPaths(ROOT_CREDENTIAL_STORES, '/', '/'));
  // The repository's executable git state, wherever in it the run starts.
  return { read, write: executableGitState(ctx.cwd) };
}

