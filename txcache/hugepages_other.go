//go:build !linux

package txcache

// adviseHugePages is a Linux hint; elsewhere the table uses the default pages.
func adviseHugePages([]slot) {}
