// The native sandbox's gate: the first thing that runs inside, before the
// agent. bwrap takes an end of file on its block descriptor as "go", so a
// stashbase killed while bwrap waits (before the proxy listens) would release
// the agent with nothing around it: no proxy, no end-of-run checks. The gate
// asks for a positive word instead: one byte, "1", on its own descriptor,
// which stashbase writes when it releases the run; anything else (an end of
// file, because stashbase is gone) and it exits 125 with nothing run. It
// closes the descriptor before the agent starts.

/** The gate's descriptor in the sandbox (after bwrap's and the relay's own). */
export const GATE_FD = 8;

/** The gate, as the first line of a perl script run inside the sandbox. */
export const GATE_LINE = `my ($gate, $go); open($gate, '+<&=', ${GATE_FD}) && syswrite($gate, 'r', 1) == 1 && sysread($gate, $go, 1) == 1 && $go eq '1' or exit 125; close $gate;`;

/** The gate alone, then the agent (with Ctrl+C back to its default, as env --default-signal=INT would). */
export const GATE_SCRIPT = `
${GATE_LINE}
$SIG{INT} = 'DEFAULT';
exec { $ARGV[0] } @ARGV or do { print STDERR "stashbase: cannot run $ARGV[0]: $!\\n"; exit($! == 2 ? 127 : 126) };
`;
