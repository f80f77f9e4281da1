import assert from 'node:assert/strict';
import { test } from 'node:test';

test('a build that could not reach a registry says so, with the three ways round it; any other failure names the command', async () => {
  const { buildFailure } = await import('../../lib/docker/image.js');
  const cmd = { file: 'docker', args: ['build', '-t', 'stashbase-sandbox:latest', '.'] };
  const said = 'Step 1/9 : FROM debian:bookworm-slim\nGet "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io on 10.0.0.2:53: no such host\n';
  assert.equal(buildFailure(1, said, cmd, {}), [
    'the image build failed (exit code 1): it could not reach a registry or a download (Docker said: "dial tcp")',
    'its base image comes from a registry; where none is reachable:',
    '  - build from an image you have: STASHBASE_SANDBOX_BASE_IMAGE=<local image> stashbase agent docker build',
    "  - take the agents from npm's registry (your npm config) instead of the vendors' installers: stashbase agent docker build --agents-from npm",
    '  - or run an image you already have: stashbase agent run --docker-image <image> -- …',
  ].join('\n'));
  assert.match(buildFailure(1, 'pull access denied for mine, repository does not exist', cmd, { STASHBASE_SANDBOX_BASE_IMAGE: 'mine:1' }), /\nits base image is mine:1 \(STASHBASE_SANDBOX_BASE_IMAGE\); where none is reachable:\n/);
  assert.equal(buildFailure(2, 'E: Unable to locate package nope', cmd, {}), 'the image build failed (exit code 2): docker build -t stashbase-sandbox:latest .');
});
