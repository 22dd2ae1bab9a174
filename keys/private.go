package keys

import (
	"errors"
	"fmt"
	"os"
)

// ErrReadableByOthers: a signing key file's mode lets group or others read
// it.
var ErrReadableByOthers = errors.New("readable by group or others")

// CheckPrivate refuses a signing key file that its group or others may
// read, as ssh refuses such a private key and cardano-node such a VRF key:
// the error names the file, its mode and the chmod that fixes it. Only a
// regular file's permission bits are looked at (a pipe or a device says
// nothing by them), and only where they mean who may read (unix).
func CheckPrivate(path string) error {
	if !permissionBitsApply {
		return nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	if perm := info.Mode().Perm(); info.Mode().IsRegular() && perm&0o044 != 0 {
		return fmt.Errorf("%s: %w (mode %04o): a signing key must be private; run chmod 600 %s", path, ErrReadableByOthers, perm, path)
	}
	return nil
}
