// SHA-256 in hex. node:crypto (and the stream modules it pulls in: ~3 ms of
// start-up) loads only when something is actually hashed.
import { createRequire } from 'node:module';

export function sha256(text: string): string {
  const { createHash } = createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
