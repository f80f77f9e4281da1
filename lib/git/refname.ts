// Ref names and object ids as git accepts them (git check-ref-format's rules),
// checked before a name the agent chose goes anywhere: into a git command, a
// ref of yours, a message. Pure.

/** An object id: SHA-1 (40) or SHA-256 (64) lower-case hex. */
export const OID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** The object id of the format in use (length 40 or 64). */
export const isOid = (s: string, length: 40 | 64): boolean => s.length === length && OID.test(s);

/**
 * Whether `name` is a full ref name under refs/ that git would accept:
 * components not starting with a dot nor ending in .lock, no "..", no "@{",
 * no control characters, space, ~ ^ : ? * [ or backslash, no empty component,
 * no trailing dot or slash.
 */
export function validRefName(name: string): boolean {
  if (!name.startsWith('refs/') || name.length > 1024) return false;
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(name) || name.includes('..') || name.includes('@{') || name.endsWith('.') || name.endsWith('/')) return false;
  return name.split('/').every((c) => c !== '' && !c.startsWith('.') && !c.endsWith('.lock'));
}
