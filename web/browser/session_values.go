package browser

import (
	"encoding/json"
	"fmt"

	"github.com/gorilla/securecookie"
)

// sessionValues serializes a session's values for its cookie as JSON: an
// object of strings, and of lists of strings (the flash messages), the
// only values this kit keeps. gorilla's default, gob, builds its type
// information anew for every cookie: sealing and opening a cookie cost
// about twice as much with it (issue 44: a new shopper's pet page seals
// one). A cookie sealed before, in gob, still opens, so no shopper loses a
// cart to the change; it is written back as JSON when next saved.
type sessionValues struct{}

// Serialize writes a session's values (map[interface{}]interface{}) as a
// JSON object; any other value, as gob would.
func (sessionValues) Serialize(src interface{}) ([]byte, error) {
	values, ok := src.(map[interface{}]interface{})
	if !ok {
		return securecookie.GobEncoder{}.Serialize(src)
	}
	out := make(map[string]any, len(values))
	for k, v := range values {
		key, ok := k.(string)
		if !ok {
			return nil, fmt.Errorf("session key of type %T", k)
		}
		switch v := v.(type) {
		case string:
			out[key] = v
		case []interface{}:
			list := make([]string, len(v))
			for i, item := range v {
				s, ok := item.(string)
				if !ok {
					return nil, fmt.Errorf("session value %q holds a %T", key, item)
				}
				list[i] = s
			}
			out[key] = list
		default:
			return nil, fmt.Errorf("session value %q of type %T", key, v)
		}
	}
	return json.Marshal(out)
}

// Deserialize reads what Serialize wrote, or gob (a cookie sealed before
// the change: gob's first byte, a message length, is never '{').
func (sessionValues) Deserialize(src []byte, dst interface{}) error {
	values, ok := dst.(*map[interface{}]interface{})
	if !ok || len(src) == 0 || src[0] != '{' {
		return securecookie.GobEncoder{}.Deserialize(src, dst)
	}
	var in map[string]any
	if err := json.Unmarshal(src, &in); err != nil {
		return err
	}
	if *values == nil {
		*values = make(map[interface{}]interface{}, len(in))
	}
	for k, v := range in {
		switch v := v.(type) {
		case string:
			(*values)[k] = v
		case []any:
			list := make([]interface{}, len(v))
			for i, item := range v {
				s, ok := item.(string)
				if !ok {
					return fmt.Errorf("session value %q holds a %T", k, item)
				}
				list[i] = s
			}
			(*values)[k] = list
		default:
			return fmt.Errorf("session value %q of type %T", k, v)
		}
	}
	return nil
}
