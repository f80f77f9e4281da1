// Isolated-path volumes of a worktree (Docker runs label each with the folder
// it belongs to: the worktree's path): they go when the worktree goes.
import { listVolumesCommand, removeVolumesCommand } from '../../templates/docker-resources.js';
import { capture, probe } from '../exec.js';
import { parseVolumeRows } from '../docker/leftovers.js';
import { findTool } from '../util/find-tool.js';
import type { Worktree } from './layout.js';

/** Removes the worktree's isolated-path volumes; without a docker CLI or engine there are none to remove. */
export async function removeWorktreeVolumes(w: Worktree, env: NodeJS.ProcessEnv): Promise<string[]> {
  const docker = findTool('docker', env);
  if (!docker) return [];
  const r = probe(listVolumesCommand(docker), 15000);
  if (r.code !== 0) return [];
  const names = parseVolumeRows(r.stdout).filter((v) => v.repo === w.path).map((v) => v.name);
  if (names.length > 0) await capture(removeVolumesCommand(docker, names));
  return names;
}
