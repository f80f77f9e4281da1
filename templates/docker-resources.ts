// Listing and removing what runs leave in Docker: per-run networks and
// containers (labelled with their session), isolated-path volumes.
import type { Command } from './command.js';
import { LABEL_PID, LABEL_SESSION } from './docker-run.js';
import { LABEL_ISOLATED, LABEL_REPO } from './docker-volumes.js';

export function listNetworksCommand(docker: string): Command {
  return { file: docker, args: ['network', 'ls', '--filter', `label=${LABEL_SESSION}`, '--format', `{{.Name}}|{{.CreatedAt}}|{{.Label "${LABEL_SESSION}"}}|{{.Label "${LABEL_PID}"}}`] };
}

export function listContainersCommand(docker: string): Command {
  return { file: docker, args: ['ps', '--all', '--filter', `label=${LABEL_SESSION}`, '--format', `{{.Names}}|{{.Label "${LABEL_SESSION}"}}|{{.Label "${LABEL_PID}"}}`] };
}

export function listVolumesCommand(docker: string): Command {
  return { file: docker, args: ['volume', 'ls', '--filter', `label=${LABEL_ISOLATED}`, '--format', `{{.Name}}|{{.Label "${LABEL_REPO}"}}|{{.Label "${LABEL_ISOLATED}"}}`] };
}

export function removeContainersCommand(docker: string, names: string[]): Command {
  return { file: docker, args: ['rm', '--force', ...names] };
}

export function removeNetworkCommand(docker: string, name: string): Command {
  return { file: docker, args: ['network', 'rm', name] };
}

export function removeVolumesCommand(docker: string, names: string[]): Command {
  return { file: docker, args: ['volume', 'rm', ...names] };
}
