// Phase timings of a run, printed to stderr as one JSON line when
// STASHBASE_TRACE=1: bench/docker reads them to say where the time goes.
export class Trace {
  private readonly start = performance.now();
  private last = this.start;
  private readonly phases: Record<string, number> = {};
  constructor(private readonly enabled: boolean) {}

  mark(phase: string): void {
    if (!this.enabled) return;
    const now = performance.now();
    this.phases[phase] = Math.round((this.phases[phase] ?? 0) + now - this.last);
    this.last = now;
  }

  print(): void {
    // startup: from the process's start (Node's own start, the bundle, the profile) to the first phase.
    const startup = Math.round(this.start);
    if (this.enabled) process.stderr.write(`stashbase-trace ${JSON.stringify({ startup, ...this.phases, total: Math.round(performance.now() - this.start) })}\n`);
  }
}
