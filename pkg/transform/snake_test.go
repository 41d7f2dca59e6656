package transform

import "testing"

// TestKeysToSnakeCaseAsTheCDK runs keys through snakeCase; want is what the CDK 7.28.2's
// KeysToSnakeCaseTransformation().process_key gives (anyascii, then its tokens). Keys whose
// characters the NFKD stand-in for anyascii cannot spell are refused with an error rather
// than given another name than the CDK's: refused marks them. Every code point, in the key
// "x" + c + "Y", was checked this way against process_key: 1,998 are spelled as the CDK
// does, the others refused, none spelled differently.
func TestKeysToSnakeCaseAsTheCDK(t *testing.T) {
	tests := []struct {
		key, want string
		refused   bool
	}{
		{"camelCase", "camel_case", false},
		{"PascalCase", "pascal_case", false},
		{"HTTPCode", "httpcode", false},
		{"getHTTPResponseCode", "get_httpresponse_code", false},
		{"userID", "user_id", false},
		{"IDs", "ids", false},
		{"ID", "id", false},
		{"id", "id", false},
		{"snake_case", "snake_case", false},
		{"kebab-case", "kebab_case", false},
		{"dot.case", "dot_case", false},
		{"space case", "space_case", false},
		{"  spaced  ", "_spaced_", false},
		{"__dunder__", "_dunder_", false},
		{"_leading", "_leading", false},
		{"trailing_", "trailing_", false},
		{"a1b2", "a_1_b_2", false},
		{"abc123def", "abc_123_def", false},
		{"v2API", "v_2_api", false},
		{"123abc", "_123_abc", false},
		{"1", "_1", false},
		{"12_34", "_12_34", false},
		{"2fa_enabled", "_2_fa_enabled", false},
		{"Address1Line2", "address_1_line_2", false},
		{"already_snake_case", "already_snake_case", false},
		{"MixedUP_and-Down.case", "mixed_up_and_down_case", false},
		{"ALLCAPS", "allcaps", false},
		{"A", "a", false},
		{"aB", "a_b", false},
		{"Ab", "ab", false},
		{"a", "a", false},
		{"", "", false},
		{"_", "", false},
		{"---", "", false},
		{"$price", "_price", false},
		{"price$", "price_", false},
		{"a$b", "a_b", false},
		{"foo__bar", "foo_bar", false},
		{"foo  bar", "foo_bar", false},
		{"x-Y-z", "x_y_z", false},
		{"Email Address (Work)", "email_address_work_", false},
		{"café", "cafe", false},
		{"Crème Brûlée", "creme_brulee", false},
		{"naïve", "naive", false},
		{"Ångström", "angstrom", false},
		{"ñandú", "nandu", false},
		{"straße", "strasse", true},
		{"Æsir", "aesir", true},
		{"œuvre", "oeuvre", true},
		{"ﬁle", "file", false},
		{"Ⅻ", "xii", false},
		{"½", "_1_2", true},
		{"²nd", "_2_nd", false},
		{"µs", "us", true},
		{"日本語", "ri_ben_yu", true},
		{"キー", "ki", true},
		{"Привет", "privet", true},
		{"Ελληνικά", "ellinika", true},
		{"emoji🙂", "emoji_slight_smile_", true},
		{"🙂", "_slight_smile_", true},
		{"tab\tkey", "tab_key", false},
		{"a b", "a_b", false},
		{"ID№", "idno", false},
		{"ŁódźCity", "lodz_city", true},
		{"Ñame", "name", false},
		{"İstanbul", "istanbul", false},
		{"ǅemal", "dzemal", false},
		{"x²", "x_2", false},
		// anyascii spells these marks and spacing forms, which NFKD would drop.
		{"ab\u0363Cd", "aba_cd", true},
		{"\u1ffe", "h", true},
		{"\ufe70", "an", true},
		{"a\u0301b", "ab", false},
	}
	for _, tt := range tests {
		got, err := snakeCase(tt.key)
		switch {
		case tt.refused && err == nil:
			t.Errorf("snakeCase(%q) = %q; want it refused (the CDK gives %q)", tt.key, got, tt.want)
		case !tt.refused && (err != nil || got != tt.want):
			t.Errorf("snakeCase(%q) = %q, %v; the CDK gives %q", tt.key, got, err, tt.want)
		}
	}
}
