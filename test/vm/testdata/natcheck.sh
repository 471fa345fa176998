#!/bin/sh
# natcheck.sh FILE: --filter's lines (time CPU skb function dev= netns=
# mark= pkt=...) of packet-dnat.case, read back for the DNAT's relation:
# an skb seen going to 10.201.32.100.80 and then, DNATed, the same skb
# going to 10.201.32.2.5003 in another network namespace; and no line of
# the connection to port 5004, which the filter does not match.
awk '
/ > 10\.201\.32\.100\.80: / && !($3 in pre) { pre[$3] = 1; ns[$3] = $6 }
/ > 10\.201\.32\.2\.5003: / && ($3 in pre) && $6 != ns[$3] { post[$3] = post[$3] " " $4 }
/\.5004[: ]/ { print "natcheck: the unmatched connection is printed: " $0; bad = 1 }
END {
	n = 0
	for (s in post) { n++; if (n <= 3) print "natcheck: skb " s " DNATed from 10.201.32.100.80 to 10.201.32.2.5003, then:" post[s] }
	print "natcheck: " n " skbs followed through the DNAT"
	exit (n == 0 || bad)
}' "$1"
