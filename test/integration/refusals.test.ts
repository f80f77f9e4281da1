// Issue 28, item 4: an interactive Claude Code with the API-key recipe failed
// on a fresh home at platform.claude.com, refused by the proxy, and nothing
// said so where the user looks. The end of every run now names what the
// proxy refused, how often, the profile line that would allow it, and what
// the known agents reach the host for. Every host here is refused by the
// profile: nothing leaves the machine.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { cli, needs, tempHome, writeFile } from '../helpers.js';

describe('the end of a run says what the proxy refused (real bwrap)', needs('bwrap'), () => {
  const t = tempHome();
  after(() => t.cleanup());
  const proj = join(t.home, 'proj');
  writeFile(join(proj, 'README'), 'x\n');
  const profile = writeFile(join(t.sbHome, 'agents', 'narrow.toml'), '[network]\negress_hosts = ["api.test"]\n');
  const curl = (url: string) => `curl -s -o /dev/null ${url}`;
  const script = [curl('https://platform.claude.com/v1/oauth'), ...Array.from({ length: 3 }, () => curl('https://chatgpt.com/backend-api/models')), 'curl -s https://elsewhere.test/ 2>/dev/null; curl -s -x "$HTTPS_PROXY" http://elsewhere.test/', 'true'].join('; ');

  test('one block: each refused host, how often, the line that allows it, what the agents use it for; the 403 tells the agent too', async () => {
    const r = await cli(['agent', 'run', '--profile', 'narrow', '--', 'sh', '-c', script], { env: t.env, cwd: proj });
    assert.equal(r.code, 0, r.stderr);
    // What the agent itself got: one line it can show its model.
    assert.equal(r.stdout, "stashbase proxy refused elsewhere.test:80: not in egress_hosts. This sandbox reaches only the hosts its profile allows; if the task needs this one, ask the user to add it to the profile's [network] egress_hosts.\n");
    const block = r.stderr.slice(r.stderr.indexOf('the proxy refused')).trim().split('\n');
    assert.deepEqual(block, [
      'the proxy refused 4 destinations during the run (an agent that failed to connect may have failed because of it):',
      `warning:   "chatgpt.com:443" ×3: not in egress_hosts; to allow it, add "chatgpt.com" to [network] egress_hosts in ${profile} (Codex: model discovery with an API key (--disable api_key_model_discovery skips it) or the turns of a ChatGPT login)`,
      `warning:   "elsewhere.test:443" ×1: not in egress_hosts; to allow it, add "elsewhere.test" to [network] egress_hosts in ${profile}`,
      `warning:   "elsewhere.test:80" ×1: not in egress_hosts; to allow it, add "elsewhere.test" to [network] egress_hosts in ${profile}`,
      `warning:   "platform.claude.com:443" ×1: not in egress_hosts; to allow it, add "platform.claude.com" to [network] egress_hosts in ${profile} (Claude Code: its login, the refresh of a login's token, and an interactive session's first start)`,
    ]);
    // --silent says nothing of it; a run that refused nothing neither.
    const silent = await cli(['agent', 'run', '--silent', '--profile', 'narrow', '--', 'sh', '-c', script], { env: t.env, cwd: proj });
    assert.doesNotMatch(silent.stderr, /the proxy refused/);
    const none = await cli(['agent', 'run', '--profile', 'narrow', '--', 'true'], { env: t.env, cwd: proj });
    assert.doesNotMatch(none.stderr, /the proxy refused/);
  });
});
