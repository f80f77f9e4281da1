// The direct check's table: one block per package, its verdict and reasons.
import { printable } from '../util/printable.js';
import { ECOSYSTEM_LABEL } from './decide.js';
import type { Decision } from './types.js';

const LABEL = { block: 'BLOCK', warn: 'WARN', unchecked: 'UNCHECKED', ok: 'ok' } as const;

export function formatDecisions(decisions: Decision[]): string {
  const width = Math.max(...decisions.map((d) => LABEL[d.verdict].length));
  const lines: string[] = [];
  for (const d of decisions) {
    lines.push(`${LABEL[d.verdict].padEnd(width)}  ${ECOSYSTEM_LABEL[d.ecosystem]} ${printable(d.name ?? d.spec, true)}${d.version ? ` ${printable(d.version, true)}` : ''}`);
    // A reason quotes a registry's and an advisory database's words (a version, an advisory's summary): one line, escaped.
    for (const r of d.reasons) lines.push(`${' '.repeat(width)}    ${printable(r, true)}`);
  }
  return lines.join('\n') + '\n';
}
