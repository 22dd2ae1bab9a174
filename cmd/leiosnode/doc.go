// Command leiosnode is the Leios node binary:
//
//	leiosnode run --config FILE      run one node until SIGINT/SIGTERM
//	leiosnode genesis --dir DIR      write a network: genesis, keys, configs, topologies
//	                                 (on loopback, or --hosts: a folder per host)
//	leiosnode devnet                 write a devnet and run it, one OS process per node
//	leiosnode keygen --kind KIND     write a key pair
//	leiosnode peer-id --key FILE     print a node key's peer ID
//	leiosnode submit --node URL FILE submit a signed tx to a node
//	leiosnode status --node URL      print a node's state for a person
//	leiosnode tx send --skey FILE …  pay from a payment key through a node's API
//	leiosnode db check --config FILE verify a stopped node's databases
//	leiosnode version                print the version
//
// Genesis parameters come from a template (configs/devnet.json by default,
// compiled in; configs/testnet.json for a network on several hosts).
//
// This command is the CLI only: it parses flags and calls the packages that
// do the work, node for run and db check, keys for keygen and peer-id,
// lab/devnet/layout for genesis, lab/devnet for devnet,
// api/apiclient for submit, tx send's requests and status,
// internal/version for version. It is the only place that links a
// node in, so devnet starts its nodes by running this same binary.
package main
