// A scan unit: one file's text (a whole file) or the lines a commit or the
// index adds to it, with the file's line number of each of its lines.

export interface ScanUnit {
  file: string;
  text: string;
  /** lineNumbers[i] is the file's line number of the unit's line i; null: the unit is the whole file (line i+1). */
  lineNumbers: number[] | null;
  commit?: string;
}

/** A hit of a detector: the match's place in the unit's text. */
export interface Hit {
  start: number;
  end: number;
  rule: string;
  masked: string;
}

/** The file's line number of an offset in the unit's text. */
export function lineAt(unit: ScanUnit, starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return unit.lineNumbers ? (unit.lineNumbers[lo] ?? lo + 1) : lo + 1;
}

export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}
