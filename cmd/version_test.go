package cmd

import (
	"runtime/debug"
	"testing"
)

func TestPickVersion(t *testing.T) {
	t.Parallel()
	const rev = "430034d2c5e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7"
	vcs := func(revision, modified string) []debug.BuildSetting {
		s := []debug.BuildSetting{{Key: "-trimpath", Value: "true"}, {Key: "vcs", Value: "git"}}
		if revision != "" {
			s = append(s, debug.BuildSetting{Key: "vcs.revision", Value: revision})
		}
		if modified != "" {
			s = append(s, debug.BuildSetting{Key: "vcs.modified", Value: modified})
		}
		return s
	}
	info := func(version string, settings []debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Path: "connector", Version: version}, Settings: settings}, true
		}
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	tests := []struct {
		name    string
		stamped string
		info    func() (*debug.BuildInfo, bool)
		want    string
	}{
		{"-ldflags wins", "v1.2.3-4-g430034d", info("v9.9.9", vcs(rev, "true")), "v1.2.3-4-g430034d"},
		{"-ldflags dev is unset", "dev", info("v1.4.0", nil), "v1.4.0"},
		{"a tag", "", info("v1.4.0", vcs(rev, "false")), "v1.4.0"},
		{"a pseudo-version (Go 1.24 and later)", "dev", info("v0.0.0-20260101120000-430034d2c5e1+dirty", vcs(rev, "true")), "v0.0.0-20260101120000-430034d2c5e1+dirty"},
		{"the commit", "dev", info("(devel)", vcs(rev, "false")), "430034d2c5e1"},
		{"the commit, changed", "dev", info("(devel)", vcs(rev, "true")), "430034d2c5e1-dirty"},
		{"a short commit", "dev", info("", vcs("430034d", "")), "430034d"},
		{"no version control", "dev", info("(devel)", vcs("", "")), "dev"},
		{"no build information", "dev", none, "dev"},
		{"nothing stamped", "", none, "dev"},
	}
	for _, tt := range tests {
		if got := pickVersion(tt.stamped, tt.info); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
