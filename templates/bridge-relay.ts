// The only way out of the sandbox's network namespace: a small relay, started
// by nsenter in that namespace but outside the sandbox's PID namespace (so
// nothing inside can see, signal or reconfigure it), that accepts on the
// namespace's loopback and carries each connection to the proxy's Unix socket
// on the host side. Perl, because it starts in milliseconds and is part of
// every Debian/Ubuntu base system (perl-base); a node process would double the
// cost of a run.
import type { Command } from './command.js';

/** The proxy's port on the loopback of the sandbox's own network namespace. */
export const BRIDGE_PORT = 18080;

// Built-ins only, no modules: loading even Socket.pm costs 20 ms. The numbers
// are Linux's (AF_UNIX 1, AF_INET 2, SOCK_STREAM 1, SOL_SOCKET 1, SO_REUSEADDR 2);
// on an ABI where they differ, listen fails and the run fails closed.
export const RELAY_SCRIPT = String.raw`
use strict; use warnings;
my ($port, $path, $parent) = @ARGV;
$| = 1; print "joined\n"; # nsenter has entered the namespaces before it ran us
$SIG{CHLD} = 'IGNORE';
socket(my $l, 2, 1, 0) or die "stashbase relay: socket: $!
";
setsockopt($l, 1, 2, pack('i', 1));
bind($l, pack('S n C4 x8', 2, $port, 127, 0, 0, 1)) or die "stashbase relay: cannot listen on 127.0.0.1:$port: $!
";
listen($l, 128) or die "stashbase relay: listen: $!
";
$| = 1; print "ready
";
while (1) {
  # Gone with stashbase: it is our parent, and a re-parented relay has no one to serve.
  exit 0 if getppid() != $parent;
  my $rin = ''; vec($rin, fileno($l), 1) = 1;
  next unless select($rin, undef, undef, 1) > 0;
  accept(my $c, $l) or next;
  my $pid = fork;
  if (!defined $pid || $pid) { close $c; next; }
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
  nsenter: string;
  perl: string;
  /** bwrap made a user namespace (unprivileged run): join it too, keeping our uid. */
  userns: boolean;
  socket: string;
}

export function buildRelayCommand(r: RelayInput, pid: string, parentPid: string): Command {
  return {
    file: r.nsenter,
    args: ['--target', pid, ...(r.userns ? ['--user', '--preserve-credentials'] : []), '--net', '--', r.perl, '-e', RELAY_SCRIPT, String(BRIDGE_PORT), r.socket, parentPid],
  };
}
