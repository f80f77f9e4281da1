// What the registry and OSV stubs (test/fixtures/registry-stub.mjs) know, shared by the dependency tests.
const days = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();
const OLD = days(900);
export const PACKAGES = {
  npm: {
    'sb-clean-helper': { created: OLD, versions: { '1.0.0': {} } },
    'sb-brand-new': { created: days(1.5), versions: { '0.1.0': {} } },
    'sb-evil-thing': { created: OLD, versions: { '1.0.0': {} } },
    'sb-runs-scripts': { created: OLD, versions: { '2.0.0': { scripts: { postinstall: 'node setup.js' } } } },
    'sb-taken-down': { created: OLD, latest: '0.0.1-security', description: 'security holding package', versions: { '0.0.1-security': {} } },
    lodahs: { created: OLD, versions: { '1.0.0': {} } },
    '@sbscope/tool': { created: OLD, versions: { '3.1.0': {} } },
  },
  pypi: { 'sb-clean-py': { created: OLD, version: '1.2.0' }, reqeusts: { created: OLD, version: '0.1' } },
  crates: { 'sb-clean-crate': { created: OLD, version: '0.3.1' } },
  go: { 'example.test/sb/mod': { versions: ['v1.0.0', 'v1.1.0'], created: OLD } },
  osv: {
    'pkg:npm/sb-evil-thing': [{ id: 'MAL-2025-0001', summary: 'Malicious code in sb-evil-thing (npm)', affected: [{ package: { name: 'sb-evil-thing', ecosystem: 'npm' }, ranges: [{ type: 'SEMVER', events: [{ introduced: '0' }] }] }] }],
  },
};

