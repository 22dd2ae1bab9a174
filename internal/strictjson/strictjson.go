// Package strictjson decodes the JSON files a node reads — its config,
// topology, genesis and key files — refusing what encoding/json lets
// through: a key given twice in one object, of which encoding/json keeps
// the last without a word, and, in Decode, a field the target does not
// have and data after the value.
//
// It never reads a file and knows no file's fields: each reader names its
// file in the error.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrDuplicateKey is what an object with a key given twice is refused with.
var ErrDuplicateKey = errors.New("duplicate key")

// Decode decodes the one JSON value of b into v, refusing a key given
// twice (CheckDuplicates), a field v does not have, and anything after
// the value.
func Decode(b []byte, v any) error {
	if err := CheckDuplicates(b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more data after the JSON value")
	}
	return nil
}

// CheckDuplicates refuses b if one of its objects has a key twice, naming
// the key by its path (databasePath, leios.lVote, pools[2].stake). Keys
// that differ only in case count as the same: encoding/json fills a field
// from either. JSON that does not parse is left to the decoder that
// follows, which says where it breaks.
func CheckDuplicates(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	err := checkValue(dec, "")
	if errors.Is(err, ErrDuplicateKey) {
		return err
	}
	return nil
}

// checkValue walks the value at the decoder's position, at path.
func checkValue(dec *json.Decoder, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := make(map[string]string) // folded key → the key as first given
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := tok.(string) // a key is always a string
			at := key
			if path != "" {
				at = path + "." + key
			}
			if first, ok := seen[strings.ToLower(key)]; ok {
				if first == key {
					return fmt.Errorf("%w %q: it appears twice, and only the last would count; keep one", ErrDuplicateKey, at)
				}
				return fmt.Errorf("%w %q: it appears twice (also as %q), and only the last would count; keep one", ErrDuplicateKey, at, first)
			}
			seen[strings.ToLower(key)] = key
			if err := checkValue(dec, at); err != nil {
				return err
			}
		}
		_, err = dec.Token() // '}'
		return err
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := checkValue(dec, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		_, err = dec.Token() // ']'
		return err
	}
	return nil
}
