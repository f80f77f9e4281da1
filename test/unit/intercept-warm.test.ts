// The intercepting proxy builds the upstream trust and the bound hosts'
// certificates once the agent is released (warm), not before it starts.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Interceptor } from '../../lib/proxy/intercept.js';
import { hostHeaderProblem } from '../../lib/proxy/server.js';
import { createRunCa } from '../../lib/tls/ca.js';
import { LeafCache } from '../../lib/tls/leaves.js';
import { tempHome } from '../helpers.js';

const t = tempHome();
after(() => t.cleanup());

test('warm() makes the certificates of the named bound hosts (normalized, wildcards left to their first use) and nothing before it', async () => {
  const leaves = new LeafCache(createRunCa(['*.test'], 'test'));
  const secret = (hosts: string[]) => ({ name: 'S', placeholder: 'stashbase_placeholder_S_0123456789', real: 'real-value-0123456789', hosts, inQuery: false, allowPlaintext: false });
  const i = new Interceptor({ leaves, secrets: [secret(['API.Example.test', '*.wild.test']), secret(['b.test.', 'api.example.test'])], upstreamCa: [], audit: () => {} }, hostHeaderProblem);
  try {
    assert.equal(leaves.size, 0, 'nothing is built with the interceptor');
    i.warm();
    assert.equal(leaves.size, 2);
    const before = leaves.get('api.example.test');
    assert.equal(leaves.size, 2, 'api.example.test was among them');
    assert.equal(leaves.get('b.test'), leaves.get('b.test'));
    assert.equal(leaves.size, 2, 'b.test (its trailing dot dropped) was the other');
    i.warm();
    assert.equal(leaves.get('api.example.test'), before, 'a second warm() changes nothing');
  } finally {
    i.close();
  }
});
