package cmd

// Flag values from the environment and the settings file. The design (also in the root
// command's --help): the command line wins, then CONNECTOR_<FLAG>, then the section of the
// settings file named after the command, then the file's top level. A top-level key applies
// to every command that has that flag; a key no command has is an error.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"gopkg.in/yaml.v3"

	"connector/pkg/yamlguard"
)

// settingsFile is a settings file read: its top-level flag values and its sections, keys
// in lower case (viper reads keys without case).
type settingsFile struct {
	path     string
	top      map[string]any
	sections map[string]map[string]any
}

// notSettable are flags a settings file or the environment cannot set.
var notSettable = map[string]bool{"help": true, "version": true, "settings": true}

// loadSettings fills the flags of c that the command line left unset from CONNECTOR_*
// variables and the settings file. Definitions and testing values are not read here.
func loadSettings(c *cobra.Command, env *Env) error {
	file, err := readSettings(c, env)
	if err != nil {
		return err
	}
	var firstErr error
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Changed || firstErr != nil || notSettable[f.Name] {
			return
		}
		name := "CONNECTOR_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if val, ok := env.lookup(name); ok {
			if err := setFlag(f, []string{val}, false); err != nil {
				firstErr = flagError(f, val, err, name)
			}
			return
		}
		if file == nil {
			return
		}
		if val, ok := file.sections[c.Name()][f.Name]; ok {
			firstErr = file.apply(f, val, c.Name()+"."+f.Name, nil)
			return
		}
		if val, ok := file.top[f.Name]; ok {
			firstErr = file.apply(f, val, f.Name, c)
		}
	})
	return firstErr
}

// apply sets flag f from the settings file value val, written at key. For a top-level
// key, c is the command running: a value its flag refuses is reported with the sections it
// could move to.
func (s *settingsFile) apply(f *pflag.Flag, val any, key string, c *cobra.Command) error {
	source := key + " in " + s.path
	texts, ok := settingTexts(val)
	_, isSlice := f.Value.(pflag.SliceValue)
	if !ok || len(texts) != 1 && !isSlice {
		return usagef("--%s must be a single value, not %s (from %s)", f.Name, describeSetting(val), source)
	}
	err := setFlag(f, texts, true)
	if err == nil {
		return nil
	}
	ferr := flagError(f, texts[0], err, source)
	if c == nil {
		return ferr
	}
	var takers []string
	for _, other := range c.Root().Commands() {
		if other == c {
			continue
		}
		if of := other.Flags().Lookup(f.Name); of != nil && accepts(of, texts[0]) {
			takers = append(takers, fmt.Sprintf("%q", other.Name()+":"))
		}
	}
	if len(takers) == 0 {
		return ferr
	}
	return usagef("%v; a top-level setting applies to every command with that flag: move it under %s, the section of the command it is meant for",
		ferr, strings.Join(takers, " or "))
}

// setFlag gives a flag its value; a repeatable flag takes the whole list (replace says the
// list replaces what it holds).
func setFlag(f *pflag.Flag, texts []string, replace bool) error {
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		if replace {
			return sv.Replace(texts)
		}
		return sv.Append(texts[0])
	}
	return f.Value.Set(texts[0])
}

// settingTexts writes a settings value as flag text: a scalar as one text, a list of
// scalars as one text each. A mapping, or a list holding one, is not a flag value.
func settingTexts(val any) ([]string, bool) {
	switch x := val.(type) {
	case map[string]any:
		return nil, false
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			t, ok := settingTexts(e)
			if !ok || len(t) != 1 {
				return nil, false
			}
			out = append(out, t[0])
		}
		return out, true
	case nil:
		return []string{""}, true
	}
	return []string{fmt.Sprint(val)}, true
}

