// The PreToolUse hook's side of the conversation with the agent, pure: the
// input it gets on stdin (Claude Code and Codex send the same shape for a
// shell command: tool_name, tool_input.command, cwd) and the answer it
// prints. A block is `permissionDecision: "deny"` with the reasons, which the
// agent reads; a warning is "ask" (Claude Code puts the reasons in front of
// you). Nothing to say is no output at all: never "allow", which would skip
// the agent's own permission rules. Codex's hooks cannot ask (0.171: "ask" is
// refused as unsupported), so there a warning blocks, and says so.
import { printable } from '../util/printable.js';
import type { DependencyCheckSettings } from '../deps/settings.js';
import type { Decision } from '../deps/types.js';
import { ECOSYSTEM_LABEL } from '../deps/decide.js';
import { jsonOf } from '../readback/json.js';

export type HookAgent = 'claude' | 'codex';
export const HOOK_AGENTS: readonly HookAgent[] = ['claude', 'codex'];

/** The shell tool's names: Claude Code's Bash; Codex reports its shell tool as Bash to hooks too. */
const SHELL_TOOLS = new Set(['Bash', 'bash', 'shell', 'exec_command', 'local_shell', 'shell_command']);

export interface HookInput {
  command: string;
  cwd?: string;
}

/** The command of a shell tool call, or null for any other tool; throws on input that is not a hook's. */
export function parseHookInput(text: string): HookInput | null {
  let v: unknown;
  try {
    v = jsonOf(text);
  } catch {
    throw new Error('the hook input on stdin is not JSON');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('the hook input on stdin is not a JSON object');
  const o = v as { tool_name?: unknown; tool_input?: unknown; cwd?: unknown };
  if (typeof o.tool_name !== 'string') throw new Error('the hook input has no tool_name');
  if (!SHELL_TOOLS.has(o.tool_name)) return null;
  const input = o.tool_input as { command?: unknown } | undefined;
  const command = Array.isArray(input?.command) ? input.command.filter((x) => typeof x === 'string').join(' ') : input?.command;
  if (typeof command !== 'string') throw new Error(`the ${o.tool_name} hook input has no tool_input.command`);
  return { command, cwd: typeof o.cwd === 'string' ? o.cwd : undefined };
}

export type Answer = 'deny' | 'ask' | 'none';

/** What the agent is told for these verdicts under these settings. */
export function answerOf(decisions: Decision[], settings: DependencyCheckSettings): Answer {
  const asking = decisions.filter((d) => !d.local);
  if (asking.some((d) => d.verdict === 'block')) return 'deny';
  const unchecked = asking.some((d) => d.verdict === 'unchecked');
  if (unchecked && settings.onUnchecked === 'deny') return 'deny';
  if (asking.some((d) => d.verdict === 'warn') || (unchecked && settings.onUnchecked === 'ask')) return 'ask';
  return 'none';
}

const VERDICT_LABEL = { block: 'BLOCKED', warn: 'warning', unchecked: 'unchecked', ok: 'ok' } as const;

export function reasonText(decisions: Decision[], answer: Answer): string {
  const lines = decisions
    .filter((d) => d.verdict !== 'ok')
    .map((d) => `- ${VERDICT_LABEL[d.verdict]}: ${ECOSYSTEM_LABEL[d.ecosystem]} package ${JSON.stringify(d.name ?? d.spec)}${d.version ? ` ${printable(d.version, true)}` : ''}: ${printable(d.reasons.join('; '), true)}`);
  const head =
    answer === 'deny'
      ? 'stashbase dependency check blocked this install. Do not retry it under another spelling; check the name, or ask the user.'
      : 'stashbase dependency check: this install needs a person to look first.';
  return [head, ...lines].join('\n');
}

/** The hook's stdout (empty for no answer) for the agent. */
export function hookOutput(decisions: Decision[], settings: DependencyCheckSettings, agent: HookAgent): string {
  const answer = answerOf(decisions, settings);
  if (answer === 'none') {
    const local = decisions.filter((d) => d.local);
    return local.length > 0 && agent === 'claude' ? JSON.stringify({ systemMessage: reasonText(local, 'ask').split('\n').slice(1).join('\n') }) + '\n' : '';
  }
  let reason = reasonText(decisions, answer);
  let decision: 'deny' | 'ask' = answer;
  if (agent === 'codex' && answer === 'ask') {
    decision = 'deny';
    reason += '\nCodex hooks cannot ask the user, so stashbase blocked it instead: tell the user what you wanted to install and why, and let them install it.';
  }
  return JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: decision, permissionDecisionReason: reason } }) + '\n';
}

/** The answer when the check itself failed: it must not let the command through unseen. */
export function failureOutput(message: string, agent: HookAgent): string {
  const reason = `stashbase dependency check could not check this command (${message}); a person should look at it first.`;
  return JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: agent === 'codex' ? 'deny' : 'ask', permissionDecisionReason: reason } }) + '\n';
}
