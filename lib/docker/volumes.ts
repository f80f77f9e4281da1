// Isolated-path volumes: which exist already, and making the missing ones
// (created with their labels, then handed to the agent's user).
import { type IsolatedVolume, LABEL_ISOLATED, volumeCreateCommand, volumeOwnCommand } from '../../templates/docker-volumes.js';
import { capture } from '../exec.js';

export function listIsolatedCommand(docker: string) {
  return { file: docker, args: ['volume', 'ls', '--filter', `label=${LABEL_ISOLATED}`, '--format', '{{.Name}}'] };
}

export async function newVolumes(docker: string, volumes: IsolatedVolume[]): Promise<IsolatedVolume[]> {
  if (volumes.length === 0) return [];
  const existing = new Set((await capture(listIsolatedCommand(docker))).split('\n').filter(Boolean));
  return volumes.filter((v) => !existing.has(v.name));
}

export async function prepareVolumes(docker: string, image: string, user: string | null, volumes: IsolatedVolume[]): Promise<void> {
  if (volumes.length === 0) return;
  await Promise.all(volumes.map((v) => capture(volumeCreateCommand(docker, v))));
  // A fresh volume's root belongs to root; a run as root needs nothing more.
  if (user !== null && user !== '0:0') await capture(volumeOwnCommand(docker, image, user, volumes.map((v) => v.name)));
}
