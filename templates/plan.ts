import { type Command, formatCommand } from './command.js';

/**
 * A run is an ordered list of steps: commands the runner spawns, and in-process
 * steps (start the proxy, write a record) that dry-run shows as `#` comments.
 */
export type PlanStep =
  | { kind: 'command'; id: string; command: Command; interactive?: boolean }
  | { kind: 'internal'; id: string; description: string };

export interface Plan {
  title: string;
  steps: PlanStep[];
}

export function internalStep(id: string, description: string): PlanStep {
  return { kind: 'internal', id, description };
}

export function commandStep(id: string, command: Command, interactive = false): PlanStep {
  return interactive ? { kind: 'command', id, command, interactive } : { kind: 'command', id, command };
}

export function formatPlan(plan: Plan): string {
  const lines = [`# ${plan.title}`];
  for (const step of plan.steps) {
    if (step.kind === 'internal') {
      for (const line of step.description.split('\n')) lines.push(`# ${line}`);
    } else {
      lines.push(formatCommand(step.command));
    }
  }
  return lines.join('\n') + '\n';
}

export interface PlanJson {
  title: string;
  steps: Array<
    | { type: 'command'; id: string; file: string; args: string[]; env: Record<string, string>; unsetEnv: string[]; cwd: string | null; interactive: boolean; shell: string }
    | { type: 'internal'; id: string; description: string }
  >;
}

export function planToJson(plan: Plan): PlanJson {
  return {
    title: plan.title,
    steps: plan.steps.map((step) =>
      step.kind === 'internal'
        ? { type: 'internal' as const, id: step.id, description: step.description }
        : {
            type: 'command' as const,
            id: step.id,
            file: step.command.file,
            args: [...step.command.args],
            env: { ...(step.command.env ?? {}) },
            unsetEnv: [...(step.command.unsetEnv ?? [])],
            cwd: step.command.cwd ?? null,
            interactive: step.interactive === true,
            shell: formatCommand(step.command),
          },
    ),
  };
}
