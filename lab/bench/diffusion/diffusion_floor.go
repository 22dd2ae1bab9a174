package diffusion

import "time"

// diffusionFloor is the physical floor of an EB's diffusion over links of
// one latency and one rate, as the protocol must move it: what the links
// allow if every node did its own work (storing, hashing, validating) in
// no time.
//
// A node hop d away from the forger can ask for the body once its
// neighbour nearer the forger holds it and offered it, and for the txs
// once it holds the body (to know them) and the neighbour holds the whole
// closure and offered it (LeiosFetch asks only peers that offered a
// closure for its txs). An offer takes a latency L; a request and its
// answer a round trip 2L plus the bytes at the link rate. So, with bodyAt
// and closureAt the floors of the node before it (0 at the forger):
//
//	body    = bodyAt + 3L + body/rate
//	closure = max(body, closureAt + L) + 2L + missing/rate   (missing > 0)
//	closure = body                                            (all held)
//
// The first hop is then 5L + (body + missing)/rate: the announcement's
// one-way trip and two round trips. It is a single-path floor: a node
// that fetches parts of a closure from two neighbours at once could
// beat it, which the fetch logic allows only as a hedge.
type diffusionFloor struct {
	latency time.Duration
	rate    float64 // bytes per second
	body    uint64  // EB body bytes
	missing uint64  // closure bytes the receivers do not hold yet
}

// at is the floor of the closure at a node hops away from the forger.
func (f diffusionFloor) at(hops int) time.Duration {
	var bodyAt, closureAt time.Duration
	for range hops {
		bodyAt += 3*f.latency + f.transfer(f.body)
		if f.missing == 0 {
			closureAt = bodyAt
			continue
		}
		closureAt = max(bodyAt, closureAt+f.latency) + 2*f.latency + f.transfer(f.missing)
	}
	return closureAt
}

// transfer is the serialization time of n bytes at the link rate.
func (f diffusionFloor) transfer(n uint64) time.Duration {
	return time.Duration(float64(n) / f.rate * float64(time.Second))
}
