package strictjson

import (
	"errors"
	"testing"
)

// TestDecode: a key given twice, at any depth, is refused by its path;
// keys that differ only in case fill the same field and are the same key;
// the same key in two objects is not a duplicate; a field the target does
// not have, trailing data and broken JSON are refused as encoding/json
// says.
func TestDecode(t *testing.T) {
	type leios struct {
		LVote int `json:"lVote"`
	}
	type pool struct {
		Name  string `json:"name"`
		Stake uint64 `json:"stake"`
	}
	type file struct {
		DatabasePath string            `json:"databasePath"`
		Leios        leios             `json:"leios"`
		Pools        []pool            `json:"pools"`
		Funds        map[string]uint64 `json:"funds"`
	}
	for _, tt := range []struct {
		name, json, want string
	}{
		{"sound", `{"databasePath": "db", "leios": {"lVote": 4}, "pools": [{"name": "a"}, {"name": "b"}]}`, ""},
		{"a setting twice", `{"databasePath": "db", "databasePath": "other"}`,
			`duplicate key "databasePath": it appears twice, and only the last would count; keep one`},
		{"in a section", `{"leios": {"lVote": 4, "lVote": 5}}`,
			`duplicate key "leios.lVote": it appears twice, and only the last would count; keep one`},
		{"in a list", `{"pools": [{"name": "a"}, {"name": "b", "stake": 1, "stake": 2}]}`,
			`duplicate key "pools[1].stake": it appears twice, and only the last would count; keep one`},
		{"in a map", `{"funds": {"ab": 1, "cd": 2, "ab": 3}}`,
			`duplicate key "funds.ab": it appears twice, and only the last would count; keep one`},
		{"in another case", `{"databasePath": "db", "DatabasePath": "other"}`,
			`duplicate key "DatabasePath": it appears twice (also as "databasePath"), and only the last would count; keep one`},
		{"a section twice", `{"leios": {"lVote": 4}, "leios": {}}`,
			`duplicate key "leios": it appears twice, and only the last would count; keep one`},
		{"unknown field", `{"databasePth": "db"}`, `json: unknown field "databasePth"`},
		{"trailing data", `{"databasePath": "db"} {}`, "more data after the JSON value"},
		{"broken", `{"databasePath": "db"`, "unexpected EOF"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var f file
			err := Decode([]byte(tt.json), &f)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Errorf("got %v, want %s", err, tt.want)
			}
			if dup := errors.Is(err, ErrDuplicateKey); dup != (err != nil && len(tt.want) > 13 && tt.want[:13] == "duplicate key") {
				t.Errorf("errors.Is(%v, ErrDuplicateKey) = %v", err, dup)
			}
		})
	}
}
