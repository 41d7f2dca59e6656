package template

import (
	"fmt"
	"testing"
)

func TestKeysRead(t *testing.T) {
	tests := []struct {
		src  string
		want string
	}{
		{`{{ config['base_url'] }}`, `[{config base_url 10}]`},
		{`x{{ config.region }}/{{ config["a"]["b"] }}`, `[{config region 11} {config a 31}]`},
		{`{{ config.get('page_size', 20) }}`, `[]`},
		{`{{ config[name] }}{{ config[0] }}`, `[]`},
		{`{% for config in [1] %}{{ config.x }}{% endfor %}`, `[]`},
		{`{{ parameters['config'] }}`, `[]`},
		{`{{ (config.max_results or '200') | int }}`, `[{config max_results 11}]`},
		{`{% if config['flag'] %}{{ config['flag'] }}{% endif %}`, `[{config flag 13} {config flag 33}]`},
	}
	for _, tt := range tests {
		tp, err := Compile(tt.src, []string{"config", "parameters", "name"})
		if err != nil {
			t.Fatalf("%s: %v", tt.src, err)
		}
		got := tp.KeysRead("config")
		if s := fmt.Sprint(got); s != tt.want && !(len(got) == 0 && tt.want == "[]") {
			t.Errorf("%s: got %s, want %s", tt.src, s, tt.want)
		}
		for _, k := range got {
			if q := tt.src[k.Offset:]; q[0] != '\'' && q[0] != '"' && q[:len(k.Key)] != k.Key {
				t.Errorf("%s: offset %d is not at the key %q", tt.src, k.Offset, k.Key)
			}
		}
	}
}
