// The native sandbox's gate: the first thing that runs inside, before the
// agent. bwrap takes an end of file on its block descriptor as "go", so a
// stashbase killed while bwrap waits (before the proxy listens) would release
// the agent with nothing around it: no proxy, no end-of-run checks. The gate
// asks for a positive word instead: one byte, "1", on its own descriptor,
// which stashbase writes when it releases the run; anything else (an end of
// file, because stashbase is gone) and it exits 125 with nothing run. It
// first says it is there (one byte, "r", on the same socket): bwrap makes its
// mounts while stashbase readies the proxy, and a failure there shows only as
// bwrap's exit, so that byte alone tells stashbase the sandbox was made; a
// bwrap that exits before it failed its own setup, and the run is tried again
// (lib/native/run.ts). It closes the descriptor before the agent starts.
//
// The gate (and the Landlock step after it, templates/landlock.ts) runs with
// an environment of stashbase's own, empty: the agent's (PERL5LIB, PERL5OPT,
// LD_PRELOAD, anything of the profile's or left in the working directory that
// it names) would have perl load the agent's code before the gate's first
// line, with the gate's socket to stashbase open and outside Landlock (found
// in review). The agent's environment comes as arguments, and is set just
// before the agent starts. Nothing in either script loads a module (no
// %!: Errno.pm would be read before the gate's first line).

/** The gate's descriptor in the sandbox (after bwrap's and the relay's own). */
export const GATE_FD = 8;

/** The ioctl that makes a process group its terminal's foreground one (tcsetpgrp), as perl reads it. */
const TIOCSPGRP = '0x5410';

/** The gate, as the first line of a perl script run inside the sandbox. */
export const GATE_LINE = `my ($gate, $go); open($gate, '+<&=', ${GATE_FD}) && syswrite($gate, 'r', 1) == 1 && sysread($gate, $go, 1) == 1 && $go eq '1' or exit 125; close $gate;`;

/**
 * The agent in a process group of its own (review, round 35: sharing stashbase's, `kill(0, SIGKILL)` reached stashbase
 * across the pid namespace, before its end-of-run checks; a planted repository's fsmonitor then ran at your next git
 * status). On a terminal of the run's own (templates/pty-relay.ts) the agent's group takes it (SIGTTOU ignored for
 * that one ioctl, TIOCSPGRP, as a shell gives a job the terminal), so that Ctrl+C reaches the agent. The first
 * argument says whether there is one to take. No module is loaded (builtins only).
 */
export const PGRP_LINE = `my $fg = shift @ARGV; setpgrp(0, 0) or exit 125; if ($fg eq '1') { local $SIG{TTOU} = 'IGNORE'; if (open(my $t, '+<', '/dev/tty')) { ioctl($t, ${TIOCSPGRP}, pack('i', getpgrp(0))); close $t } }`;

/** The agent's environment, from the arguments `envArgs` made (after the gate: nothing of the agent's runs before it). */
export const ENV_LINE = `my $n = shift @ARGV; %ENV = (); while ($n-- > 0) { my ($k, $v) = splice(@ARGV, 0, 2); $ENV{$k} = $v }`;

/** The arguments that carry whether the agent takes the terminal (PGRP_LINE) and its environment (ENV_LINE), first after the script. */
export function envArgs(env: Record<string, string>, foreground = false): string[] {
  const pairs = Object.entries(env);
  return ['--', foreground ? '1' : '0', String(pairs.length), ...pairs.flat()];
}

/** The gate alone, then the agent (with Ctrl+C back to its default, as env --default-signal=INT would). */
export const GATE_SCRIPT = `
${GATE_LINE}
${PGRP_LINE}
${ENV_LINE}
$SIG{INT} = 'DEFAULT';
exec { $ARGV[0] } @ARGV or do { print STDERR "stashbase: cannot run $ARGV[0]: $!\\n"; exit($! == 2 ? 127 : 126) };
`;
