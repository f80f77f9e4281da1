// A terminal of the run's own for the native sandbox (review, round 36). The
// agent used to share your terminal: it could set `tostop` on it, suspend its
// output (TCXONC), make it exclusive (TIOCEXCL), take its foreground, and so
// stop or block stashbase, or the other programs of your pipeline
// (`stashbase agent run … | tee log`), before stashbase's end-of-run checks.
// Now, where stashbase has a controlling terminal, the sandbox runs in a
// session of its own on a pseudo-terminal: its settings, foreground group and
// flow control are the agent's, and touch nothing of yours. As sudo's
// use_pty and script(1) do, and as macOS runs already have through script.
//
// A small perl process (built-ins only: no module is loaded) does it, the
// command stashbase spawns: it opens a pseudo-terminal with your terminal's
// settings and size, forks, and the child makes a session of its own whose
// controlling terminal is the pseudo-terminal, puts it in place of each of
// its standard descriptors that is your terminal (a pipe stays a pipe), and
// execs the sandbox's command (descriptors 3 and up passed as they are). The
// parent closes everything else, relays between your terminal (raw, while the
// run lasts, where stashbase has its foreground) and the pseudo-terminal's
// master, passes a change of your window's size on, dies with stashbase
// (PR_SET_PDEATHSIG), and when the sandbox has ended and its output is
// written, sets your terminal's settings back and exits as the sandbox did
// (its status, or its signal).
import type { Command } from './command.js';

