// The last step inside the sandbox before the agent: a Landlock ruleset that
// lets files be read only beneath what existed when the run started, minus
// the denied files. A denied file is also a bind mount, but the kernel drops
// a bind over a file the moment the host renames another file over it (zsh
// saving its history, a tool rotating its token file): the new file would
// then be readable. Landlock follows no mount: the new inode sits directly in
// a folder that is only partly granted, and stays unreadable.
//
// Perl with built-ins only, like the relay: each ancestor of a denied file is
// read, and every entry in it but the denied file and the next ancestor gets
// READ_FILE (opened O_PATH|O_NOFOLLOW: a symlink's target is not granted
// through it). Only files outside the folders the agent can write are listed
// (prepare.ts): a partly granted working directory would hide the agent's
// own new files from it. Denied folders and denied paths that do not exist
// yet are listed too: your side may replace or create them during the run,
// and nothing is mounted at a missing one. A sibling named after a denied
// name is not granted either: Landlock grants an inode, and a writer's temp
// file (.pgpass.new) present at the start would carry its grant onto the
// denied name when your side renames it there. With no denied file, / is granted
// whole: the ruleset is still there, and Landlock forbids a restricted process to change the
// mount topology (mount, umount, pivot_root), which closes the whole class of
// detaching a bind from inside. Where the kernel has no Landlock the run goes
// on with the mounts alone and says so.
//
// Below the agents' live state folders (Claude Code's projects, Codex's
// sessions…), which your own agents read and append to outside any run, the
// ruleset also refuses links, FIFOs, sockets and devices: made there, moved
// there or hard-linked there. A transcript made a link to ~/.bashrc would have
// your next `claude --continue` append to ~/.bashrc, and a FIFO would hang it.
// Landlock grants only: these rights go to every folder on the way from /
// to each live folder but that way itself, so a folder made later directly in
// one on the way (a view's new subfolder) gets none either.
//
// It then restores SIGINT (see bwrap.ts) and runs the agent.
/** Syscall numbers and open flags by architecture (those of templates/seccomp.ts). */
import { ENV_LINE, envArgs, GATE_LINE, PGRP_LINE } from './gate.js';

export const LANDLOCK_ABI = {
  x64: { create: 444, add: 445, restrict: 446, prctl: 157, openat: 257, close: 3, oPath: 0x200000, oNofollow: 0x20000, oCloexec: 0x80000 },
  arm64: { create: 444, add: 445, restrict: 446, prctl: 167, openat: 56, close: 57, oPath: 0x200000, oNofollow: 0x8000, oCloexec: 0x80000 },
} as const;
export type LandlockArch = keyof typeof LANDLOCK_ABI;

