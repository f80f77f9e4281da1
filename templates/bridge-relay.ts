// The only way out of the sandbox's network namespace: a listening socket on
// that namespace's loopback, held by stashbase's proxy on the host side. A
// socket belongs to the namespace it was made in, whoever holds it: the proxy
// accepts the agent's connections on it directly, with no process between them.
//
// A small perl process makes it: started in the same spawn as bwrap (perl
// forks; the parent becomes the sandbox: it execs bwrap, so bwrap stays
// stashbase's child, with its descriptors; the child makes the socket), in a
// session of its own (the terminal's Ctrl+C is the agent's). It talks to
// stashbase on Node's IPC channel, which the sandbox never holds (closed, and
// its variables removed, before bwrap): it says its pid, waits for the pid of
// bwrap's sandbox, joins that pid's user namespace (an unprivileged run's) and
// network namespace with setns(2), keeping its own credentials, binds and
// listens on 127.0.0.1, hands the listening socket over (sendmsg(2) with
// SCM_RIGHTS, as Node's own IPC does), and exits once stashbase has it: before
// the agent is released, so nothing of it is left for the agent to reach.
// Perl, because it starts in milliseconds and is part of every Debian/Ubuntu
// base system (perl-base); a node process would double the cost of a run.
import type { Command } from './command.js';

/** The proxy's port on the loopback of the sandbox's own network namespace. */
export const BRIDGE_PORT = 18080;

/** setns(2)'s, setsid(2)'s, sendmsg(2)'s and prctl(2)'s numbers on the architectures the native sandbox supports (those of templates/seccomp.ts). */
export const SETNS_SYSCALL = { x64: 308, arm64: 268 } as const;
export const SETSID_SYSCALL = { x64: 112, arm64: 157 } as const;
export const SENDMSG_SYSCALL = { x64: 46, arm64: 211 } as const;
export const PRCTL_SYSCALL = { x64: 157, arm64: 167 } as const;
export type RelayArch = keyof typeof SETNS_SYSCALL;

