set -eu
fail() { echo "stashbase-firewall-failed: $*"; exit 1; }
reach() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
proxy=172.18.0.1
reach "$proxy" 40002 || fail "the canary $proxy:40002 is unreachable even before the firewall: the check could prove nothing"
echo "nameserver 0.0.0.0" > /etc/resolv.conf
iptables-restore <<EOF
*filter
:INPUT DROP [0:0]
:FORWARD DROP [0:0]
:OUTPUT DROP [0:0]
-A OUTPUT -d 127.0.0.11/32 -j DROP
-A OUTPUT -o lo -j ACCEPT
-A OUTPUT -d $proxy/32 -p tcp --dport 40001 -j ACCEPT
-A OUTPUT -p tcp -j REJECT --reject-with tcp-reset
-A OUTPUT -j REJECT
-A INPUT -i lo -j ACCEPT
-A INPUT -s $proxy/32 -p tcp --sport 40001 -j ACCEPT
COMMIT
EOF
ip6tables-restore <<EOF
*filter
:INPUT DROP [0:0]
:FORWARD DROP [0:0]
:OUTPUT DROP [0:0]
-A OUTPUT -o lo -j ACCEPT
-A OUTPUT -p tcp -j REJECT --reject-with tcp-reset
-A OUTPUT -j REJECT
-A INPUT -i lo -j ACCEPT
COMMIT
EOF
reach "$proxy" 40001 || fail "the proxy $proxy:40001 is unreachable through the firewall"
if reach "$proxy" 40002; then fail "the canary $proxy:40002 is still reachable: the firewall did not take effect"; fi
command -v setpriv >/dev/null || fail "setpriv (util-linux) is missing from the image: the holder cannot drop NET_ADMIN"
exec setpriv --bounding-set -all --inh-caps -all --ambient-caps -all -- sh -c 'echo stashbase-firewall-ready; exec sleep infinity'
