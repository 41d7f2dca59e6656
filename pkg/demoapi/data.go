package demoapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// FirstGlobalID is the global_id of book 1; book n has FirstGlobalID+n-1.
// It has 20 digits, more than a float64 holds exactly.
const FirstGlobalID uint64 = 12345678901234567890

// collection is one list of records, pre-encoded once. Record n (1-based) has id n.
type collection struct {
	name    string
	records []json.RawMessage
	// ids are the records' ids when they are not 1, 2, 3… (the books of one author).
	ids []int
	// stamps are the records' updated_at (events and reviews only).
	stamps []time.Time
}

// id is the id of the record at index i.
func (c *collection) id(i int) int {
	if c.ids == nil {
		return i + 1
	}
	return c.ids[i]
}

// after returns the index that follows the record with the given id, and whether there is
// such a record.
func (c *collection) after(id int) (int, bool) {
	if c.ids == nil {
		return id, id >= 1 && id <= len(c.records) // ids are 1-based: id n is followed by index n
	}
	for i, v := range c.ids {
		if v == id {
			return i + 1, true
		}
	}
	return 0, false
}

func newCollections(n int) map[string]*collection {
	books := &collection{name: "books", records: make([]json.RawMessage, n)}
	authors := &collection{name: "authors", records: make([]json.RawMessage, n)}
	for i := range n {
		books.records[i] = encode(Book(i + 1))
		authors.records[i] = encode(Author(i + 1))
	}
	return map[string]*collection{"books": books, "authors": authors}
}

// booksByAuthor groups the books by author id, in book order: the child collections of
// /v1/{area}/authors/{id}/books and of books?author_id=id. With 250 books, authors 1 to 50
// have 5 books each; the others have none.
func booksByAuthor(n int) map[int]*collection {
	out := map[int]*collection{}
	books := newCollections(n)["books"]
	for i := range n {
		id := Book(i + 1).Author.ID
		c := out[id]
		if c == nil {
			c = &collection{name: "books"}
			out[id] = c
		}
		c.records = append(c.records, books.records[i])
		c.ids = append(c.ids, i+1)
	}
	return out
}

// BooksOf returns the ids of the books of author id, in the order they are served.
func BooksOf(records, author int) []int {
	var ids []int
	for i := 1; i <= records; i++ {
		if Book(i).Author.ID == author {
			ids = append(ids, i)
		}
	}
	return ids
}

func encode(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // the record types always encode
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// BookRecord is one record of the books collection, in the key order it is served.
type BookRecord struct {
	ID        int         `json:"id"`
	GlobalID  uint64      `json:"global_id"`
	Title     string      `json:"title"`
	Author    BookAuthor  `json:"author"`
	Price     json.Number `json:"price"`
	InStock   bool        `json:"in_stock"`
	Tags      []string    `json:"tags"`
	Published string      `json:"published"`
	Blurb     string      `json:"blurb"`
}

// BookAuthor is the nested author object of a book.
type BookAuthor struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

// AuthorRecord is one record of the authors collection, in the key order it is served.
type AuthorRecord struct {
	ID      int           `json:"id"`
	Name    string        `json:"name"`
	Country string        `json:"country"`
	Active  bool          `json:"active"`
	Rating  json.Number   `json:"rating"`
	Address AuthorAddress `json:"address"`
}

// AuthorAddress is the nested address object of an author.
type AuthorAddress struct {
	City     string `json:"city"`
	Postcode string `json:"postcode"`
}

var (
	adjectives = []string{"Silent", "Crimson", "Paper", "Hidden", "Northern", "Glass", "Last"}
	nouns      = []string{"Orbit", "Garden", "Lighthouse", "Archive", "Harbour", "Engine", "Atlas", "Comet", "Library", "River", "Signal"}
	firstNames = []string{"Ada", "Bea", "Cyril", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivo"}
	lastNames  = []string{"Okafor", "Lindqvist", "Moreau", "Tanaka", "Silva", "Novak", "Haddad"}
	tagNames   = []string{"fiction", "space", "history", "poetry", "mystery"}
	cities     = []struct{ city, country string }{
		{"Lagos", "NG"}, {"Uppsala", "SE"}, {"Lyon", "FR"}, {"Osaka", "JP"}, {"Porto", "PT"}, {"Brno", "CZ"}, {"Beirut", "LB"},
	}
	firstDay = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
)

func authorName(id int) string {
	return firstNames[id%len(firstNames)] + " " + lastNames[id%len(lastNames)]
}

// Book returns book id (1-based) exactly as the API serves it.
func Book(id int) BookRecord {
	authorID := (id*3)%50 + 1
	cents := 499 + (id*137)%3000
	return BookRecord{
		ID:        id,
		GlobalID:  FirstGlobalID + uint64(id-1),
		Title:     fmt.Sprintf("The %s %s, vol. %d", adjectives[id%len(adjectives)], nouns[id%len(nouns)], id),
		Author:    BookAuthor{ID: authorID, Name: authorName(authorID)},
		Price:     json.Number(fmt.Sprintf("%d.%02d", cents/100, cents%100)),
		InStock:   id%3 != 0,
		Tags:      []string{tagNames[id%len(tagNames)], tagNames[(id+2)%len(tagNames)]},
		Published: firstDay.AddDate(0, 0, id).Format(time.DateOnly),
		Blurb:     fmt.Sprintf("<html>Salt & \"pepper\" vol. %d</html>", id),
	}
}

// Author returns author id (1-based) exactly as the API serves it.
func Author(id int) AuthorRecord {
	c := cities[id%len(cities)]
	return AuthorRecord{
		ID:      id,
		Name:    authorName(id),
		Country: c.country,
		Active:  id%4 != 0,
		Rating:  json.Number(fmt.Sprintf("%d.%d", 3+id%3, id%10)),
		Address: AuthorAddress{City: c.city, Postcode: fmt.Sprintf("%05d", 10000+id*37)},
	}
}
