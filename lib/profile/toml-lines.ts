// TOML parsers return plain values without positions; errors must name the line.
// This scanner maps each key path (table headers, `key =` lines, dotted keys) to
// the line it was written on. Lines inside multi-line strings and arrays are
// skipped; a path that is not found falls back to its nearest written ancestor.

function splitKey(raw: string): string[] {
  const parts: string[] = [];
  let cur = '';
  let quote: string | null = null;
  for (const ch of raw) {
    if (quote) {
      if (ch === quote) quote = null;
      else cur += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
    } else if (ch === '.') {
      parts.push(cur.trim());
      cur = '';
    } else {
      cur += ch;
    }
  }
  parts.push(cur.trim());
  return parts;
}

/** Net change of open brackets on a line, outside strings and comments. */
function bracketDelta(line: string): { delta: number; tripleToggles: number } {
  let delta = 0;
  let toggles = 0;
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const rest = line.slice(i);
    if (!quote && (rest.startsWith('"""') || rest.startsWith("'''"))) {
      toggles++;
      i += 2;
      continue;
    }
    const ch = line[i] as string;
    if (quote) {
      if (ch === '\\' && quote === '"') i++;
      else if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '#') break;
    else if (ch === '[' || ch === '{') delta++;
    else if (ch === ']' || ch === '}') delta--;
  }
  return { delta, tripleToggles: toggles };
}

export function keyLines(source: string): Map<string, number> {
  const lines = new Map<string, number>();
  let table: string[] = [];
  let depth = 0;
  let inTriple = false;
  source.split(/\r?\n/).forEach((line, index) => {
    const lineNo = index + 1;
    const trimmed = line.trim();
    if (!inTriple && depth === 0) {
      const header = /^\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$/.exec(trimmed);
      if (header) {
        table = splitKey(header[1] as string);
        if (!lines.has(table.join('.'))) lines.set(table.join('.'), lineNo);
        return;
      }
      const kv = /^((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=/.exec(trimmed);
      if (kv) {
        const path = [...table, ...splitKey(kv[1] as string)].join('.');
        if (!lines.has(path)) lines.set(path, lineNo);
      }
    }
    const { delta, tripleToggles } = bracketDelta(line);
    if (tripleToggles % 2 === 1) inTriple = !inTriple;
    if (!inTriple) depth = Math.max(0, depth + delta);
  });
  return lines;
}

export function lineOf(lines: Map<string, number>, path: string[]): number | undefined {
  for (let n = path.length; n > 0; n--) {
    const found = lines.get(path.slice(0, n).join('.'));
    if (found !== undefined) return found;
  }
  return undefined;
}
