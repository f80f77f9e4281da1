// Aligned columns for the listings (worktrees, runs, audit logs, profiles):
// each column as wide as its widest cell, two spaces between, the last one
// unpadded.

/** One line per row, without line breaks. */
export function alignedRows(rows: string[][]): string[] {
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] as number))).join('  ').trimEnd());
}
