// The only way out of the sandbox's network namespace: a small relay, in that
// namespace but outside the sandbox's PID namespace (so nothing inside can see,
// signal or reconfigure it), that accepts on the namespace's loopback and
// carries each connection to the proxy's Unix socket on the host side. Perl,
// because it starts in milliseconds and is part of every Debian/Ubuntu base
// system (perl-base); a node process would double the cost of a run.
//
// One process starts both: perl forks, the parent becomes the sandbox (it
// execs bwrap, so bwrap stays stashbase's child, with its descriptors), the
// child is the relay, in a session of its own (the terminal's Ctrl+C is the
// agent's). The relay talks to stashbase on a socket pair of its own, which the
// sandbox never holds: it says its pid, waits for the pid of bwrap's sandbox,
// joins that pid's user namespace (an unprivileged run's) and network
// namespace with setns(2), keeping its own credentials, and listens.
//
// It is one event loop for every connection (select over non-blocking
// sockets, each side's backlog bounded, a side that stops reading stops only
// its own peer), with TCP_NODELAY toward the agent, and at most a set number
// of connections at once (past that, the oldest connection the proxy has not
// answered makes room, or the new one is refused). SIGPIPE is
// ignored (in the relay only, never in the sandbox it execs): a write to a
// side already closed fails with EPIPE and drops that connection, where the
// signal would have ended the relay and every later request of the run.
import type { Command } from './command.js';

/** The proxy's port on the loopback of the sandbox's own network namespace. */
export const BRIDGE_PORT = 18080;

/** setns(2)'s and setsid(2)'s numbers on the architectures the native sandbox supports (those of templates/seccomp.ts). */
export const SETNS_SYSCALL = { x64: 308, arm64: 268 } as const;
export const SETSID_SYSCALL = { x64: 112, arm64: 157 } as const;
export type RelayArch = keyof typeof SETNS_SYSCALL;

