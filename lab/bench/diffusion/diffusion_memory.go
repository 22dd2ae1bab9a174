package diffusion

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// processMemory is a snapshot of this process's memory, in bytes: the
// kernel's resident set (now and its peak since the last resetPeakRSS),
// the Go runtime's heap in use, and what the Go runtime holds from the OS
// (less what it returned). The RSS beyond that is mostly Pebble's block
// caches and memtables, which Pebble allocates with C malloc.
type processMemory struct {
	RSS, PeakRSS uint64
	GoHeap       uint64
	GoHeld       uint64
}

// readMemory takes a snapshot after a garbage collection that also
// returns free memory to the OS, so the heap figure is what is live and
// the RSS holds no garbage of an earlier run. RSS figures are 0 where
// /proc is missing.
func readMemory() processMemory {
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m := processMemory{GoHeap: ms.HeapInuse, GoHeld: ms.Sys - ms.HeapReleased}
	m.RSS, m.PeakRSS = procStatusKB("VmRSS")*1024, procStatusKB("VmHWM")*1024
	return m
}

// procStatusKB is a "kB" field of /proc/self/status, 0 if it cannot be
// read.
func procStatusKB(field string) uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb
	}
	return 0
}

// resetPeakRSS makes the kernel's peak RSS (VmHWM) start again from the
// current RSS (Linux: "5" to /proc/self/clear_refs).
func resetPeakRSS() error {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return fmt.Errorf("resetting the peak RSS: %w", err)
	}
	return nil
}

// diffusionMemory is the memory of the scale run's process, per node: the
// harness runs every node in this one process, so these are the process's
// figures divided by the nodes (the Go heap attributed by difference:
// after the network started, less before).
type diffusionMemory struct {
	Nodes int `json:"nodes"`
	// Process-wide, MiB.
	IdleRSSMiB float64 `json:"idle_rss_mib"` // all nodes up, before the EB
	PeakRSSMiB float64 `json:"peak_rss_mib"` // from before the nodes started to the end of the diffusion
	// Per node, MiB.
	IdleRSSPerNode    float64 `json:"idle_rss_per_node_mib"`
	PeakRSSPerNode    float64 `json:"peak_rss_per_node_mib"`
	GoHeapPerNode     float64 `json:"go_heap_per_node_mib"`          // live heap after a GC, idle, less the heap before the nodes started
	GoHeapPeakPerNode float64 `json:"go_heap_after_eb_per_node_mib"` // the same once every node holds the EB
	OutsideGoPerNode  float64 `json:"outside_go_per_node_mib"`       // idle RSS the Go runtime does not account for (Pebble's caches and memtables)
	Measured          string  `json:"measured"`
}

const mib = 1 << 20

func newDiffusionMemory(nodes int, before, idle, after processMemory) *diffusionMemory {
	n := float64(nodes)
	perNode := func(b uint64) float64 { return float64(b) / mib / n }
	m := &diffusionMemory{
		Nodes:          nodes,
		IdleRSSMiB:     float64(idle.RSS) / mib,
		PeakRSSMiB:     float64(after.PeakRSS) / mib,
		IdleRSSPerNode: perNode(idle.RSS),
		PeakRSSPerNode: perNode(after.PeakRSS),
		Measured: "one process runs every node: RSS figures are the process's (/proc/self/status VmRSS, VmHWM) divided by the nodes; " +
			"the Go heap per node is the live heap (HeapInuse after a GC) less the heap before the nodes started, divided by the nodes — an average, not any one node's; " +
			"outside Go is RSS less what the Go runtime holds from the OS (Pebble allocates its caches and memtables with C malloc)",
	}
	if idle.GoHeap > before.GoHeap {
		m.GoHeapPerNode = perNode(idle.GoHeap - before.GoHeap)
	}
	if after.GoHeap > before.GoHeap {
		m.GoHeapPeakPerNode = perNode(after.GoHeap - before.GoHeap)
	}
	if idle.RSS > idle.GoHeld {
		m.OutsideGoPerNode = perNode(idle.RSS - idle.GoHeld)
	}
	return m
}
