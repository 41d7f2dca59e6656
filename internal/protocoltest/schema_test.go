package protocoltest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// update rewrites testdata/airbyte_protocol.schema.json from the protocol's YAML:
// go test ./internal/protocoltest -run TestSchemaIsTheProtocol -update
var update = flag.Bool("update", false, "rewrite testdata/airbyte_protocol.schema.json")

// source is where testdata/airbyte-protocol/airbyte_protocol.yaml was copied from, byte for
// byte (testdata/airbyte-protocol/README.md says how to refresh it).
const source = "github.com/airbytehq/airbyte-protocol, protocol-models/src/main/resources/airbyte_protocol/v0/airbyte_protocol.yaml, " +
	"commit 776eede060a60516ec4d7ea20c1204fa806689a1 (release 0.18.0)"

// The schema file the checker uses is generated from the protocol's own definition, and
// stays so: the test fails when the two disagree.
func TestSchemaIsTheProtocol(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "airbyte-protocol", "airbyte_protocol.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := convert(src)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "airbyte_protocol.schema.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not the conversion of the protocol's YAML: run go test ./internal/protocoltest -run TestSchemaIsTheProtocol -update", path)
	}
}

// The conversion keeps every JSON Schema keyword and refuses one it does not know, so that
// a new keyword upstream is a decision rather than a silent drop.
func TestConvertRefusesAnUnknownKeyword(t *testing.T) {
	src := "$schema: http://json-schema.org/draft-07/schema#\ndefinitions:\n  A:\n    type: object\n    javaInterfaces: [x]\n"
	_, err := convert([]byte(src))
	if want := `definitions.A: "javaInterfaces" is not a draft-07 keyword; add it to keywords or to dropped`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// keywords are the draft-07 keywords, kept as written. subschemas maps the keywords whose
// value holds schemas to how: one schema, a list of schemas, or names to schemas.
var (
	keywords = map[string]bool{
		"$schema": true, "$id": true, "$ref": true, "$comment": true, "title": true, "description": true,
		"default": true, "examples": true, "readOnly": true, "writeOnly": true, "type": true, "enum": true,
		"const": true, "format": true, "multipleOf": true, "maximum": true, "exclusiveMaximum": true,
		"minimum": true, "exclusiveMinimum": true, "maxLength": true, "minLength": true, "pattern": true,
		"contentMediaType": true, "contentEncoding": true, "items": true, "additionalItems": true,
		"maxItems": true, "minItems": true, "uniqueItems": true, "contains": true, "maxProperties": true,
		"minProperties": true, "required": true, "properties": true, "patternProperties": true,
		"additionalProperties": true, "dependencies": true, "propertyNames": true, "if": true, "then": true,
		"else": true, "allOf": true, "anyOf": true, "oneOf": true, "not": true, "definitions": true,
	}
	subschemas = map[string]string{
		"items": "schema or list", "additionalItems": "schema", "contains": "schema", "additionalProperties": "schema",
		"propertyNames": "schema", "if": "schema", "then": "schema", "else": "schema", "not": "schema",
		"allOf": "list", "anyOf": "list", "oneOf": "list",
		"properties": "names", "patternProperties": "names", "definitions": "names", "dependencies": "names",
	}
	// dropped are the YAML's keys that are not JSON Schema: the Java code generator's
	// existingJavaType, and the document's version (kept in $comment).
	dropped = map[string]bool{"existingJavaType": true, "version": true}
)

// convert is the protocol's YAML as a draft-07 JSON schema: the same keywords in the same
// order, without the keys of dropped, and a $comment naming the source and its version.
func convert(src []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the protocol's YAML is not a mapping")
	}
	root := doc.Content[0]
	version := ""
	for i := 0; i < len(root.Content); i += 2 {
		if root.Content[i].Value == "version" {
			version = root.Content[i+1].Value
		}
	}
	comment := fmt.Sprintf("Generated from %s (its version key: %s) by TestSchemaIsTheProtocol (internal/protocoltest/schema_test.go): the YAML's keys that are not JSON Schema (existingJavaType, version) left out. Do not edit.", source, version)
	var b bytes.Buffer
	if err := writeSchema(&b, root, "", comment); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// writeSchema writes the schema n, found at path, as JSON; a comment, when not "", is
// written as $comment after $id.
func writeSchema(b *bytes.Buffer, n *yaml.Node, path, comment string) error {
	if n.Kind == yaml.ScalarNode {
		return writeValue(b, n) // true or false
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: a schema must be a mapping or a boolean", orRoot(path))
	}
	b.WriteByte('{')
	first := true
	key := func(k string) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		writeString(b, k)
		b.WriteByte(':')
	}
	for i := 0; i < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		if dropped[k] {
			continue
		}
		if !keywords[k] {
			return fmt.Errorf("%s: %q is not a draft-07 keyword; add it to keywords or to dropped", orRoot(path), k)
		}
		key(k)
		at := join(path, k)
		var err error
		switch subschemas[k] {
		case "schema":
			err = writeSchema(b, v, at, "")
		case "schema or list":
			if v.Kind == yaml.SequenceNode {
				err = writeSchemas(b, v, at)
			} else {
				err = writeSchema(b, v, at, "")
			}
		case "list":
			err = writeSchemas(b, v, at)
		case "names":
			err = writeNamed(b, v, at)
		default:
			err = writeValue(b, v)
		}
		if err != nil {
			return err
		}
		if k == "$id" && comment != "" {
			key("$comment")
			writeString(b, comment)
			comment = ""
		}
	}
	if comment != "" {
		key("$comment")
		writeString(b, comment)
	}
	b.WriteByte('}')
	return nil
}

// writeSchemas writes a list of schemas.
func writeSchemas(b *bytes.Buffer, n *yaml.Node, path string) error {
	if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("%s: want a list of schemas", path)
	}
	b.WriteByte('[')
	for i, c := range n.Content {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := writeSchema(b, c, fmt.Sprintf("%s[%d]", path, i), ""); err != nil {
			return err
		}
	}
	b.WriteByte(']')
	return nil
}

// writeNamed writes names to schemas (properties, definitions); a dependency may also be a
// list of property names.
func writeNamed(b *bytes.Buffer, n *yaml.Node, path string) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: want a mapping of names to schemas", path)
	}
	b.WriteByte('{')
	for i := 0; i < len(n.Content); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		name, v := n.Content[i].Value, n.Content[i+1]
		writeString(b, name)
		b.WriteByte(':')
		var err error
		if v.Kind == yaml.SequenceNode {
			err = writeValue(b, v)
		} else {
			err = writeSchema(b, v, join(path, name), "")
		}
		if err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

// writeValue writes a value that is not a schema (an enum, a description, an example) as
// JSON, mappings in their order.
func writeValue(b *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.AliasNode:
		return writeValue(b, n.Alias)
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, n.Content[i].Value)
			b.WriteByte(':')
			if err := writeValue(b, n.Content[i+1]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeValue(b, c); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return err
	}
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	b.Truncate(b.Len() - 1)
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func orRoot(path string) string {
	if path == "" {
		return "the root"
	}
	return strings.TrimPrefix(path, ".")
}
