// Isolated-path volumes: which exist already, and making the missing ones
// (created with their labels, then handed to the agent's user).
import { listVolumesCommand } from '../../templates/docker-resources.js';
import { type IsolatedVolume, volumeCreateCommand, volumeOwnCommand } from '../../templates/docker-volumes.js';
import { capture } from '../exec.js';
import { parseVolumeRows } from './leftovers.js';

export async function newVolumes(docker: string, volumes: IsolatedVolume[]): Promise<IsolatedVolume[]> {
  if (volumes.length === 0) return [];
  const existing = new Set(parseVolumeRows(await capture(listVolumesCommand(docker))).map((v) => v.name));
  return volumes.filter((v) => !existing.has(v.name));
}

export async function prepareVolumes(docker: string, image: string, user: string | null, volumes: IsolatedVolume[]): Promise<void> {
  if (volumes.length === 0) return;
  await Promise.all(volumes.map((v) => capture(volumeCreateCommand(docker, v))));
  // A fresh volume's root belongs to root; a run as root needs nothing more.
  if (user !== null && user !== '0:0') await capture(volumeOwnCommand(docker, image, user, volumes.map((v) => v.name)));
}
