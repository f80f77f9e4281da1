// Phase timings of a run, printed to stderr as one JSON line when
// STASHBASE_TRACE=1: the benchmarks read them to say where the time goes.
// Disabled, it touches no clock (the performance API is itself a module load).
export class Trace {
  private readonly start: number;
  private last: number;
  private readonly phases: Record<string, number> = {};
  constructor(private readonly enabled: boolean) {
    this.start = enabled ? performance.now() : 0;
    this.last = this.start;
  }

  mark(phase: string): void {
    if (!this.enabled) return;
    const now = performance.now();
    this.phases[phase] = Math.round((this.phases[phase] ?? 0) + now - this.last);
    this.last = now;
  }

  print(): void {
    if (!this.enabled) return;
    // startup: from the process's start (Node's own start, the bundle, the profile) to the first phase.
    const startup = Math.round(this.start);
    process.stderr.write(`stashbase-trace ${JSON.stringify({ startup, ...this.phases, total: Math.round(performance.now() - this.start) })}\n`);
  }
}
