import { type Command, formatCommand } from '../templates/command.js';

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

/** A command the runner spawned failed. */
export class CommandFailedError extends StashbaseError {
  readonly command: Command;
  readonly code: number | null;
  readonly stderrTail: string;
  constructor(command: Command, code: number | null, signal: string | null, stderr: string) {
    const how = signal ? `was killed by ${signal}` : `failed with exit code ${code}`;
    const tail = stderr.trim().split('\n').slice(-5).join('\n');
    super(`Command ${how}: ${formatCommand(command)}${tail ? `\n${tail}` : ''}`, 1);
    this.command = command;
    this.code = code;
    this.stderrTail = tail;
  }
}
