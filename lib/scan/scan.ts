// One scan: the units of the chosen source, each through the rule set and
// stashbase's own detectors, into findings (deduplicated, in file order).
import { boundSecretHits, type BoundSecret, privateKeyHits } from './detectors.js';
import { dedupe, type Finding } from './findings.js';
import { listFiles, readUnitText } from './file-units.js';
import { type Range, rangeUnits, stagedUnits } from './git-units.js';
import { loadRuleSet, ruleSetHits } from './rule-set.js';
import { type Hit, lineAt, lineStarts, type ScanUnit } from './unit.js';

export type ScanSource = { kind: 'path'; path: string } | { kind: 'staged' } | { kind: 'range'; range: Range | null };

export interface ScanOptions {
  source: ScanSource;
  cwd: string;
  /** Per file: a larger file (or more added text) is not scanned, or scanned only that far. */
  maxBytes: number;
  bound: BoundSecret[];
}

export interface ScanResult {
  findings: Finding[];
  scanned: number;
  skipped: Array<{ file: string; why: string }>;
}

/** 1 MiB: source files are far smaller; larger ones are mostly data and lock files. */
export const DEFAULT_MAX_BYTES = 1024 * 1024;

export async function runScan(o: ScanOptions): Promise<ScanResult> {
  const findings: Finding[] = [];
  const skipped: ScanResult['skipped'] = [];
  const onSkip = (file: string, why: string) => skipped.push({ file, why });
  let scanned = 0;
  // git starts before the rule set loads: the two overlap.
  const pending = o.source.kind === 'staged' ? stagedUnits(o.cwd, o.maxBytes, onSkip) : o.source.kind === 'range' ? rangeUnits(o.cwd, o.source.range, o.maxBytes, onSkip) : null;
  pending?.catch(() => {}); // its failure is reported where it is awaited, below
  const entry = await loadRuleSet();
  const scanUnit = async (unit: ScanUnit) => {
    scanned++;
    const hits: Hit[] = [...privateKeyHits(unit.text), ...boundSecretHits(unit.text, o.bound), ...(await ruleSetHits(entry, unit))];
    if (hits.length === 0) return;
    const starts = lineStarts(unit.text);
    for (const h of hits.sort((a, b) => a.start - b.start)) {
      findings.push({ file: unit.file, line: lineAt(unit, starts, h.start), rule: h.rule, masked: h.masked, ...(unit.commit ? { commit: unit.commit } : {}) });
    }
  };
  if (o.source.kind === 'path') {
    const { files, label, explicit } = await listFiles(o.cwd, o.source.path);
    for (const abs of files) {
      const r = readUnitText(abs, o.maxBytes, explicit);
      if ('skip' in r) {
        if (r.skip !== 'missing') onSkip(label(abs), r.skip);
        continue;
      }
      await scanUnit({ file: label(abs), text: r.text, lineNumbers: null });
    }
  } else {
    for (const u of (await pending) ?? []) await scanUnit(u);
  }
  return { findings: dedupe(findings), scanned, skipped };
}
