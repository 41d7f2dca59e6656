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

func TestCreateCommitAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rec.har")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("new "))
	f.Write([]byte("content"))
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatalf("the file changed before Commit: %q", got)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	info, _ := os.Stat(path)
	if string(got) != "new content" || info.Mode().Perm() != 0o644 {
		t.Errorf("got %q mode %v", got, info.Mode().Perm())
	}
	f.Abort() // after Commit: nothing
	if _, err := os.Stat(path); err != nil {
		t.Fatal("Abort after Commit removed the file")
	}

	g, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	g.Write([]byte("dropped"))
	g.Abort()
	if got, _ := os.ReadFile(path); string(got) != "new content" {
		t.Errorf("Abort changed the file: %q", got)
	}
	if _, err := g.Write([]byte("x")); err == nil {
		t.Error("a write after Abort succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}
