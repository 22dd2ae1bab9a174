//go:build !linux

package leiosdb

import (
	"errors"
	"fmt"
)

// dropFile needs fadvise, which only Linux offers here.
func dropFile(name string) error {
	return fmt.Errorf("dropping the page cache of %s: %w", name, errors.ErrUnsupported)
}
