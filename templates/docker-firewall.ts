// The holder container's script: default-DROP firewall for IPv4 and IPv6 with
// exceptions only for loopback and the proxy's address and port, Docker's
// embedded resolver cut off, then a self-check that proves the rule, then it
// holds the network namespace forever. Pure text, one argument of `bash -c`.
import { shellQuote } from './shell-quote.js';

/** Lines the holder prints; the runner waits for one of them. */
export const FIREWALL_READY = 'stashbase-firewall-ready';
export const FIREWALL_FAILED = 'stashbase-firewall-failed:';
/** On Docker Desktop the proxy is on the host's loopback, reached by this name. */
export const DESKTOP_HOST = 'host.docker.internal';

export interface FirewallInput {
  /** The proxy's address as the container dials it: an IPv4 literal, or DESKTOP_HOST. */
  proxyHost: string;
  proxyPort: number | string;
  /** A listener of ours on the proxy's address: reachable before the rule, never after. */
  canaryPort: number | string;
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

function port(p: number | string): string {
  const s = String(p);
  // Dry runs show the ports as <proxy-port>; a real script only takes numbers.
  if (/^<[a-z-]+>$/.test(s) || (/^\d+$/.test(s) && Number(s) >= 1 && Number(s) <= 65535)) return s;
  throw new Error(`firewall: bad port ${s}`);
}

export function buildFirewallScript(f: FirewallInput): string {
  const proxyPort = port(f.proxyPort);
  const canaryPort = port(f.canaryPort);
  let resolveProxy: string;
  if (f.proxyHost === DESKTOP_HOST) {
    // From /etc/hosts (--add-host ...:host-gateway): DNS is blackholed below.
    resolveProxy = `proxy=$(getent ahostsv4 ${DESKTOP_HOST} | awk 'NR==1{print $1}'); [ -n "$proxy" ] || fail "${DESKTOP_HOST} does not resolve"`;
  } else if (IPV4.test(f.proxyHost) || f.proxyHost === '<gateway>') {
    resolveProxy = `proxy=${shellQuote(f.proxyHost)}`;
  } else {
    throw new Error(`firewall: the proxy address must be an IPv4 literal, not ${f.proxyHost}`);
  }
  return [
    'set -eu',
    `fail() { echo "${FIREWALL_FAILED} $*"; exit 1; }`,
    // A TCP connect with bash's /dev/tcp, in a subshell. It cannot hang: the
    // firewall resets what it refuses, and the runner gives up on a silent holder.
    `reach() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }`,
    resolveProxy,
    `reach "$proxy" ${canaryPort} || fail "the canary $proxy:${canaryPort} is unreachable even before the firewall: the check could prove nothing"`,
    // Docker's embedded resolver relays lookups to the host's DNS: the agent gets none.
    'echo "nameserver 0.0.0.0" > /etc/resolv.conf',
    // One atomic commit per family. The policy drops; what is refused first fails
    // at once instead of hanging (the agent's tools, and the check below).
    'iptables-restore <<EOF',
    '*filter',
    ':INPUT DROP [0:0]',
    ':FORWARD DROP [0:0]',
    ':OUTPUT DROP [0:0]',
    '-A OUTPUT -d 127.0.0.11/32 -j DROP',
    '-A OUTPUT -o lo -j ACCEPT',
    `-A OUTPUT -d $proxy/32 -p tcp --dport ${proxyPort} -j ACCEPT`,
    '-A OUTPUT -p tcp -j REJECT --reject-with tcp-reset',
    '-A OUTPUT -j REJECT',
    '-A INPUT -i lo -j ACCEPT',
    `-A INPUT -s $proxy/32 -p tcp --sport ${proxyPort} -j ACCEPT`,
    'COMMIT',
    'EOF',
    'ip6tables-restore <<EOF',
    '*filter',
    ':INPUT DROP [0:0]',
    ':FORWARD DROP [0:0]',
    ':OUTPUT DROP [0:0]',
    '-A OUTPUT -o lo -j ACCEPT',
    '-A OUTPUT -p tcp -j REJECT --reject-with tcp-reset',
    '-A OUTPUT -j REJECT',
    '-A INPUT -i lo -j ACCEPT',
    'COMMIT',
    'EOF',
    `reach "$proxy" ${proxyPort} || fail "the proxy $proxy:${proxyPort} is unreachable through the firewall"`,
    `if reach "$proxy" ${canaryPort}; then fail "the canary $proxy:${canaryPort} is still reachable: the firewall did not take effect"; fi`,
    // The rules are in: drop every capability (NET_ADMIN, and SETPCAP, which
    // dropping them takes) before saying so, and hold the namespace with none.
    'command -v setpriv >/dev/null || fail "setpriv (util-linux) is missing from the image: the holder cannot drop NET_ADMIN"',
    `exec setpriv --bounding-set -all --inh-caps -all --ambient-caps -all -- sh -c 'echo ${FIREWALL_READY}; exec sleep infinity'`,
  ].join('\n');
}
