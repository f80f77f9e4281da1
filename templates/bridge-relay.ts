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

export const RELAY_SCRIPT = String.raw`
use strict; use warnings;
use IO::Socket::INET; use IO::Socket::UNIX; use IO::Select;
my ($port, $path, $parent) = @ARGV;
$SIG{CHLD} = 'IGNORE';
my $l = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $port, Listen => 128, ReuseAddr => 1)
  or die "stashbase relay: cannot listen on 127.0.0.1:$port: $!\n";
$| = 1; print "ready\n";
my $ls = IO::Select->new($l);
while (1) {
  # Gone with stashbase: it is our parent, and a re-parented relay has no one to serve.
  exit 0 if getppid() != $parent;
  next unless $ls->can_read(1);
  my $c = $l->accept or next;
  my $pid = fork;
  if (!defined $pid || $pid) { close $c; next; }
  close $l;
  my $u = IO::Socket::UNIX->new(Peer => $path) or exit 1;
  my %peer = ($c => $u, $u => $c);
  my $sel = IO::Select->new($c, $u);
  while ($sel->count) {
    for my $s ($sel->can_read) {
      my $n = sysread($s, my $buf, 65536);
      if (!$n) { shutdown($peer{$s}, 1); $sel->remove($s); next; }
      for (my $off = 0; $off < $n; ) {
        my $w = syswrite($peer{$s}, $buf, $n - $off, $off);
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