// Built-ins only, no modules (not even the strict and warnings pragmas): loading
// even Socket.pm costs 20 ms. The numbers are Linux's (AF_UNIX 1, AF_INET 2,
// SOCK_STREAM 1, SOL_SOCKET 1, SO_REUSEADDR 2, IPPROTO_TCP 6, TCP_NODELAY 1,
// F_SETFL 4, O_NONBLOCK 0x800, EAGAIN 11, EADDRNOTAVAIL 99, CLONE_NEWUSER
// 0x10000000, CLONE_NEWNET 0x40000000); on an ABI where they differ, setns or
// listen fails and the run fails closed. Loopback may not be up yet when it
// joins (bwrap configures it in the sandbox's first process): binding
// 127.0.0.1 is retried while the address is missing, for at most 5 s.
export const RELAY_SCRIPT = String.raw`
# stashbase relay
my ($port, $path, $setns, $userns, $setsid, $ctlfd, $max, $close) = splice(@ARGV, 0, 8);
shift @ARGV;
my $kid = fork;
defined $kid or die "stashbase: fork: $!\n";
if ($kid) {
  open(my $c, '<&=', $ctlfd) and close $c;
  $SIG{INT} = 'IGNORE';
  exec { $ARGV[0] } @ARGV or do { print STDERR "stashbase: cannot run $ARGV[0]: $!\n"; exit 127 };
}
my $parent = getppid();
syscall($setsid + 0);
# A peer gone mid-write is that connection's end, not the relay's.
$SIG{PIPE} = 'IGNORE';
for my $fd (split /,/, $close) { open(my $h, '<&=', $fd) and close $h }
open(my $ctl, '+<&=', $ctlfd) or exit 1;
select((select($ctl), $| = 1)[0]);
open(STDIN, '<', '/dev/null'); open(STDOUT, '>', '/dev/null'); open(STDERR, '>', '/dev/null');
sub fail { print $ctl "error $_[0]\n"; exit 1 }
print $ctl "pid $$\n";
my $pid = <$ctl>;
defined $pid && $pid =~ /^([0-9]+)\n\z/ or fail("no sandbox pid");
$pid = $1;
for my $ns ($userns ? (['user', 0x10000000]) : (), ['net', 0x40000000]) {
  open(my $fh, '<', "/proc/$pid/ns/$ns->[0]") or fail("/proc/$pid/ns/$ns->[0]: $!");
  syscall($setns + 0, fileno($fh), $ns->[1]) == 0 or fail("setns $ns->[0]: $!");
  close $fh;
}
print $ctl "joined\n";
socket(my $l, 2, 1, 0) or fail("socket: $!");
setsockopt($l, 1, 2, pack('i', 1));
my $tries = 0;
until (bind($l, pack('S n C4 x8', 2, $port, 127, 0, 0, 1))) {
  fail("cannot listen on 127.0.0.1:$port: $!") unless $! == 99 && $tries++ < 5000;
  select(undef, undef, undef, 0.001);
}
listen($l, 1024) or fail("listen: $!");
fcntl($l, 4, 0x800);
print $ctl "ready\n";
my (%h, %peer, %out, %eof, %client, %shut, %got, %seq, @wait, @order);
my $serial = 0;
my $lfd = fileno($l);
sub drop { my $fd = shift; my $p = $peer{$fd}; for my $x ($fd, defined $p ? $p : ()) { close $h{$x} if $h{$x}; delete $h{$x}; delete $peer{$x}; delete $out{$x}; delete $eof{$x}; delete $client{$x}; delete $shut{$x}; delete $got{$x} } }
# After a side's backlog is written: the agent's side closed sends end-of-file on; the proxy's closes both.
sub settle { my $fd = shift; my $p = $peer{$fd}; return unless defined $p && $eof{$p} && !length($out{$fd});
  if ($client{$p}) { shutdown($h{$fd}, 1) unless $shut{$fd}++; drop($fd) if $eof{$fd} } else { drop($fd) } }
sub flush { my $fd = shift; return unless $h{$fd};
  if (length $out{$fd}) { my $w = syswrite($h{$fd}, $out{$fd});
    if (defined $w) { substr($out{$fd}, 0, $w) = '' } elsif ($! != 11) { drop($fd); return } }
  settle($fd) }
while (1) {
  exit 0 if getppid() != $parent;
  my ($rin, $win) = ('', '');
  vec($rin, $lfd, 1) = 1;
  for my $fd (keys %h) {
    vec($rin, $fd, 1) = 1 if !$eof{$fd} && length($out{$peer{$fd}}) < 262144;
    vec($win, $fd, 1) = 1 if length $out{$fd};
  }
  next unless select(my $rout = $rin, my $wout = $win, undef, @wait ? 0.005 : 1) > 0 || @wait;
  for my $fd (keys %h) {
    next unless $h{$fd};
    flush($fd) if vec($wout, $fd, 1);
    next unless $h{$fd} && vec($rout, $fd, 1);
    my $n = sysread($h{$fd}, my $buf, 65536);
    if ($n) { $out{$peer{$fd}} .= $buf; $got{$peer{$fd}} = 1 if $client{$peer{$fd}}; flush($peer{$fd}) }
    elsif (defined $n) { $eof{$fd} = 1; settle($peer{$fd}) }
    elsif ($! != 11) { drop($fd) }
  }
  # New connections after the ends of old ones: what the proxy closed frees its room first.
  if (vec($rout, $lfd, 1)) {
    while (accept(my $c, $l)) {
      # Full: the oldest connection the proxy has not answered at all makes room (a flood of heads
      # ages out, an answered stream stays); with none such, the new one is refused.
      if (keys(%h) + 2 * @wait >= 2 * $max) {
        @order = grep { $h{$_->[0]} && $seq{$_->[0]} == $_->[1] } @order;
        my ($old) = map { $_->[0] } grep { !$got{$_->[0]} } @order;
        if (defined $old) { drop($old) } elsif (@wait) { close(shift @wait) } else { close $c; next }
      }
      setsockopt($c, 6, 1, pack('i', 1));
      fcntl($c, 4, 0x800);
      push @wait, $c;
    }
  }
  # Each waits its turn for the proxy: a full backlog there (EAGAIN) leaves it queued, in order.
  while (@wait) {
    socket(my $u, 1, 1, 0) or last;
    fcntl($u, 4, 0x800);
    unless (connect($u, pack('S a108', 1, $path))) { close $u; last if $! == 11; close(shift @wait); next }
    my $c = shift @wait;
    my ($cf, $uf) = (fileno($c), fileno($u));
    @h{$cf, $uf} = ($c, $u); @peer{$cf, $uf} = ($uf, $cf); @out{$cf, $uf} = ('', ''); $client{$cf} = 1; $got{$cf} = 0;
    $seq{$cf} = ++$serial;
    push @order, [$cf, $serial];
    @order = grep { $h{$_->[0]} && $seq{$_->[0]} == $_->[1] } @order if @order > 4 * $max;
  }
}
`;

export interface RelayInput {
  perl: string;
  /** setns(2)'s and setsid(2)'s syscall numbers on this machine. */
  setns: number;
  setsid: number;
  /** bwrap made a user namespace (unprivileged run): join it too, keeping our uid. */
  userns: boolean;
  socket: string;
  /** Connections relayed at once (the proxy's limit). */
  maxConnections: number;
}

/**
 * The sandbox command with the relay forked beside it: `ctlFd` is the relay's
 * socket pair with stashbase, and `sandboxFds` the descriptors that are the
 * sandbox's alone (the relay closes them; the sandbox closes ctlFd).
 */
export function withRelay(sandbox: Command, r: RelayInput, ctlFd: number, sandboxFds: number[]): Command {
  const nums = [BRIDGE_PORT, r.socket, r.setns, r.userns ? 1 : 0, r.setsid, ctlFd, r.maxConnections, sandboxFds.join(',')].map(String);
  // The launcher ignores SIGINT itself before it execs: `env --ignore-signal=INT` in front of bwrap is one exec too many.
  const argv = sandbox.args[0] === '--ignore-signal=INT' ? sandbox.args.slice(1) : [sandbox.file, ...sandbox.args];
  return {
    ...sandbox,
    file: r.perl,
    args: ['-e', RELAY_SCRIPT, ...nums, '--', ...argv],
    pipes: [...(sandbox.pipes ?? []), { fd: ctlFd, direction: 'both' }],
  };
}
