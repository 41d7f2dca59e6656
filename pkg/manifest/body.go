package manifest

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
)

// requestBody reads an HttpRequester's request_body as the reference implementation resolves
// it: RequestBodyJsonObject and RequestBodyGraphQL become the JSON body (request_body_json),
// RequestBodyUrlEncodedForm the form body and RequestBodyPlainText the text body
// (request_body_data). request_body replaces the deprecated field of its own kind (a
// warning: that field is ignored); a deprecated field of the other kind is a conflict, as in
// the reference.
func (l *loader) requestBody(c *comp, r *Requester, vars []string, uses *[]optionUse) {
	b := c.get("request_body")
	if isEmpty(b) {
		return
	}
	bc, ok := l.component(b, c.fieldPath("request_body"), c.params, "")
	if !ok {
		return
	}
	if _, known := fieldSets[bc.typ]; !known || len(bc.typ) < len("RequestBody") || bc.typ[:len("RequestBody")] != "RequestBody" {
		l.unsupported(b, bc.path, bc.typ, "request_body")
		return
	}
	bc.checkFields(bc.typ)
	v := bc.require("value")
	if v == nil {
		return
	}
	const source = "the requester's request_body"
	wantMap := bc.typ != "RequestBodyPlainText"
	if wantMap && v.Kind != yaml.MappingNode {
		l.at(v, bc.fieldPath("value"), diag.CodeType, fmt.Sprintf("the `value` of %s must be a mapping, not %s", bc.typ, kindName(v)), "")
		return
	}
	if !wantMap && v.Kind != yaml.ScalarNode {
		l.at(v, bc.fieldPath("value"), diag.CodeType, fmt.Sprintf("the `value` of RequestBodyPlainText must be a string, not %s", kindName(v)), "")
		return
	}
	var t *Tree
	json := bc.typ == "RequestBodyJsonObject" || bc.typ == "RequestBodyGraphQL"
	switch bc.typ {
	case "RequestBodyJsonObject":
		t = l.optionTree(bc, "value", vars, InjectBodyJSON, source, uses)
	case "RequestBodyGraphQL":
		if mapGet(v, "query") == nil {
			l.at(v, bc.fieldPath("value"), diag.CodeMissingField, "the `value` of RequestBodyGraphQL is missing the required field `query`", "")
		}
		q := graphQLFirst(v)
		l.literalCredentials(q, bc.fieldPath("value"), "value", InjectBodyJSON, vars)
		t = l.tree(q, bc.fieldPath("value"), "value", vars)
	case "RequestBodyUrlEncodedForm":
		t = l.optionTree(bc, "value", vars, InjectBodyData, source, uses)
	case "RequestBodyPlainText":
		t = l.optionTree(bc, "value", vars, InjectBodyData, source, nil)
	}
	same, other := "request_body_json", "request_body_data"
	sameTree, otherTree := r.BodyJSON, r.BodyData
	if !json {
		same, other = other, same
		sameTree, otherTree = otherTree, sameTree
	}
	if otherTree != nil {
		l.at(c.keys[other], c.fieldPath(other), diag.CodeOptionConflict,
			fmt.Sprintf("both `request_body` (%s) and `%s` are set; a request has one body", bc.typ, other),
			fmt.Sprintf("keep `request_body` and remove `%s`", other))
		return
	}
	if sameTree != nil {
		l.add(diag.Diagnostic{Severity: diag.Warning, Code: diag.CodeOptionConflict, Path: c.fieldPath(same),
			Line: c.keys[same].Line, Column: c.keys[same].Column,
			Message: fmt.Sprintf("`%s` is ignored: `request_body` (%s) replaces it", same, bc.typ),
			Hint:    fmt.Sprintf("remove `%s`", same)})
	}
	if json {
		r.BodyJSON = t
	} else {
		r.BodyData = t
	}
}

// graphQLFirst is the mapping m with its `query` entry first, as the reference writes a
// GraphQL body.
func graphQLFirst(m *yaml.Node) *yaml.Node {
	out := *m
	out.Content = make([]*yaml.Node, 0, len(m.Content))
	var rest []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "query" {
			out.Content = append(out.Content, m.Content[i], m.Content[i+1])
		} else {
			rest = append(rest, m.Content[i], m.Content[i+1])
		}
	}
	out.Content = append(out.Content, rest...)
	return &out
}
