// The proxy refuses a name that resolves to one of this host's own addresses,
// even one outside every refused range: a veth this test creates on the host
// holds an address of TEST-NET-2 or -3 (nowhere in the refused ranges, and
// overlapping no route of this host). Once the
// interface is gone, the same answer is allowed: the control. Needs root.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { networkInterfaces } from 'node:os';
import { after, before, describe, test } from 'node:test';
import { refusedAddress } from '../../lib/proxy/addresses.js';
import { resolveTarget } from '../../lib/proxy/server.js';
import { unusedSubnet } from '../net-setup.js';
import { needsRoot } from '../helpers.js';

const root = process.getuid?.() === 0;
const LINK = `sbo${process.pid % 100000}a`;
const ADDR = root ? unusedSubnet('ipv4', ['203.0.113.77/32', '198.51.100.77/32', '203.0.113.177/32']).split('/')[0] as string : '';
const policy = { egressHosts: ['*.test'], denyHosts: [], mapped: {} };
const resolver = async () => [ADDR];

function ip(...args: string[]): void {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr}`);
}

describe("the proxy and this host's own addresses (a veth of our own)", needsRoot('it creates a network interface'), () => {
  const PEER = `sbo${process.pid % 100000}b`;
  before(() => {
    ip('link', 'add', LINK, 'type', 'veth', 'peer', 'name', PEER);
    ip('addr', 'add', `${ADDR}/32`, 'dev', LINK);
  });
  after(() => spawnSync('ip', ['link', 'del', LINK]));

  const listed = () => Object.values(networkInterfaces()).some((l) => l?.some((e) => e.address === ADDR));

  test('a name resolving to an address of this host is refused while the address is ours (with a carrier or without), allowed once it is not', async () => {
    // Up without a carrier (its peer is down), as a bridge with no container:
    // Node does not list it, and yet this host answers on it.
    ip('link', 'set', LINK, 'up');
    assert.equal(listed(), false);
    assert.match(spawnSync('ip', ['route', 'get', ADDR], { encoding: 'utf8' }).stdout, /^local /);
    assert.equal(refusedAddress(ADDR), `${ADDR} is an address of this host`);
    // Running.
    ip('link', 'set', PEER, 'up');
    for (let i = 0; i < 50 && !listed(); i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(listed(), true);
    assert.equal(refusedAddress(ADDR), `${ADDR} is an address of this host`);
    assert.deepEqual(await resolveTarget('own.test', 443, policy, resolver), {
      refused: `own.test resolves only to refused addresses (${ADDR} is an address of this host)`,
    });
    // Gone: the same answer is allowed (the control).
    ip('link', 'del', LINK);
    assert.equal(refusedAddress(ADDR), null);
    assert.deepEqual(await resolveTarget('own.test', 443, policy, resolver), { address: ADDR, port: 443 });
  });
});
