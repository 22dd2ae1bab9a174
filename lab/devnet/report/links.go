package report

import "github.com/leiosnode/leiosnode/lab/devnet/wan"

// LinksReport is the account of a devnet's emulated links (its link
// proxies: --topology, --link-latency, --link-bandwidth, or the chaos
// mode's partitions), taken by Run while the nodes still ran: per link
// and direction its bytes and mean rate over the run, and per node
// whether every connection and byte it had went through the lab
// (package wan).
type LinksReport = wan.Account
