// Package api is a node's local HTTP API: GET /status, GET /metrics, the
// submit API (POST /api/submit/tx, as cardano-submit-api) and the lookups
// under /api/. Its types are also the JSON that tools such as the devnet
// supervisor read.
package api
