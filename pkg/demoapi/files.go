package demoapi

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Files: a CSV export (for ResponseToFileExtractor) and book attachments, a list and each
// one's content (for a stream's file_uploader). Nothing depends on the clock or the options
// but Records.
//
//	GET /v1/{area}/exports/authors.csv[?gzip=true]   the authors as CSV; gzip=true: the CSV
//	                                                 gzipped, as application/gzip (no
//	                                                 Content-Encoding: the body is the file)
//	GET /v1/{area}/attachments                       {"data":[Attachment(1), …]}
//	GET /v1/{area}/attachments/{id}/content          the bytes of attachment id

// Attachments is how many attachments the demo API lists.
const Attachments = 3

// AttachmentRecord is one attachment as the list answers it; ContentURL is relative to the
// server (the list writes it absolute).
type AttachmentRecord struct {
	ID          int    `json:"id"`
	BookID      int    `json:"book_id"`
	FileName    string `json:"file_name"`
	ContentType string `json:"content_type"`
	Size        int    `json:"size"`
	ContentURL  string `json:"content_url"`
}

// attachmentNames are the attachments' file names, one with a space.
var attachmentNames = [Attachments]string{"cover.txt", "chapter 1.txt", "notes.csv"}

// Attachment returns attachment id (1 to Attachments), its URL in the area given.
func Attachment(area string, id int) AttachmentRecord {
	name := attachmentNames[id-1]
	ct := "text/plain"
	if strings.HasSuffix(name, ".csv") {
		ct = "text/csv"
	}
	return AttachmentRecord{ID: id, BookID: 10 * id, FileName: name, ContentType: ct, Size: len(AttachmentContent(id)),
		ContentURL: fmt.Sprintf("/v1/%s/attachments/%d/content", area, id)}
}

// AttachmentContent returns the bytes of attachment id: a line repeated so that the three
// are 52 bytes, 26 KiB and 7 bytes.
func AttachmentContent(id int) []byte {
	switch id {
	case 1:
		return []byte("The Crimson Garden: cover art, front and back.\nend.\n")
	case 2:
		line := "Chapter 1. It was a dark and stormy night in the bookshop; \n" // 60 bytes
		var b bytes.Buffer
		for b.Len()+len(line) <= 26*1024 {
			b.WriteString(line)
		}
		for b.Len() < 26*1024 {
			b.WriteByte('.')
		}
		return b.Bytes()
	}
	return []byte("a,b\n1,2")
}

// ExportNote is the note column of author id in the CSV export: texts a CSV reader must
// get right (an empty cell, pandas' "NA" and "null", quotes and commas, a line break).
func ExportNote(id int) string {
	return [...]string{"", "NA", `said "hi", then left`, "null", "line one\nline two"}[id%5]
}

// ExportCSV is the CSV export of the authors 1 to records.
func ExportCSV(records int) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"id", "name", "country", "active", "rating", "city", "postcode", "note"})
	for id := 1; id <= records; id++ {
		a := Author(id)
		w.Write([]string{strconv.Itoa(a.ID), a.Name, a.Country, strconv.FormatBool(a.Active), a.Rating.String(),
			a.Address.City, a.Address.Postcode, ExportNote(id)})
	}
	w.Flush()
	return b.Bytes()
}

func isFilesPath(p string) bool {
	parts := strings.Split(strings.TrimPrefix(p, "/v1/"), "/")
	return len(parts) >= 2 && (parts[1] == "exports" || parts[1] == "attachments")
}

// files serves the export and the attachments.
func (s *Server) files(w *recorder, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/v1/"), "/")
	check, ok := areas[parts[0]]
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "unknown area "+quote(parts[0]))
		return
	}
	q, ok := s.admit(w, r, check, http.MethodGet)
	if !ok {
		return
	}
	w.data = true
	switch rest := parts[1:]; {
	case len(rest) == 2 && rest[0] == "exports" && rest[1] == "authors.csv":
		body := ExportCSV(s.opts.Records)
		if v := q.query.Get("gzip"); v == "true" {
			var z bytes.Buffer
			gw := gzip.NewWriter(&z)
			gw.Write(body)
			gw.Close()
			w.Header().Set("Content-Type", "application/gzip")
			w.Write(z.Bytes())
			return
		}
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Write(body)
	case len(rest) == 1 && rest[0] == "attachments":
		list := make([]AttachmentRecord, Attachments)
		for i := range list {
			list[i] = Attachment(parts[0], i+1)
			list[i].ContentURL = baseURL(r) + list[i].ContentURL
		}
		writeJSON(w, http.StatusOK, map[string]any{"data": list})
	case len(rest) == 3 && rest[0] == "attachments" && rest[2] == "content":
		id, err := strconv.Atoi(rest[1])
		if err != nil || id < 1 || id > Attachments {
			writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no attachment %s (attachments are 1 to %d)", quote(rest[1]), Attachments))
			return
		}
		a := Attachment(parts[0], id)
		w.Header().Set("Content-Type", a.ContentType)
		w.Header().Set("Content-Length", strconv.Itoa(a.Size))
		w.Write(AttachmentContent(id))
	default:
		writeError(w, http.StatusNotFound, "not_found", "expected /v1/{area}/exports/authors.csv, /v1/{area}/attachments or /v1/{area}/attachments/{id}/content")
	}
}
