import type { FlagSpec } from '../lib/argv.js';
import { stubMain, type Stub } from './not-built.js';
import { JSON_FLAG, PROFILE_FLAGS } from './shared-flags.js';

const YES: FlagSpec = { name: 'yes', kind: 'bool', help: 'Skip the confirmation' };

export const stubs: Record<string, Stub> = {
  build: { name: 'agent docker build', usage: 'stashbase agent docker build [--force] [--profile <name>]', summary: 'Build the default sandbox image (or a profile\'s custom image) ahead of time.', flags: [{ name: 'force', kind: 'bool', help: 'Rebuild: pull the base image and reinstall the agent CLIs' }, ...PROFILE_FLAGS] },
  doctor: { name: 'agent docker doctor', usage: 'stashbase agent docker doctor [--json]', summary: 'Check whether the Docker backend can run here: CLI, daemon, default image.', flags: [JSON_FLAG] },
  status: { name: 'agent docker status', usage: 'stashbase agent docker status [--json]', summary: 'List per-run networks left by agent runs, with their sessions.', flags: [JSON_FLAG] },
  cleanup: { name: 'agent docker cleanup', usage: 'stashbase agent docker cleanup [--yes] [--isolated-paths]', summary: 'Remove networks and containers left by crashed runs (and isolated-path volumes).', flags: [YES, { name: 'isolated-paths', kind: 'bool', help: 'List and remove isolated-path volumes instead' }] },
  shell: { name: 'agent docker shell', usage: 'stashbase agent docker shell [--image <ref>] [--root]', summary: 'An interactive bash in the sandbox image with the persistent home volume; no run sandboxing.', flags: [{ name: 'image', kind: 'value', value: 'ref', help: 'Image to open (default: the default sandbox image)' }, { name: 'root', kind: 'bool', help: 'Run as root on Linux' }] },
};

export const mains = Object.fromEntries(Object.entries(stubs).map(([k, s]) => [k, stubMain(s)]));
