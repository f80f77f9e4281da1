// A prompt an agent keeps to recall: what of it may come back from a sandbox.

/**
 * A prompt your agent would run as a command when recalled (review, round 27e: Codex's `!id` ran unsandboxed in
 * your own codex on Up and Enter; Claude Code's `!` is its bash mode; `/` its commands), or that hides what it says
 * (bidi overrides, zero-width characters): never carried back.
 */
import { isJsonObject, type Json } from '../readback/json.js';

export const recallsSafely = (text: unknown) => typeof text === 'string' && !/^[\s\p{Cf}]*[!/]/u.test(text) && !/[\p{Cf}\u0000-\u0008\u000b-\u001f\u007f-\u009f]/u.test(text);

/**
 * A Claude Code prompt entry as it keeps them (`display`, `pastedContents` named by hashes): one your Up and Enter
 * may recall. An inline pasted text is text your Enter would send unseen; a contentHash is joined to a path
 * (review, round 27c): hex alone.
 */
export function promptEntryOk(v: Json | undefined): boolean {
  if (!isJsonObject(v)) return false;
  if (v.display !== undefined && !recallsSafely(v.display)) return false;
  const pasted = v.pastedContents;
  return pasted === undefined || (isJsonObject(pasted) && Object.values(pasted).every((e) => isJsonObject(e) && e.content === undefined && (e.contentHash === undefined || (typeof e.contentHash === 'string' && /^[0-9a-f]{8,128}$/.test(e.contentHash)))));
}