// Built-ins only, no modules (not even the strict and warnings pragmas): loading
// even Socket.pm costs 20 ms. The numbers are Linux's (AF_INET 2, SOCK_STREAM
// 1, SOL_SOCKET 1, SO_REUSEADDR 2, SCM_RIGHTS 1, EADDRNOTAVAIL 99,
// CLONE_NEWUSER 0x10000000, CLONE_NEWNET 0x40000000) and struct msghdr's and
// cmsghdr's layout on a 64-bit ABI; on an ABI where they differ, setns, listen
// or sendmsg fails and the run fails closed. Loopback may not be up yet when it
// joins (bwrap configures it in the sandbox's first process): binding
// 127.0.0.1 is retried while the address is missing, for at most 5 s. Every
// line it writes is JSON (Node's IPC framing): a reason is reduced to safe
// characters first.
export const RELAY_SCRIPT = String.raw`
# stashbase relay
my ($port, $setns, $userns, $setsid, $sendmsg, $prctl, $ctlfd, $close) = splice(@ARGV, 0, 8);
shift @ARGV;
my $kid = fork;
defined $kid or die "stashbase: fork: $!\n";
if ($kid) {
  # bwrap dies with stashbase (PR_SET_PDEATHSIG, kept across exec): an end of file on its block
  # descriptor would otherwise release the agent with nothing around it; its --die-with-parent
  # then takes the sandbox down too.
  syscall($prctl + 0, 1, 9) == 0 or do { print STDERR "stashbase: prctl: $!\n"; exit 127 };
  open(my $c, '<&=', $ctlfd) and close $c;
  delete @ENV{'NODE_CHANNEL_FD', 'NODE_CHANNEL_SERIALIZATION_MODE'};
  $SIG{INT} = 'IGNORE';
  exec { $ARGV[0] } @ARGV or do { print STDERR "stashbase: cannot run $ARGV[0]: $!\n"; exit 127 };
}
syscall($setsid + 0);
$SIG{PIPE} = 'IGNORE';
for my $fd (split /,/, $close) { open(my $h, '<&=', $fd) and close $h }
open(my $ctl, '+<&=', $ctlfd) or exit 1;
select((select($ctl), $| = 1)[0]);
open(STDIN, '<', '/dev/null'); open(STDOUT, '>', '/dev/null'); open(STDERR, '>', '/dev/null');
sub fail { (my $why = $_[0]) =~ s/[^A-Za-z0-9 .,:\/_-]/?/g; print $ctl qq({"relay":"error","why":"$why"}\n); exit 1 }
print $ctl qq({"relay":"pid","pid":$$}\n);
my $pid = <$ctl>;
defined $pid && $pid =~ /^\{"pid":([0-9]+)\}\n\z/ or fail("no sandbox pid");
$pid = $1;
for my $ns ($userns ? (['user', 0x10000000]) : (), ['net', 0x40000000]) {
  open(my $fh, '<', "/proc/$pid/ns/$ns->[0]") or fail("/proc/$pid/ns/$ns->[0]: $!");
  syscall($setns + 0, fileno($fh), $ns->[1]) == 0 or fail("setns $ns->[0]: $!");
  close $fh;
}
print $ctl qq({"relay":"joined"}\n);
socket(my $l, 2, 1, 0) or fail("socket: $!");
setsockopt($l, 1, 2, pack('i', 1));
my $tries = 0;
until (bind($l, pack('S n C4 x8', 2, $port, 127, 0, 0, 1))) {
  fail("cannot listen on 127.0.0.1:$port: $!") unless $! == 99 && $tries++ < 5000;
  select(undef, undef, undef, 0.001);
}
listen($l, 4096) or fail("listen: $!");
my $msg = qq({"cmd":"NODE_HANDLE","type":"net.Native","msg":{"relay":"listening"}}\n);
my $iov = pack('P Q', $msg, length $msg);
my $cmsg = pack('Q i i i x4', 20, 1, 1, fileno($l));
my $sent = syscall($sendmsg + 0, $ctlfd + 0, pack('Q L x4 P Q P Q i x4', 0, 0, $iov, 1, $cmsg, 24, 0), 0);
$sent == length $msg or fail($sent < 0 ? "sendmsg: $!" : "sendmsg sent $sent of " . length($msg) . " bytes");
# Until stashbase has it (its acknowledgement, or the channel closed).
while (my $line = <$ctl>) { last if $line =~ /NODE_HANDLE/ }
exit 0;
`;

export interface RelayInput {
  perl: string;
  /** setns(2)'s, setsid(2)'s and sendmsg(2)'s syscall numbers on this machine. */
  setns: number;
  setsid: number;
  sendmsg: number;
  prctl: number;
  /** bwrap made a user namespace (unprivileged run): join it too, keeping our uid. */
  userns: boolean;
}

/**
 * The sandbox command with the relay forked beside it: `ctlFd` is the relay's
 * IPC channel with stashbase, and `sandboxFds` the descriptors that are the
 * sandbox's alone (the relay closes them; the sandbox closes ctlFd).
 */
export function withRelay(sandbox: Command, r: RelayInput, ctlFd: number, sandboxFds: number[]): Command {
  const nums = [BRIDGE_PORT, r.setns, r.userns ? 1 : 0, r.setsid, r.sendmsg, r.prctl, ctlFd, sandboxFds.join(',')].map(String);
  // The launcher ignores SIGINT itself before it execs: `env --ignore-signal=INT` in front of bwrap is one exec too many.
  const argv = sandbox.args[0] === '--ignore-signal=INT' ? sandbox.args.slice(1) : [sandbox.file, ...sandbox.args];
  return {
    ...sandbox,
    file: r.perl,
    args: ['-e', RELAY_SCRIPT, ...nums, '--', ...argv],
    pipes: [...(sandbox.pipes ?? []), { fd: ctlFd, direction: 'both' }],
  };
}
