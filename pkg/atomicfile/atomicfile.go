// Package atomicfile replaces a file so that a reader, or a run killed at any instant, sees
// either the old content or the new one, never a part: the new content goes to a temporary
// file in the same folder, is synced, takes the old file's mode (0600 for a new file), and
// is renamed over the old one.
package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
)

// Write replaces path with data.
func Write(path string, data []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// File is the new content of a file, written piece by piece (a recording of a long read)
// to a temporary file beside it: Commit puts it in place, Abort drops it. Until then the
// old file, if any, is untouched.
type File struct {
	tmp  *os.File
	path string
	mode os.FileMode
	done bool
}

// Create starts the replacement of path.
func Create(path string) (*File, error) {
	mode := os.FileMode(0o600)
	if info, err := os.Stat(path); err == nil {
		mode = info.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	return &File{tmp: tmp, path: path, mode: mode}, nil
}

// Write appends p to the new content.
func (f *File) Write(p []byte) (int, error) {
	if f.done {
		return 0, os.ErrClosed
	}
	return f.tmp.Write(p)
}

// Commit syncs the new content and renames it over the file.
func (f *File) Commit() error {
	if f.done {
		return os.ErrClosed
	}
	f.done = true
	name := f.tmp.Name()
	defer os.Remove(name)
	err := errors.Join(f.tmp.Chmod(f.mode), f.tmp.Sync())
	if cerr := f.tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(name, f.path); err != nil {
		return err
	}
	// The rename itself reaches the disk when the folder is synced.
	if d, err := os.Open(filepath.Dir(f.path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Abort drops the new content; the file stays as it was. It does nothing after Commit.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.tmp.Close()
	os.Remove(f.tmp.Name())
}
