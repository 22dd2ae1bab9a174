//go:build unix

package keys

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestCheckPrivate: a signing key file group or others may read is refused
// with the line that names it, its mode and the fix; one only its owner
// reads passes, and so does what is not a regular file.
func TestCheckPrivate(t *testing.T) {
	dir := t.TempDir()
	regular := func(mode os.FileMode) func(string) error {
		return func(path string) error {
			if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
				return err
			}
			return os.Chmod(path, mode) // not WriteFile's mode: the umask would mask it
		}
	}
	for _, tt := range []struct {
		name   string
		create func(path string) error
		mode   string // the mode the error names, "" for none
	}{
		{"0600", regular(0o600), ""},
		{"0400", regular(0o400), ""},
		{"0620, writable but not readable by the group", regular(0o620), ""},
		{"0644", regular(0o644), "0644"},
		{"0640", regular(0o640), "0640"},
		{"0604", regular(0o604), "0604"},
		{"0666", regular(0o666), "0666"},
		{"a link to a 0644 file: the file's mode", func(path string) error {
			if err := regular(0o644)(path + ".target"); err != nil {
				return err
			}
			return os.Symlink(path+".target", path)
		}, "0644"},
		{"a named pipe", func(path string) error { return syscall.Mkfifo(path, 0o644) }, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, filepath.Base(t.Name())+".skey")
			if err := tt.create(path); err != nil {
				t.Fatal(err)
			}
			err := CheckPrivate(path)
			want := path + ": readable by group or others (mode " + tt.mode + "): a signing key must be private; run chmod 600 " + path
			switch {
			case tt.mode == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.mode == "":
			case err == nil:
				t.Error("accepted")
			case err.Error() != want || !errors.Is(err, ErrReadableByOthers):
				t.Errorf("error %q, want %q", err, want)
			}
		})
	}
	if err := CheckPrivate(filepath.Join(dir, "absent.skey")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a file that is not there: %v", err)
	}
}
