package run

import "testing"

// filePath keeps a file inside its stream's folder: the CDK's pathlib join (leading
// slashes, empty and "." segments dropped), and a refusal where pathlib would climb out.
func TestFilePath(t *testing.T) {
	tests := []struct{ stream, name, want, err string }{
		{"attachments", "1/cover.txt", "attachments/1/cover.txt", ""},
		{"attachments", "1/cover.txt/", "attachments/1/cover.txt", ""},
		{"attachments", "///etc/passwd", "attachments/etc/passwd", ""},
		{"attachments", "./a//b/./c", "attachments/a/b/c", ""},
		{"attachments", "a..b/..c", "attachments/a..b/..c", ""},
		{"a/b", "x", "a/b/x", ""},
		{"attachments", "../x", "", `the file name "../x" has a ".." segment, which would leave the stream's folder`},
		{"attachments", "a/../../x", "", `the file name "a/../../x" has a ".." segment, which would leave the stream's folder`},
		{"attachments", "a/..", "", `the file name "a/.." has a ".." segment, which would leave the stream's folder`},
		{"..", "x", "", `the stream name ".." has a ".." segment, which would leave the stream's folder`},
		{"", "x", "", `the stream name "" gives no folder to write its files in`},
		{"attachments", "/./", "", `the file name "/./" is empty once its slashes and "." are left out`},
		{"attachments", "a\x00b", "", `the file name "a\x00b" has a NUL character`},
	}
	for _, tt := range tests {
		got, err := filePath(tt.stream, tt.name)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if got != tt.want || msg != tt.err {
			t.Errorf("filePath(%q, %q) = %q, %q; want %q, %q", tt.stream, tt.name, got, msg, tt.want, tt.err)
		}
	}
}
