package demoapi

import (
	"net/http"
	"strings"
)

// tableOrder is the order GET /v1/{area}/tables lists the collections in.
var tableOrder = []string{"books", "authors", "events", "reviews"}

// tables serves GET /v1/{area}/tables: the collections of the area as a list of tables,
// {"tables": [{"id": "tbl_books", "name": "Books", "collection": "books", "records": 250}, …]},
// for definitions whose streams are made from an API's answer (dynamic streams).
func (s *Server) tables(w *recorder, r *http.Request) {
	area := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1/"), "/tables")
	check, ok := areas[area]
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "unknown area "+quote(area))
		return
	}
	if _, ok := s.admit(w, r, check, http.MethodGet); !ok {
		return
	}
	type table struct {
		ID         string `json:"id"`
		Name       string `json:"name"`
		Collection string `json:"collection"`
		Records    int    `json:"records"`
	}
	list := make([]table, 0, len(tableOrder))
	for _, name := range tableOrder {
		c := s.collections[name]
		list = append(list, table{ID: "tbl_" + name, Name: strings.ToUpper(name[:1]) + name[1:], Collection: name, Records: len(c.records)})
	}
	w.data = true
	writeJSON(w, http.StatusOK, map[string]any{"tables": list})
}
