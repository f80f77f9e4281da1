// The only way out of the sandbox's network namespace: a small relay, in that
// namespace but outside the sandbox's PID namespace (so nothing inside can see,
// signal or reconfigure it), that accepts on the namespace's loopback and
// carries each connection to the proxy's Unix socket on the host side. Perl,
// because it starts in milliseconds and is part of every Debian/Ubuntu base
// system (perl-base); a node process would double the cost of a run.
//
// It starts before bwrap, in parallel with it, and waits on its stdin for the
// pid of bwrap's sandbox; then it joins that pid's user namespace (an
// unprivileged run's) and network namespace itself, with setns(2), keeping
// its own credentials (as `nsenter --preserve-credentials` would).
import type { Command } from './command.js';

/** The proxy's port on the loopback of the sandbox's own network namespace. */
export const BRIDGE_PORT = 18080;

/** setns(2)'s number on the architectures the native sandbox supports (those of templates/seccomp.ts). */
export const SETNS_SYSCALL = { x64: 308, arm64: 268 } as const;
export type RelayArch = keyof typeof SETNS_SYSCALL;

// Built-ins only, no modules (not even the strict and warnings pragmas): loading even Socket.pm costs 20 ms. The numbers
// are Linux's (AF_UNIX 1, AF_INET 2, SOCK_STREAM 1, SOL_SOCKET 1, SO_REUSEADDR 2,
// EADDRNOTAVAIL 99, CLONE_NEWUSER 0x10000000, CLONE_NEWNET 0x40000000); on an
// ABI where they differ, setns or listen fails and the run fails closed.
// Loopback may not be up yet when it joins (bwrap configures it in the
// sandbox's first process): binding 127.0.0.1 is retried while the address is
// missing, for at most 5 s.
export const RELAY_SCRIPT = String.raw`
my ($port, $path, $parent, $setns, $userns) = @ARGV;
$| = 1;
my $pid = <STDIN>;
defined $pid && $pid =~ /^([0-9]+)\n\z/ or die "stashbase relay: no sandbox pid on stdin\n";
$pid = $1;
for my $ns ($userns ? (['user', 0x10000000]) : (), ['net', 0x40000000]) {
  open(my $fh, '<', "/proc/$pid/ns/$ns->[0]") or die "stashbase relay: /proc/$pid/ns/$ns->[0]: $!\n";
  syscall($setns + 0, fileno($fh), $ns->[1]) == 0 or die "stashbase relay: setns $ns->[0]: $!\n";
  close $fh;
}
print "joined\n";
$SIG{CHLD} = 'IGNORE';
socket(my $l, 2, 1, 0) or die "stashbase relay: socket: $!\n";
setsockopt($l, 1, 2, pack('i', 1));
my $tries = 0;
until (bind($l, pack('S n C4 x8', 2, $port, 127, 0, 0, 1))) {
  die "stashbase relay: cannot listen on 127.0.0.1:$port: $!\n" unless $! == 99 && $tries++ < 5000;
  select(undef, undef, undef, 0.001);
}
listen($l, 128) or die "stashbase relay: listen: $!\n";
print "ready\n";
while (1) {
  # Gone with stashbase: it is our parent, and a re-parented relay has no one to serve.
  exit 0 if getppid() != $parent;
  my $rin = ''; vec($rin, fileno($l), 1) = 1;
  next unless select($rin, undef, undef, 1) > 0;
  accept(my $c, $l) or next;
  my $kid = fork;
  if (!defined $kid || $kid) { close $c; next; }
  close $l;
  socket(my $u, 1, 1, 0) or exit 1;
  connect($u, pack('S a108', 1, $path)) or exit 1;
  my %peer = (fileno($c) => $u, fileno($u) => $c);
  my %open = (fileno($c) => $c, fileno($u) => $u);
  while (%open) {
    my $rin = ''; vec($rin, $_, 1) = 1 for keys %open;
    select(my $rout = $rin, undef, undef, undef) > 0 or next;
    for my $fd (keys %open) {
      next unless vec($rout, $fd, 1);
      my $n = sysread($open{$fd}, my $buf, 65536);
      if (!$n) { shutdown($peer{$fd}, 1); delete $open{$fd}; next; }
      for (my $off = 0; $off < $n; ) {
        my $w = syswrite($peer{$fd}, $buf, $n - $off, $off);
        exit 0 unless defined $w;
        $off += $w;
      }
    }
  }
  exit 0;
}
`;

export interface RelayInput {
  perl: string;
  /** setns(2)'s syscall number on this machine. */
  setns: number;
  /** bwrap made a user namespace (unprivileged run): join it too, keeping our uid. */
  userns: boolean;
  socket: string;
}

/** The relay's command: it reads the sandbox's pid on its stdin. */
export function buildRelayCommand(r: RelayInput, parentPid: string): Command {
  return { file: r.perl, args: ['-e', RELAY_SCRIPT, String(BRIDGE_PORT), r.socket, parentPid, String(r.setns), r.userns ? '1' : '0'] };
}
