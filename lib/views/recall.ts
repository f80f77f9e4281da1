// A prompt an agent keeps to recall: what of it may come back from a sandbox.

/**
 * A prompt your agent would run as a command when recalled (review, round 27e: Codex's `!id` ran unsandboxed in
 * your own codex on Up and Enter; Claude Code's `!` is its bash mode; `/` its commands), or that hides what it says
 * (bidi overrides, zero-width characters): never carried back.
 */
export const recallsSafely = (text: unknown) => typeof text === 'string' && !/^[\s\p{Cf}]*[!/]/u.test(text) && !/[\p{Cf}\u0000-\u0008\u000b-\u001f\u007f-\u009f]/u.test(text);
