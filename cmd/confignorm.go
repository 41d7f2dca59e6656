package cmd

import (
	"fmt"

	"connector/pkg/manifest"
	"connector/pkg/transform"
	"connector/pkg/values"
)

// normalizeConfig finishes what spec.config_normalization_rules asks of the testing values,
// in the CDK's order: the config_migrations ran before the check against
// spec.connection_specification (prepare); here the transformations, then the validations
// on the result. The values change in memory only: the file is never rewritten with them.
// Values the rules move or derive are registered as secrets when their key is one.
func normalizeConfig(s *ioStreams, defPath string, def *manifest.Definition, vals *values.Values) error {
	n := def.ConfigNormalization
	if n == nil {
		return nil
	}
	if err := transform.TransformConfig(n, vals.Map); err != nil {
		return &invalidError{fmt.Errorf("%s: spec.config_normalization_rules: %w", defPath, err)}
	}
	s.redactor.Add(vals.Secrets(def.ConnectionSpec)...)
	if err := transform.ValidateConfig(n, vals.Map, values.CheckSchema); err != nil {
		return &invalidError{fmt.Errorf("%s: %w (spec.config_normalization_rules of %s)", vals.Name(), err, defPath)}
	}
	return nil
}
