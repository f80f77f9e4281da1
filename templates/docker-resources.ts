// Listing and removing what runs leave in Docker: per-run networks and
// containers (labelled with their session), isolated-path volumes.
import type { Command } from './command.js';
import { LABEL_PID, LABEL_SESSION } from './docker-run.js';
import { LABEL_ISOLATED, LABEL_REPO } from './docker-volumes.js';
import { LABEL_ORIGIN, LABEL_WORKSPACE } from './remote-run.js';

/** A `--format` of tab-separated columns (a JSON string holds no raw tab or line break). */
const columns = (...parts: string[]) => parts.join('{{"\\t"}}');
/** A label's value as a JSON string: anyone who makes objects on the engine writes labels. */
const label = (name: string) => `{{json (.Label "${name}")}}`;

/**
 * Runs' networks, containers and volumes: names and times as the engine gives them, every label a JSON string, the
 * columns tab-separated (review, round 35: a co-tenant's pid label holding `|` shifted the columns, and the creation
 * time cleanup asks you to judge by was its text).
 */
export function listNetworksCommand(docker: string): Command {
  return { file: docker, args: ['network', 'ls', '--filter', `label=${LABEL_SESSION}`, '--format', columns('{{.Name}}', '{{.CreatedAt}}', label(LABEL_SESSION), label(LABEL_PID))] };
}

export function listContainersCommand(docker: string): Command {
  return { file: docker, args: ['ps', '--all', '--filter', `label=${LABEL_SESSION}`, '--format', columns('{{.Names}}', label(LABEL_SESSION), label(LABEL_PID), '{{.CreatedAt}}', label(LABEL_ORIGIN))] };
}

/** A remote run's volumes labelled with its session (its tools), with the machine it was started from. */
export function listRunVolumesCommand(docker: string): Command {
  return { file: docker, args: ['volume', 'ls', '--filter', `label=${LABEL_SESSION}`, '--format', columns('{{.Name}}', label(LABEL_SESSION), label(LABEL_ORIGIN), label(LABEL_PID))] };
}

/**
 * Remote runs' workspaces, with two labels (the run's name, the machine and folder they were made from). A volume's
 * `.Labels` is one "k=v,…" string, not an object (found in review: every workspace was listed without its labels).
 */
export function listWorkspacesCommand(docker: string): Command {
  return { file: docker, args: ['volume', 'ls', '--filter', `label=${LABEL_WORKSPACE}`, '--format', columns('{{.Name}}', label(LABEL_WORKSPACE), label(LABEL_ORIGIN))] };
}

/**
 * Isolated-path volumes: the name, then the folder and path labels (found in review: labels printed raw put a
 * co-tenant's escape sequences on your terminal, and a line break in one a row of its own in the list cleanup removes).
 */
export function listVolumesCommand(docker: string): Command {
  return { file: docker, args: ['volume', 'ls', '--filter', `label=${LABEL_ISOLATED}`, '--format', columns('{{.Name}}', label(LABEL_REPO), label(LABEL_ISOLATED))] };
}

export function removeContainersCommand(docker: string, names: string[]): Command {
  return { file: docker, args: ['rm', '--force', ...names] };
}

export function removeNetworkCommand(docker: string, name: string): Command {
  return { file: docker, args: ['network', 'rm', name] };
}

export function removeVolumesCommand(docker: string, names: string[], force = false): Command {
  return { file: docker, args: ['volume', 'rm', ...(force ? ['--force'] : []), ...names] };
}