// No pragmas: loading strict.pm and warnings.pm costs more than the rest of the script.
export const LANDLOCK_SCRIPT = String.raw`
${GATE_LINE}
${PGRP_LINE}
${ENV_LINE}
my ($create, $add, $restrict, $prctl, $openat, $close, $flags, $say) = splice(@ARGV, 0, 8);
my (@denied, @plain);
push @denied, shift @ARGV while @ARGV && $ARGV[0] ne '--';
shift @ARGV;
push @plain, shift @ARGV while @ARGV && $ARGV[0] ne '--';
shift @ARGV;
$SIG{INT} = 'DEFAULT';
my $READ_FILE = 4;
# MAKE_CHAR, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM: no link or special
# file may be made below a plain folder (or moved or hard-linked into one).
my $SPECIAL = (1 << 6) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12);
# ABI 1 refuses every rename or link across folders once any access is
# handled (EXDEV: mv a/f b/ fails); ABI 2's REFER, handled and granted on /,
# allows them where the file gains no access it did not have (a denied file
# still cannot be moved where it would be readable).
my $REFER = 1 << 13;
my $abi = syscall($create + 0, 0, 0, 1);
my $handled = $READ_FILE | ($abi >= 2 ? $REFER : 0) | (@plain ? $SPECIAL : 0);
# syscall() passes strings by address, and wants them writable.
my $attr = pack('Q', $handled);
my $rs = syscall($create + 0, $attr, 8, 0);
sub grant {
  my ($path, $access) = @_;
  my $fd = syscall($openat + 0, -100, $path, $flags + 0, 0);
  return if $fd < 0;
  my $rule = pack('Q l', $access || $READ_FILE, $fd);
  syscall($add + 0, $rs, 1, $rule, 0);
  syscall($close + 0, $fd);
}
# Named after a denied name: the same after leading dots and hashes, then
# nothing or a non-letter (.pgpass.new, ..netrc8f3a, #.pgpass#; not ghostty for gh).
sub near {
  my ($e, $b) = @_;
  (my $x = $e) =~ s/\A[.#]+//;
  (my $y = $b) =~ s/\A[.#]+//;
  return 0 if $y eq '' || substr($x, 0, length $y) ne $y;
  return substr($x, length $y) !~ /\A[A-Za-z]/;
}
if ($rs < 0) {
  my $why = "$!";
  print STDERR "stashbase: warning: this kernel has no Landlock ($why): a denied file that your side replaces by a rename during the run becomes readable\n" if $say;
  print STDERR "stashbase: warning: this kernel has no Landlock ($why): the agent can make links and FIFOs in the agents' session folders (@plain)\n" if $say && @plain;
} else {
  my (%deny, %anc, %near);
  for my $p (@denied) {
    $deny{$p} = 1;
    push @{$near{$1 eq '' ? '/' : $1}}, $2 if $p =~ m{\A(.*)/([^/]+)\z};
    for (my $a = $p; $a =~ s{/[^/]*\z}{}; ) { $anc{$a eq '' ? '/' : $a} = 1; last if $a eq ''; }
  }
  # No denied file: everything readable; the ruleset still forbids changing the mount topology.
  grant('/') unless @denied;
  grant('/', $REFER) if $abi >= 2;
  for my $dir (sort keys %anc) {
    opendir(my $dh, $dir) or next;
    for my $e (readdir $dh) {
      next if $e eq '.' || $e eq '..';
      my $child = $dir eq '/' ? "/$e" : "$dir/$e";
      next if $anc{$child} || $deny{$child};
      # A sibling named after a denied file (.pgpass.new, .pgpass.lock,
      # ..pgpass123, #.pgpass#) is how writers replace it: granted here, it
      # would be readable once renamed over the denied name during the run.
      next if grep { near($e, $_) } @{$near{$dir} || []};
      grant($child);
    }
    closedir $dh;
  }
  # Everywhere but below the plain folders: every other folder on each one's way
  # from /, whole. What is made later directly in a folder on that way gets nothing.
  # From where each really is (a ~/.claude linked into a folder of dotfiles): Landlock walks up from there.
  if (@plain) { require Cwd; @plain = map { Cwd::abs_path($_) // $_ } @plain; }
  my (%plain, %panc);
  for my $p (@plain) {
    $plain{$p} = 1;
    for (my $a = $p; $a =~ s{/[^/]*\z}{}; ) { $panc{$a eq '' ? '/' : $a} = 1; last if $a eq ''; }
  }
  for my $dir (sort keys %panc) {
    opendir(my $dh, $dir) or next;
    for my $e (readdir $dh) {
      next if $e eq '.' || $e eq '..';
      my $child = $dir eq '/' ? "/$e" : "$dir/$e";
      next if $panc{$child} || $plain{$child} || -l $child || !-d _;
      grant($child, $SPECIAL);
    }
    closedir $dh;
  }
  syscall($prctl + 0, 38, 1, 0, 0, 0) == 0 or die "stashbase: prctl(PR_SET_NO_NEW_PRIVS): $!\n";
  syscall($restrict + 0, $rs, 0) == 0 or die "stashbase: landlock_restrict_self: $!\n";
}
exec { $ARGV[0] } @ARGV or do {
  print STDERR "stashbase: cannot run $ARGV[0]: $!\n";
  exit($! == 2 ? 127 : 126);
};
`;

export interface LandlockInput {
  perl: string;
  arch: LandlockArch;
  /** Denied paths (files, folders, missing ones) outside every writable folder, as the sandbox sees them. */
  files: string[];
  /**
   * Folders the agent writes and your own tools read outside any run (the
   * agents' live state folders, lib/views): nothing but folders and regular
   * files can be made below them.
   */
  plain: string[];
  /** Say so on stderr when the kernel has no Landlock (not with --silent). */
  warn: boolean;
}

/** The argv that runs `command` under the ruleset (what bwrap execs). */
/** `foreground`: the agent's process group takes the terminal (templates/gate.ts PGRP_LINE). */
export function landlockArgv(input: LandlockInput, command: string[], env: Record<string, string>, foreground = false): string[] {
  const a = LANDLOCK_ABI[input.arch];
  const nums = [a.create, a.add, a.restrict, a.prctl, a.openat, a.close, a.oPath | a.oNofollow | a.oCloexec, input.warn ? 1 : 0].map(String);
  return [input.perl, '-e', LANDLOCK_SCRIPT, ...envArgs(env, foreground), ...nums, ...input.files, '--', ...input.plain, '--', ...command];
}

