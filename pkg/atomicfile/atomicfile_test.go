package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := Write(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	info, _ := os.Stat(path)
	if info.Mode().Perm() != 0o600 {
		t.Errorf("a new file has mode %v, want 0600", info.Mode().Perm())
	}
	os.Chmod(path, 0o640)
	if err := Write(path, []byte("two")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	info, _ = os.Stat(path)
	if string(got) != "two" || info.Mode().Perm() != 0o640 {
		t.Errorf("got %q mode %v", got, info.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	if err := Write(filepath.Join(dir, "missing", "x"), nil); err == nil {
		t.Error("a file in a missing folder was written")
	}
}
