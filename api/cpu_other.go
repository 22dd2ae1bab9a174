//go:build !unix

package api

// processCPUSeconds is not measured here.
func processCPUSeconds() float64 { return 0 }
