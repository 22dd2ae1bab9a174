// Package config reads and writes a node's configuration files: config.json
// (where the genesis, topology, keys and databases are, and what the node
// listens on) and topology.json (the static peers). Relative paths in a
// config are resolved against the config file's directory, so a node's
// folder can be moved whole.
//
// It only parses and checks files; it never opens a database or a socket.
package config