/** The script; its ioctls and flags as Linux numbers them (asm-generic: x86_64 and arm64 alike). */
export const PTY_SCRIPT = String.raw`
# stashbase pty
my ($setsid, $prctl) = splice(@ARGV, 0, 2);
shift @ARGV;
syscall($prctl + 0, 1, 9) == 0 or do { print STDERR "stashbase: prctl: $!\n"; exit 127 };
my %tty;
for my $fd (0, 1, 2) { open(my $h, '+<&=', $fd) or next; $tty{$fd} = 1 if -t $h }
my ($term) = grep { $tty{$_} } (0, 1, 2);
my $real;
if (defined $term) { open($real, '+<&=', $term) or undef $term }
my $tios = "\0" x 64;
my $ws = "\0" x 8;
if (defined $term) { ioctl($real, 0x5401, $tios) or undef $term; ioctl($real, 0x5413, $ws) }
open(my $m, '+<', '/dev/ptmx') or do { print STDERR "stashbase: /dev/ptmx: $!\n"; exit 127 };
my $zero = pack('i', 0);
ioctl($m, 0x40045431, $zero) or do { print STDERR "stashbase: unlockpt: $!\n"; exit 127 };
my $n = pack('i', 0);
ioctl($m, 0x80045430, $n) or do { print STDERR "stashbase: ptsname: $!\n"; exit 127 };
my $slave = '/dev/pts/' . unpack('i', $n);
my $kid = fork;
defined $kid or do { print STDERR "stashbase: fork: $!\n"; exit 127 };
if ($kid == 0) {
  syscall($setsid + 0) >= 0 or exit 127;
  open(my $s, '+<', $slave) or exit 127;
  ioctl($s, 0x540E, $zero);
  # Your settings, but ^Z suspends nothing there (VSUSP off): no shell of the agent's would resume it, and the run hung.
  if (defined $term) { my ($if, $of, $cf, $lf, $line, @cc) = unpack('L4 C C19', $tios); $cc[10] = 0; my $t = pack('L4 C C19', $if, $of, $cf, $lf, $line, @cc) . substr($tios, 36); ioctl($s, 0x5402, $t); my $w = $ws; ioctl($s, 0x5414, $w) }
  close $m;
  open(STDIN, '<&', $s) if $tty{0};
  open(STDOUT, '>&', $s) if $tty{1};
  open(STDERR, '>&', $s) if $tty{2};
  close $s;
  exec { $ARGV[0] } @ARGV or exit 127;
}
my $mfd = fileno($m);
opendir(my $d, '/proc/self/fd');
my @open = grep { /^\d+$/ && $_ > 2 && $_ != $mfd } readdir($d);
closedir($d);
for my $fd (@open) { open(my $h, '<&=', $fd) and close $h }
$SIG{PIPE} = 'IGNORE';
# The terminal's signals, where it was not made raw (its input is not a terminal, or the run was in the background), go
# to the agent's terminal's foreground group as its own keys would (TIOCSIG); the rest to the sandbox.
$SIG{INT} = sub { ioctl($m, 0x40045436, 2) };
$SIG{QUIT} = sub { ioctl($m, 0x40045436, 3) };
for my $sig ('TERM', 'HUP') { $SIG{$sig} = sub { kill $sig, $kid } }
my $in = $tty{0};
my $out = $tty{1} ? 1 : $tty{2} ? 2 : undef;
my ($raw, $recheck) = (0, 1);
$SIG{CONT} = sub { $recheck = 1 };
sub foreground { my $pg = pack('i', 0); return ioctl($real, 0x540F, $pg) && unpack('i', $pg) == getpgrp(0) }
sub go_raw {
  my ($if, $of, $cf, $lf, $line, @cc) = unpack('L4 C C19', $tios);
  $if &= ~(0x1 | 0x2 | 0x8 | 0x20 | 0x40 | 0x80 | 0x100 | 0x400);
  $of &= ~0x1;
  $lf &= ~(0x8 | 0x40 | 0x2 | 0x1 | 0x8000);
  $cf = ($cf & ~(0x30 | 0x100)) | 0x30;
  $cc[6] = 1; $cc[5] = 0;
  my $r = pack('L4 C C19', $if, $of, $cf, $lf, $line, @cc) . substr($tios, 36);
  ioctl($real, 0x5402, $r);
}
$SIG{WINCH} = sub { my $w = "\0" x 8; ioctl($real, 0x5413, $w) and ioctl($m, 0x5414, $w) } if defined $term;
# Whole writes: an interrupted or would-block write is tried again.
sub put {
  my ($fh, $buf) = @_;
  my $off = 0;
  while ($off < length $buf) {
    my $w = syswrite($fh, $buf, length($buf) - $off, $off);
    if (!defined $w) { return unless $! == 4 || $! == 11; select(undef, undef, undef, 0.01); next }
    $off += $w;
  }
}
my $outfh = defined $out ? ($out == 1 ? *STDOUT : *STDERR) : undef;
my ($status, $ended);
while (1) {
  if ($recheck) {
    $recheck = 0;
    if ($in && !$raw && foreground()) { go_raw(); $raw = 1 }
  }
  my $rin = '';
  vec($rin, $mfd, 1) = 1;
  vec($rin, 0, 1) = 1 if $raw;
  my $nfound = select(my $rout = $rin, undef, undef, $ended ? 0.05 : 0.25);
  next if $nfound < 0;
  # Your keys first, then one read of the agent's output: output that never stops does not keep ^C from it.
  if ($nfound > 0 && $raw && vec($rout, 0, 1)) {
    my $got = sysread(STDIN, my $buf, 4096);
    if ($got) { put($m, $buf) } elsif (defined $got) { $raw = 0 }
  }
  if ($nfound > 0 && vec($rout, $mfd, 1)) {
    my $got = sysread($m, my $buf, 65536);
    if ($got) { put($outfh, $buf) if defined $outfh }
    elsif (defined $got || ($! != 4 && $! != 11)) { last }
  }
  if (!$ended) { my $r = waitpid($kid, 1); if ($r == $kid) { $status = $?; $ended = 1 } }
  elsif ($nfound == 0) { last }
}
$status = (waitpid($kid, 0) == $kid ? $? : 127 << 8) unless $ended;
# Your settings back, and what was typed (or answered by your terminal to the agent's queries) since, dropped: it was
# the agent's input, never your shell's (TCSETSF).
if ($raw) { my $t = $tios; ioctl($real, 0x5404, $t) }
if ($status & 127) { $SIG{$_} = 'DEFAULT' for keys %SIG; kill($status & 127, $$); }
exit($status >> 8);
`;

export interface PtyInput {
  perl: string;
  /** setsid(2)'s and prctl(2)'s syscall numbers on this machine (templates/bridge-relay.ts). */
  setsid: number;
  prctl: number;
}

/** The sandbox command on a pseudo-terminal of its own, relayed to yours by the process stashbase spawns. */
export function withPty(sandbox: Command, p: PtyInput): Command {
  return { ...sandbox, file: p.perl, args: ['-e', PTY_SCRIPT, String(p.setsid), String(p.prctl), '--', sandbox.file, ...sandbox.args] };
}
