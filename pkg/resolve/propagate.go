package resolve

import "fmt"

// paramsKey holds the parameters of a component, inherited by the components inside it.
const paramsKey = "$parameters"

// defaultTypes is the type the CDK gives a mapping without one, by the type of the component
// holding it and the field: "HttpRequester.error_handler" is a DefaultErrorHandler.
var defaultTypes = map[string]string{
	"CompositeErrorHandler.error_handlers":           "DefaultErrorHandler",
	"CursorPagination.decoder":                       "JsonDecoder",
	"DatetimeBasedCursor.end_datetime":               "MinMaxDatetime",
	"DatetimeBasedCursor.end_time_option":            "RequestOption",
	"DatetimeBasedCursor.start_datetime":             "MinMaxDatetime",
	"DatetimeBasedCursor.start_time_option":          "RequestOption",
	"DeclarativeSource.check":                        "CheckStream",
	"DeclarativeSource.spec":                         "Spec",
	"DeclarativeSource.streams":                      "DeclarativeStream",
	"DeclarativeStream.retriever":                    "SimpleRetriever",
	"DeclarativeStream.schema_loader":                "JsonFileSchemaLoader",
	"DynamicDeclarativeStream.stream_template":       "DeclarativeStream",
	"DynamicDeclarativeStream.components_resolver":   "ConfigComponentResolver",
	"HttpComponentsResolver.retriever":               "SimpleRetriever",
	"HttpComponentsResolver.components_mapping":      "ComponentMappingDefinition",
	"ConfigComponentsResolver.stream_config":         "StreamConfig",
	"ConfigComponentsResolver.components_mapping":    "ComponentMappingDefinition",
	"DefaultErrorHandler.response_filters":           "HttpResponseFilter",
	"DefaultPaginator.decoder":                       "JsonDecoder",
	"DefaultPaginator.page_size_option":              "RequestOption",
	"DpathExtractor.decoder":                         "JsonDecoder",
	"DpathExtractor.record_expander":                 "RecordExpander",
	"HttpRequester.error_handler":                    "DefaultErrorHandler",
	"ListPartitionRouter.request_option":             "RequestOption",
	"ParentStreamConfig.request_option":              "RequestOption",
	"ParentStreamConfig.stream":                      "DeclarativeStream",
	"RecordSelector.extractor":                       "DpathExtractor",
	"RecordSelector.record_filter":                   "RecordFilter",
	"SimpleRetriever.paginator":                      "NoPagination",
	"SimpleRetriever.record_selector":                "RecordSelector",
	"SimpleRetriever.requester":                      "HttpRequester",
	"SubstreamPartitionRouter.parent_stream_configs": "ParentStreamConfig",
	"AddFields.fields":                               "AddedFieldDefinition",
	"CustomPartitionRouter.parent_stream_configs":    "ParentStreamConfig",
	"DynamicSchemaLoader.retriever":                  "SimpleRetriever",
	"SchemaTypeIdentifier.types_map":                 "TypesMap",
}

// customTypes is the type the CDK gives a mapping without one that names a Python class
// (class_name), by the same key.
var customTypes = map[string]string{
	"CompositeErrorHandler.backoff_strategies": "CustomBackoffStrategy",
	"DeclarativeStream.retriever":              "CustomRetriever",
	"DeclarativeStream.transformations":        "CustomTransformation",
	"DefaultErrorHandler.backoff_strategies":   "CustomBackoffStrategy",
	"DefaultPaginator.pagination_strategy":     "CustomPaginationStrategy",
	"HttpRequester.authenticator":              "CustomAuthenticator",
	"HttpRequester.error_handler":              "CustomErrorHandler",
	"RecordSelector.extractor":                 "CustomRecordExtractor",
	"SimpleRetriever.partition_router":         "CustomPartitionRouter",
}

// propagator gives types and $parameters to the components of a resolved manifest as the
// CDK's ManifestComponentTransformer does. The rules, which the output depends on:
//   - a mapping without a type takes the default type of its place (customTypes when it has
//     a class_name), added as its last key;
//   - its $parameters are taken out and merged over the inherited ones (under the inherited
//     ones with parentWins, the dynamic streams' use_parent_parameters);
//   - a JSON schema (type "object" or ["null", "object"]) is left as it is, its $parameters
//     dropped;
//   - a mapping still without a type is no component: only the typed mappings directly in
//     it are processed, with the parameters it sees; its own $parameters are dropped;
//   - a component gets every parameter as a field unless it has a true value there, then
//     each mapping and each mapping in a list of its fields is processed in turn, the
//     parameter named like the field left out meanwhile and put back last (a false one is
//     not put back);
//   - the parameters end up as the component's $parameters, last, when there are any.
type propagator struct {
	parentWins bool
	b          *budget
}

func (p *propagator) component(field string, comp *Object, parent *Object, depth int) (*Object, error) {
	cc, err := p.b.copy(comp, depth)
	if err != nil {
		return nil, err
	}
	c := cc.(*Object)
	if !c.Has("type") {
		t := defaultTypes[field]
		if c.Has("class_name") {
			t = customTypes[field]
		}
		if t != "" {
			c.Set("type", t)
		}
	}
	pp, err := p.b.copy(parent, depth)
	if err != nil {
		return nil, err
	}
	params := pp.(*Object)
	if own, ok := c.Pop(paramsKey); ok {
		o, ok := own.(*Object)
		if !ok {
			return nil, fmt.Errorf("'%s' object is not a mapping", typeName(own))
		}
		if p.parentWins {
			merged := o.shallow()
			for _, k := range params.keys {
				merged.Set(k, params.vals[k])
			}
			params = merged
		} else {
			for _, k := range o.keys {
				params.Set(k, o.vals[k])
			}
		}
	}
	if isJSONSchema(c) {
		return c, nil
	}
	if !c.Has("type") {
		for _, k := range c.keys {
			if v, ok := c.vals[k].(*Object); ok && truthy(v.Value("type")) {
				nested, err := p.component(field, v, params, depth+1)
				if err != nil {
					return nil, err
				}
				c.vals[k] = nested
			}
		}
		return c, nil
	}
	for _, k := range params.keys {
		if !truthy(c.Value(k)) {
			c.Set(k, params.vals[k])
		}
	}
	keys := append([]string(nil), c.keys...)
	for _, k := range keys {
		switch v := c.vals[k].(type) {
		case *Object:
			left, _ := params.Pop(k)
			nested, err := p.component(typeKey(c)+"."+k, v, params, depth+1)
			if err != nil {
				return nil, err
			}
			c.vals[k] = nested
			if truthy(left) {
				params.Set(k, left)
			}
		case *List:
			left, _ := params.Pop(k)
			for i, item := range v.Items {
				if o, ok := item.(*Object); ok {
					nested, err := p.component(typeKey(c)+"."+k, o, params, depth+1)
					if err != nil {
						return nil, err
					}
					v.Items[i] = nested // in place: the list may be a parameter's too
				}
			}
			if truthy(left) {
				params.Set(k, left)
			}
		}
	}
	if params.Len() > 0 {
		c.Set(paramsKey, params)
	}
	return c, nil
}

// typeKey is the component's type as the first part of the keys of defaultTypes.
func typeKey(c *Object) string { return pyStr(c.Value("type")) }

// isJSONSchema reports a mapping the CDK takes for a JSON schema, not a component.
func isJSONSchema(c *Object) bool {
	switch t := c.Value("type").(type) {
	case string:
		return t == "object"
	case *List:
		return len(t.Items) == 2 && t.Items[0] == "null" && t.Items[1] == "object"
	}
	return false
}
