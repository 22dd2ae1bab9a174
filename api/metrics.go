package api

import "fmt"

// registerMetrics registers the API's own figures: the submit-to-chain
// latency (latency.go; the request limits register theirs, limits.go).
// Every other part of the node registers its own on the registry /metrics
// serves: the chain database, the mempool, the Leios pipeline and its
// LeiosDB, the forge, chain sync, the host, the edge.
func (s *Server) registerMetrics() error {
	if err := s.opts.Registry.Register(s.latency.hist); err != nil {
		return fmt.Errorf("api: metrics: %w", err)
	}
	return nil
}
