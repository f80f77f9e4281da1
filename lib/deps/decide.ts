// The verdict on one package from what the registry and OSV said, pure: a
// name the registry does not have, one it took down, or one with a
// malicious-package advisory is blocked; a new package, a near miss of a far
// more popular name, or an install script new to the repository is a
// warning; whatever could not be asked is unchecked, never "ok".
import { coveringVersion } from './osv.js';
import type { DependencyCheckSettings } from './settings.js';
import type { Decision, Ecosystem, OsvFacts, RegistryFacts, Requested } from './types.js';
import { firstFew } from '../util/printable.js';

export const ECOSYSTEM_LABEL: Record<Ecosystem, string> = { npm: 'npm', pypi: 'PyPI', crates: 'Cargo', go: 'Go' };

export interface DecideInput {
  request: Extract<Requested, { kind: 'registry' }>;
  /** Where the registry was asked (shown in reasons). */
  registryUrl: string | null;
  registry: RegistryFacts;
  osv: OsvFacts;
  settings: DependencyCheckSettings;
  now: Date;
  near: { name: string; distance: number } | null;
  /** npm: whether the package is already in the working directory's package.json or lockfile; null = not known. */
  inRepo: boolean | null;
}

function age(ms: number): string {
  const hours = Math.max(0, Math.floor(ms / 3_600_000));
  return hours < 48 ? `${hours} hour${hours === 1 ? '' : 's'}` : `${Math.floor(hours / 24)} days`;
}

export function decide(i: DecideInput): Decision {
  const { request: r, registry: f, osv, settings } = i;
  const where = `the ${ECOSYSTEM_LABEL[r.ecosystem]} registry${i.registryUrl ? ` (${i.registryUrl})` : ''}`;
  const block: string[] = [];
  const warn: string[] = [];
  const unchecked: string[] = [];

  if (f.exists === false) {
    const why = f.problem ? ` (${f.problem})` : '';
    if (r.softMissing) unchecked.push(`not found in ${where}${why}, and ${r.softMissing}, which this check does not ask`);
    else block.push(`does not exist in ${where}${why}: the name may be misspelled or made up`);
  } else if (f.exists === null) unchecked.push(`${where} could not be asked: ${f.problem ?? 'no answer'}`);
  if (f.takenDown) block.push(f.takenDown);

  const covering = coveringVersion(osv.advisories, f.version);
  if (covering.length > 0) {
    const list = firstFew(covering.map((a) => `${a.id}${a.summary ? ` (${a.summary.slice(0, 200)})` : ''}`), 5);
    block.push(`OSV lists ${f.version !== undefined && !covering.every((a) => a.allVersions) ? `version ${f.version}` : 'it'} as malicious: ${list}`);
  } else if (osv.advisories.length > 0) {
    warn.push(`OSV lists other versions of it as malicious (${firstFew(osv.advisories.map((a) => a.id), 10)}); the version this would install (${f.version}) is not among them`);
  }
  if (osv.problem) unchecked.push(`OSV could not be asked about malicious versions: ${osv.problem}`);

  if (f.exists === true) {
    if (f.created && settings.minAgeDays > 0) {
      const ms = i.now.getTime() - f.created.getTime();
      if (ms < settings.minAgeDays * 86_400_000) warn.push(`first published ${age(ms)} ago (${f.created.toISOString()}), under the ${settings.minAgeDays}-day minimum age`);
    }
    if (i.near) warn.push(`its name is ${i.near.distance === 1 ? 'one edit' : `${i.near.distance} edits`} away from "${i.near.name}", a far more popular package: a typo, or a typosquat?`);
    if (f.installScripts && f.installScripts.length > 0 && i.inRepo === false) {
      warn.push(`version ${f.version} runs ${f.installScripts.join(', ')} script${f.installScripts.length > 1 ? 's' : ''} when installed, and it is new to this repository`);
    }
  }

  const verdict = block.length > 0 ? 'block' : warn.length > 0 ? 'warn' : unchecked.length > 0 ? 'unchecked' : 'ok';
  return { ecosystem: r.ecosystem, spec: r.spec, name: r.name, version: f.version, verdict, reasons: [...block, ...warn, ...unchecked] };
}

/** What a request that is not a registry name gets: said, not checked. */
export function notChecked(r: Extract<Requested, { kind: 'unchecked' }>): Decision {
  return { ecosystem: r.ecosystem, spec: r.spec, verdict: 'unchecked', reasons: [`not checked: ${r.why}`], local: !r.remote };
}
