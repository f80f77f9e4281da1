// What a local MCP server's sandbox (lib/mcp/local-server.ts) runs first when
// the server has `hosts`: perl (the base system's) forks; the child execs the
// server; the parent listens on the sandbox's own loopback (the sandbox has no
// other network) and carries each connection to the run's proxy for this
// server, a Unix socket bound in at /run/stashbase-mcp-proxy.sock. The server
// reaches the network only as HTTPS_PROXY=http://…@127.0.0.1:PORT, and the
// proxy lets it reach its `hosts` alone. The parent ends when the server does.

export const SERVER_PROXY_SOCKET = '/run/stashbase-mcp-proxy.sock';

export const MCP_RELAY_SCRIPT = String.raw`
use strict; use IO::Socket::INET; use IO::Socket::UNIX; use IO::Select; use POSIX ":sys_wait_h";
my ($port, $sock) = splice(@ARGV, 0, 2);
shift @ARGV;
my $l = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $port, Listen => 64, ReuseAddr => 1) or die "stashbase relay: listen: $!\n";
my $kid = fork;
defined $kid or die "stashbase relay: fork: $!\n";
if ($kid == 0) { close $l; exec { $ARGV[0] } @ARGV or die "stashbase: exec $ARGV[0]: $!\n"; }
$SIG{CHLD} = sub { while ((my $p = waitpid(-1, WNOHANG)) > 0) { exit(($? >> 8) || 0) if $p == $kid; } };
while (1) {
  my $c = $l->accept or next;
  my $h = fork;
  if (defined $h && $h == 0) {
    close $l;
    my $u = IO::Socket::UNIX->new(Peer => $sock) or exit 1;
    my $s = IO::Select->new($c, $u);
    my $buf;
    LOOP: while (my @r = $s->can_read) {
      for my $fh (@r) {
        my $n = sysread($fh, $buf, 65536);
        last LOOP if !$n;
        my $to = $fh == $c ? $u : $c;
        my $off = 0;
        while ($off < $n) { my $w = syswrite($to, $buf, $n - $off, $off); last LOOP if !defined $w; $off += $w; }
      }
    }
    exit 0;
  }
  close $c;
}
`;
