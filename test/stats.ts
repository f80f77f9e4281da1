// Statistics for the tests that time what must not depend on a secret.

/** The Mann-Whitney rank statistic of two samples, as a z score (no difference: near 0). */
export function rankZ(a: number[], b: number[]): number {
  const all = [...a.map((v) => ({ v, g: 0 })), ...b.map((v) => ({ v, g: 1 }))].sort((x, y) => x.v - y.v);
  let rankA = 0;
  for (let i = 0; i < all.length; ) {
    let j = i;
    while (j < all.length && all[j]!.v === all[i]!.v) j++;
    const rank = (i + j + 1) / 2;
    for (let k = i; k < j; k++) if (all[k]!.g === 0) rankA += rank;
    i = j;
  }
  const n1 = a.length;
  const n2 = b.length;
  const u = rankA - (n1 * (n1 + 1)) / 2;
  return (u - (n1 * n2) / 2) / Math.sqrt((n1 * n2 * (n1 + n2 + 1)) / 12);
}

/** Milliseconds `fn` takes, median of three calls. */
export function timed(fn: () => void): number {
  const t: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = process.hrtime.bigint();
    fn();
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return t.sort((a, b) => a - b)[1] as number;
}

/** z of the times of `fn` over two inputs, interleaved. */
export function zOf<T>(fn: (b: T) => void, a: T, b: T, rounds = 15): number {
  fn(a);
  fn(b);
  const ta: number[] = [];
  const tb: number[] = [];
  // Each first every other round: what the one before leaves (a collection due, a cache) falls on both alike.
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      ta.push(timed(() => fn(a)));
      tb.push(timed(() => fn(b)));
    } else {
      tb.push(timed(() => fn(b)));
      ta.push(timed(() => fn(a)));
    }
  }
  return rankZ(ta, tb);
}

/** The ratio of the times `a` and `b` take, each the median of `rounds` calls made in turn (load hits both alike). */
export function ratioOf(a: () => void, b: () => void, rounds = 7): number {
  const ta: number[] = [];
  const tb: number[] = [];
  for (let i = 0; i < rounds; i++) {
    ta.push(timed(a));
    tb.push(timed(b));
  }
  const median = (x: number[]) => x.sort((p, q) => p - q)[x.length >> 1] as number;
  return median(ta) / median(tb);
}
