// Package rules names, in user space, the rule or action that dropped a
// packet, for rule() values (whydrop) that runtime/output formats:
//
//   - nftables and iptables-nft rules, from the kernel's nftables trace
//     (NFNLGRP_NFTRACE): with --nftrace, Nftrace adds an owner table of its
//     own (NFT_TABLE_F_OWNER, removed by the kernel with its socket) that
//     sets nftrace on each packet of the namespaces with a ruleset, keeps
//     the drop verdicts the kernel sends, and matches each to its kfree_skb
//     by namespace, addresses, protocol and ports; the rule's text is nft's
//     (and iptables-nft's) listing, run in the drop's namespace;
//   - iptables-legacy rules and classic tc actions, from the kernel's own
//     counters (iptables-legacy-save -c; tc's over rtnetlink, rtnl.go and
//     tcnl.go, no tc binary), read at start and at each drop: exactly one
//     rule or action whose drop count rose is named, never a guess;
//   - the object a rule's chain or comment names (objects.go).
//
// It speaks nfnetlink and rtnetlink with x/sys/unix and imports nothing of
// skbtrace, so that output, metrics and the tools can all use it.
package rules
