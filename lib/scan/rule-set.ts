// The maintained rule set: secretlint's recommended preset run through
// @secretlint/core (why this one, and not gitleaks' rules: docs/hooks.md).
// Loaded on first use: nothing of it is read unless a scan runs.
import { isPlaceholder } from './detectors.js';
import { mask } from './findings.js';
import type { Hit, ScanUnit } from './unit.js';

type Entry = typeof import('./secretlint-entry.js');

export const RULE_SET = '@secretlint/secretlint-rule-preset-recommend';

let loaded: Promise<Entry> | undefined;

/** The bundle maps this import to dist/bundle/secretlint.cjs (scripts/bundle.mjs). */
export function loadRuleSet(): Promise<Entry> {
  return (loaded ??= import('./secretlint-entry.js'));
}

const FILTER_COMMENTS = '@secretlint/secretlint-rule-filter-comments';
const AWS = '@secretlint/secretlint-rule-aws';

/**
 * The preset's rules, each registered on its own, with two changes. AWS
 * access key ids (AKIA…) are looked for too (off by default in the preset).
 * The rule that honours inline `secretlint-disable` comments is left out: in
 * an agent's commit they would be the agent's own word. (Registered through
 * the preset, a rule cannot be switched off: core 11.7.1 ignores `disabled`
 * there.)
 */
let configured: { rules: unknown[] } | undefined;
function config(entry: Entry) {
  return (configured ??= {
    rules: entry.recommendedRules
      .filter((rule) => rule.meta.id !== FILTER_COMMENTS)
      .map((rule) => ({ id: rule.meta.id, rule, ...(rule.meta.id === AWS ? { options: { enableIDScanRule: true } } : {}) })),
  });
}

const shortRule = (id: string) => id.replace(/^@secretlint\/secretlint-rule-/, '');

/** The rule set's hits in one unit; stashbase placeholders and the preset's own example values are not hits. */
export async function ruleSetHits(entry: Entry, unit: ScanUnit): Promise<Hit[]> {
  // The extension tells rules what a file is (package.json, .npmrc …). The GCP
  // rule reads a .p12 file from disk by its path: never given one (binary files
  // are not scanned, and the scan reads nothing but what it was handed).
  const dot = unit.file.lastIndexOf('.');
  const ext = dot > unit.file.lastIndexOf('/') ? unit.file.slice(dot) : '';
  const result = await entry.lintSource({
    source: { content: unit.text, filePath: unit.file, ext: ext === '.p12' ? '' : ext, contentType: 'text' },
    options: { config: config(entry) as never, noPhysicFilePath: true },
  });
  const hits: Hit[] = [];
  for (const m of result.messages) {
    const [start, end] = m.range;
    const match = unit.text.slice(start, end);
    if (isPlaceholder(match)) continue;
    hits.push({ start, end, rule: `${shortRule(m.ruleId)}/${m.messageId}`, masked: mask(match) });
  }
  return hits;
}
