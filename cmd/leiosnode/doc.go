// Command leiosnode is the Leios node binary:
//
//	leiosnode run --config FILE      run one node until SIGINT/SIGTERM
//	leiosnode genesis --dir DIR      write a devnet: genesis, keys, configs, topologies
//	leiosnode devnet                 write a devnet and run it, one OS process per node
//	leiosnode keygen --kind KIND     write a key pair
//	leiosnode submit --node URL FILE submit a signed tx to a node
//
// Genesis parameters come from a template (configs/devnet.json by default,
// compiled in; configs/testnet.json for public-testnet-like values).
//
// The devnet supervisor only watches its nodes from outside, through each
// node's GET /status, exactly as an operator would: it never shares memory
// with them, so a node can be killed with kill -9 and restarted by hand with
// the command line the supervisor printed. Its tx firehose, likewise, only
// submits txs through each node's local API and checks their fate through it.
//
// This command must never hold protocol logic: everything a node does lives
// in the node package and below; here are only flags, files and processes.
package main
