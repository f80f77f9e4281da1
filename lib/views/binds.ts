// What bwrap mounts for a view: the run's folder at the host path, then each
// live entry bound writable and each read-only one read-only inside it.
import { join } from 'node:path';
import type { BindMount } from '../../templates/bwrap.js';
import type { ViewSpec } from './spec.js';

export function viewBinds(spec: ViewSpec, dir: string): BindMount[] {
  return [
    { src: dir, dest: spec.at, ro: false },
    ...spec.live.map((n) => ({ src: join(spec.liveFrom ?? spec.at, n), dest: join(spec.at, n), ro: false })),
    ...spec.readOnly.map((n) => ({ src: join(spec.at, n), dest: join(spec.at, n), ro: true })),
  ];
}