func describeSetting(val any) string {
	switch val.(type) {
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%q", fmt.Sprint(val))
}

// The limits of a settings file: a few flag values, so small ones.
const (
	maxSettingsSize  = 1 << 20
	maxSettingsNodes = 100_000
	maxSettingsDepth = 50
)

// readSettings reads the settings file of --settings or CONNECTOR_SETTINGS (nil when there
// is none) and checks every key against the flags of the commands, so that a misspelt
// key is reported whatever command runs.
func readSettings(c *cobra.Command, env *Env) (*settingsFile, error) {
	path, _ := c.Flags().GetString("settings")
	from := ""
	if path == "" {
		path, _ = env.lookup("CONNECTOR_SETTINGS")
		from = " (from CONNECTOR_SETTINGS)"
	}
	if path == "" {
		return nil, nil
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".json", ".toml":
	default:
		return nil, usagef("settings file %s%s: name it .yaml, .yml, .json or .toml, after its format", path, from)
	}
	// Read here, within a limit, rather than by viper: a device or a huge file ends at once,
	// and a YAML alias bomb is refused before viper expands it.
	data, err := yamlguard.ReadFile(path, maxSettingsSize)
	var pe *fs.PathError
	var tl *yamlguard.TooLargeError
	switch {
	case errors.As(err, &pe):
		return nil, usagef("cannot read the settings file%s: %s", from, pathError(pe))
	case errors.As(err, &tl):
		return nil, usagef("settings file %s%s: %v (a limit of connector)", path, from, err)
	case err != nil:
		return nil, usagef("cannot read the settings file %s%s: %v", path, from, err)
	}
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	if ext == "yaml" || ext == "yml" {
		var doc yaml.Node
		if yaml.Unmarshal(data, &doc) == nil {
			if err := yamlguard.Check(&doc, maxSettingsNodes, maxSettingsDepth, nil); err != nil {
				return nil, usagef("settings file %s%s: %v (a limit of connector)", path, from, err)
			}
		}
	}
	v := viper.New()
	v.SetConfigType(ext)
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return nil, usagef("settings file %s%s: %v", path, from, err)
	}
	s := &settingsFile{path: path, top: map[string]any{}, sections: map[string]map[string]any{}}
	root := c.Root()
	commands := map[string]*cobra.Command{}
	for _, name := range commandNames(root) {
		sub, _, _ := root.Find([]string{name})
		commands[name] = sub
	}
	// Every flag of any command may be a top-level key.
	known := map[string]bool{}
	for _, sub := range commands {
		for _, name := range flagNames(sub) {
			known[name] = true
		}
	}
	all := v.AllSettings()
	for _, key := range slices.Sorted(maps.Keys(all)) {
		val := all[key]
		if sub, ok := commands[key]; ok {
			section, ok := val.(map[string]any)
			if !ok {
				return nil, usagef("%s: %q is a section for the %s command and must hold flag names and values, not %s", path, key, key, describeSetting(val))
			}
			names := flagNames(sub)
			for _, fk := range slices.Sorted(maps.Keys(section)) {
				if !slices.Contains(names, fk) {
					return nil, unknownSetting(path, key+"."+fk, fmt.Sprintf("%s has no flag --%s", key, fk), fk, names)
				}
			}
			s.sections[key] = section
			continue
		}
		if known[key] {
			s.top[key] = val
			continue
		}
		candidates := append(slices.Sorted(maps.Keys(known)), slices.Sorted(maps.Keys(commands))...)
		return nil, unknownSetting(path, key, "a setting is a flag name, or a section named after a command ("+strings.Join(commandNames(root), ", ")+")", key, candidates)
	}
	return s, nil
}

// unknownSetting is the error for a key no flag has, with the nearest flag name when one
// is close.
func unknownSetting(path, key, why, name string, candidates []string) error {
	if near := nearest(name, candidates); near != "" {
		return usagef("%s: unknown setting %q (did you mean %q?)", path, key, near)
	}
	return usagef("%s: unknown setting %q: %s", path, key, why)
}

// flagNames lists the flags a settings key may name for command c: its own and the
// persistent ones of the root.
func flagNames(c *cobra.Command) []string {
	var names []string
	add := func(f *pflag.Flag) {
		if !notSettable[f.Name] && !slices.Contains(names, f.Name) {
			names = append(names, f.Name)
		}
	}
	c.Flags().VisitAll(add)
	c.Root().PersistentFlags().VisitAll(add)
	slices.Sort(names)
	return names
}
