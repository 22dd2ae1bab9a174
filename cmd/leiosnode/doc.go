// Command leiosnode is the Leios node binary:
//
//	leiosnode run --config FILE      run one node until SIGINT/SIGTERM
//	leiosnode genesis --dir DIR      write a devnet: genesis, keys, configs, topologies
//	leiosnode devnet                 write a devnet and run it, one OS process per node
//	leiosnode keygen --kind KIND     write a key pair
//	leiosnode submit --node URL FILE submit a signed tx to a node
//	leiosnode tx send --skey FILE …  pay from a payment key through a node's API
//	leiosnode db check --config FILE verify a stopped node's databases
//
// Genesis parameters come from a template (configs/devnet.json by default,
// compiled in; configs/testnet.json for public-testnet-like values).
//
// This command is the CLI only: it parses flags and calls the packages that
// do the work, node for run and db check, keys for keygen, internal/devnet
// for genesis, devnet, submit and tx send's requests. It is the only place that links a node
// in, so devnet starts its nodes by running this same binary.
package main
