package cmd

import (
	"runtime/debug"
)

func init() {
	version = pickVersion(version, buildInfo)
}

// buildInfo is the build information of the running binary.
func buildInfo() (*debug.BuildInfo, bool) { return debug.ReadBuildInfo() }

// pickVersion is the version connector says it is (connector --version, the User-Agent,
// recordings): the one -ldflags set (make build, make install, the image, a release), else
// the one the Go toolchain wrote into the binary (go install, go build): the module's
// version when it has one — a tag, or since Go 1.24 a pseudo-version from the commit,
// +dirty when the checkout had changes — else the commit, shortened to 12 characters, with
// -dirty when the checkout had changes. Only a binary built without either (outside git, or
// with -buildvcs=false) says dev.
func pickVersion(stamped string, info func() (*debug.BuildInfo, bool)) string {
	if stamped != "" && stamped != "dev" {
		return stamped
	}
	bi, ok := info()
	if !ok || bi == nil {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var revision string
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if revision == "" {
		return "dev"
	}
	if len(revision) > 12 {
		revision = revision[:12]
	}
	if modified {
		revision += "-dirty"
	}
	return revision
}
