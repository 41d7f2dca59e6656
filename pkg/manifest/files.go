package manifest

import (
	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
	"connector/pkg/template"
)

// ResponseToFile is the ResponseToFileExtractor: the whole response body (gzip or zlib
// compressed or not) read as CSV, a record per row. It reads the body itself, whatever the
// retriever's decoder, so a stream with one has it as its Decoder (pkg/decode reads it).
const ResponseToFile = "ResponseToFileExtractor"

// FileUploaderType is the type of a DeclarativeStream's file_uploader.
const FileUploaderType = "FileUploader"

func init() {
	for t, fs := range map[string][]string{
		ResponseToFile: {"type", "preserve_na_values", "$parameters"},
		FileUploaderType: {"type", "requester", "download_target_extractor", "file_extractor", "filename_extractor",
			"$parameters"},
	} {
		fields[t] = fs
		fieldSets[t] = map[string]bool{}
		for _, f := range fs {
			fieldSets[t][f] = true
		}
	}
}

// FileUploader is a stream's file_uploader: for each record the stream emits, the URL of
// its file (the download_target_extractor's first value, read from the record), a request
// of Requester for it, and the file written under the stream's folder with the name the
// FilenameExtractor renders (a random UUID without one).
type FileUploader struct {
	Pos       Pos
	Requester *Requester
	// TargetPath is the download_target_extractor's field path, applied to the record.
	TargetPath []*template.Template
	// Filename is filename_extractor (variables config and record); nil: a random name.
	Filename *template.Template
	// Parameters are the file uploader's merged $parameters (variable `parameters`).
	Parameters map[string]any
}

// Template variables of a file uploader: its requester sees download_target (the CDK puts
// it in the extra fields of the slice its requester is sent with), its filename the record.
var (
	uploadVars   = append(append([]string{}, requestVars...), "download_target")
	filenameVars = []string{"config", "record", "parameters"}
)

// toFileExtractor reads a ResponseToFileExtractor as the decoder of the bodies it reads.
func (l *loader) toFileExtractor(c *comp) *Decoder {
	c.checkFields(ResponseToFile)
	d := &Decoder{Type: ResponseToFile, Pos: pos(c.n)}
	if v, set := l.boolField(c, "preserve_na_values"); set {
		d.PreserveNA = v
	}
	return d
}

// extractorType is the type written in the extractor component n ("" when none is), read
// without reporting anything: the loader that reads n says what is wrong with it.
func extractorType(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "type" && isString(n.Content[i+1]) {
			return n.Content[i+1].Value
		}
	}
	return ""
}

// fileUploader reads a DeclarativeStream's file_uploader into s; false when the stream
// cannot be run.
func (l *loader) fileUploader(n *yaml.Node, path string, parent *params, s *Stream) bool {
	c, ok := l.component(n, path, parent, FileUploaderType)
	if !ok {
		return false
	}
	if c.typ != FileUploaderType {
		l.unsupported(n, path, c.typ, "file_uploader")
		return false
	}
	c.checkFields(FileUploaderType)
	u := &FileUploader{Pos: pos(n), Parameters: c.params.values()}
	ok = true
	if rq := c.require("requester"); rq != nil {
		rc, rok := l.component(rq, c.fieldPath("requester"), c.params, "HttpRequester")
		switch {
		case !rok:
			ok = false
		case rc.typ != "HttpRequester":
			l.unsupported(rq, rc.path, rc.typ, "requester")
			ok = false
		default:
			var own []optionUse
			sa := &streamAuth{name: s.Name, path: path, requester: rq}
			u.Requester = l.requester(rc, uploadVars, sa, &own)
			l.conflicts = append(l.conflicts, own)
			l.sameAuth(sa)
		}
	} else {
		ok = false
	}
	if tn := c.require("download_target_extractor"); tn != nil {
		u.TargetPath, ok = l.dpath(tn, c.fieldPath("download_target_extractor"), c.params, ok)
	} else {
		ok = false
	}
	// file_extractor is in the CDK's schema, but its factory never reads it: the file is the
	// whole response body. It is checked as a component and otherwise left alone.
	if fn := c.get("file_extractor"); !isEmpty(fn) {
		if t := extractorType(fn); t != "" && t != "DpathExtractor" {
			l.unsupported(fn, c.fieldPath("file_extractor"), t, "file_extractor")
			ok = false
		} else {
			l.add(diag.Diagnostic{Severity: diag.Warning, Code: diag.CodeUnsupported, Line: fn.Line, Column: fn.Column,
				Path:    c.fieldPath("file_extractor"),
				Message: "`file_extractor` is not applied: the file is the whole response body, as in the Airbyte CDK, whose factory ignores it"})
		}
	}
	if v := c.get("filename_extractor"); !isEmpty(v) {
		l.stringTemplate(c, "filename_extractor", filenameVars, &u.Filename)
	}
	s.Files = u
	return ok && u.Requester != nil
}
