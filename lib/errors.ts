/** Base of every error the CLI reports as one clean message with an exit code. */
export class StashbaseError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number) {
    super(message);
    this.name = new.target.name;
    this.exitCode = exitCode;
  }
}

/** Bad flags or arguments. */
export class UsageError extends StashbaseError {
  constructor(message: string) {
    super(message, 2);
  }
}

/** A profile (or other configuration) that is missing, unreadable or invalid. */
export class ConfigError extends StashbaseError {
  constructor(message: string) {
    super(message, 2);
  }
}

/** A repository profile that has not been trusted (or changed since). */
export class TrustError extends StashbaseError {
  constructor(message: string) {
    super(message, 3);
  }
}

/** Isolation cannot be set up as asked: the run fails closed; the message names the fix. */
export class SandboxUnavailableError extends StashbaseError {
  constructor(message: string) {
    super(message, 4);
  }
}

/** A command stashbase ran for itself failed: carries the command line and the end of its stderr. */
export class CommandFailedError extends StashbaseError {
  readonly code: number;
  readonly stderr: string;
  constructor(commandLine: string, code: number, stderr: string) {
    const tail = stderr.trim().split('\n').slice(-5).join('\n');
    // Its words, indented: a line of its (a name it printed, an engine's answer) never starts like one of stashbase's.
    super(`Command failed with exit code ${code}: ${commandLine}${tail ? `\n${tail.split('\n').map((l) => `  ${l}`).join('\n')}` : ''}`, 1);
    this.code = code;
    this.stderr = stderr;
  }
}

/** You stopped it (Ctrl+C) before the agent started: nothing was run. */
export class InterruptedError extends StashbaseError {
  constructor(message: string) {
    super(message, 130);
  }
}

/** A run's set-up failure as the error it ends with (a failed command: the sandbox could not be set up) and that run's exit status. */
export function setupFailure(e: unknown, what: string): { err: unknown; exitCode: number } {
  const err = e instanceof CommandFailedError ? new SandboxUnavailableError(`${what} could not be set up; nothing was run. ${e.message}`) : e;
  return { err, exitCode: err instanceof StashbaseError ? err.exitCode : 70 };
}
