// The default image's Dockerfile. The bundle inlines this text (scripts/bundle.mjs),
// so an installed CLI builds the image without this repository; compiled but
// unbundled code (the tests) reads the file shipped beside it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const SANDBOX_DOCKERFILE: string = readFileSync(fileURLToPath(new URL('../../../Dockerfile.sandbox', import.meta.url)), 'utf8');
