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
  if (defined $term) { my $t = $tios; ioctl($s, 0x5402, $t); my $w = $ws; ioctl($s, 0x5414, $w) }
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
$SIG{INT} = 'IGNORE';
for my $sig ('TERM', 'HUP', 'QUIT') { $SIG{$sig} = sub { kill $sig, $kid } }
my $in = $tty{0};
my $out = $tty{1} ? 1 : $tty{2} ? 2 : undef;
my $fg = 0;
if ($in) {
  my $pg = pack('i', 0);
  $fg = ioctl($real, 0x540F, $pg) && unpack('i', $pg) == getpgrp(0);
}
if ($in && $fg) {
  my ($if, $of, $cf, $lf, $line, @cc) = unpack('L4 C C19', $tios);
  $if &= ~(0x1 | 0x2 | 0x8 | 0x20 | 0x40 | 0x80 | 0x100 | 0x400);
  $of &= ~0x1;
  $lf &= ~(0x8 | 0x40 | 0x2 | 0x1 | 0x8000);
  $cf = ($cf & ~(0x30 | 0x100)) | 0x30;
  $cc[6] = 1; $cc[5] = 0;
  my $raw = pack('L4 C C19', $if, $of, $cf, $lf, $line, @cc) . substr($tios, 36);
  ioctl($real, 0x5402, $raw);
}
$SIG{WINCH} = sub { my $w = "\0" x 8; ioctl($real, 0x5413, $w) and ioctl($m, 0x5414, $w) } if defined $term;
sub put { my ($fd, $buf) = @_; my $off = 0; while ($off < length $buf) { my $w = syswrite($fd == 1 ? *STDOUT : *STDERR, $buf, length($buf) - $off, $off); if (!defined $w) { next if $! == 4; return } $off += $w } }
my ($status, $ended);
my $reading_in = $in && $fg;
while (1) {
  my $rin = '';
  vec($rin, $mfd, 1) = 1;
  vec($rin, 0, 1) = 1 if $reading_in;
  my $nfound = select(my $rout = $rin, undef, undef, $ended ? 0.05 : 0.25);
  if ($nfound > 0 && vec($rout, $mfd, 1)) {
    my $got = sysread($m, my $buf, 65536);
    if ($got) { put($out, $buf) if defined $out; next }
    last if defined $got || $! != 4;
  }
  if ($nfound > 0 && $reading_in && vec($rout, 0, 1)) {
    my $got = sysread(STDIN, my $buf, 4096);
    if ($got) { my $off = 0; while ($off < $got) { my $w = syswrite($m, $buf, $got - $off, $off); last unless defined $w; $off += $w } }
    elsif (defined $got) { $reading_in = 0 }
  }
  if (!$ended) { my $r = waitpid($kid, 1); if ($r == $kid) { $status = $?; $ended = 1 } }
  elsif ($nfound == 0) { last }
}
$status = (waitpid($kid, 0) == $kid ? $? : 127 << 8) unless $ended;
if ($in && $fg) { my $t = $tios; ioctl($real, 0x5402, $t) }
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
