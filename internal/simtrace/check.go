package simtrace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// The JSON types of the format's fields.
const (
	jsonNumber = "number"
	jsonString = "string"
	jsonObject = "object"
	jsonArray  = "array"
	jsonNull   = "null"
)

// field is one field of an event type: the JSON types it may have, and
// whether it may be left out.
type field struct {
	types    []string
	optional bool
}

func req(types ...string) field { return field{types: types} }
func opt(types ...string) field { return field{types: types, optional: true} }

// format is trace.shared.d.ts's event types, field by field, for the
// kinds this node writes ("type" aside, which every message has), with
// what the format's readers require beyond it: the visualiser's schema
// (trace.ui.schema.json) a slot on every Sent and Received, leios-trace-hs
// (the trace verifier's parser) transactions on RBGenerated and
// EBGenerated, or it drops the line. The shared schema lets a message
// carry fields it does not name; this check does not, so that a field
// misspelt here is caught.
var format = map[string]map[string]field{
	"Slot": {"node": req(jsonString), "slot": req(jsonNumber)},
	"RBGenerated": {
		"id": req(jsonString), "slot": req(jsonNumber), "producer": req(jsonString), "size_bytes": req(jsonNumber),
		"tx_payload_bytes": req(jsonNumber), "parent": req(jsonObject, jsonNull), "endorsement": req(jsonObject, jsonNull),
		"endorsements": opt(jsonArray, jsonNull), "transactions": req(jsonArray),
	},
	"EBGenerated": {
		"id": req(jsonString), "slot": req(jsonNumber), "producer": req(jsonString), "size_bytes": req(jsonNumber),
		"pipeline": req(jsonNumber), "input_blocks": req(jsonArray), "endorser_blocks": req(jsonArray),
		"transactions": req(jsonArray),
	},
	"VTBundleGenerated": {
		"id": req(jsonString), "slot": req(jsonNumber), "producer": req(jsonString), "size_bytes": req(jsonNumber),
		"pipeline": req(jsonNumber), "votes": req(jsonObject),
	},
	"Sent": {
		"sender": req(jsonString), "recipient": req(jsonString), "msg_size_bytes": req(jsonNumber), "id": req(jsonString),
		"sending_s": opt(jsonNumber), "ids": opt(jsonArray), "slot": req(jsonNumber),
	},
	"Received": {
		"sender": opt(jsonString), "recipient": req(jsonString), "id": req(jsonString),
		"ids": opt(jsonArray), "slot": req(jsonNumber),
	},
	"Cpu": {"node": req(jsonString), "cpu_time_s": req(jsonNumber), "task_type": req(jsonString), "id": req(jsonString)},
}

// blockKinds are the format's block kinds, as Sent and Received types
// begin with them.
var blockKinds = []string{"IB", "EB", "VTBundle", "RB"}

// cpuTasks are the format's CPU task types.
var cpuTasks = []string{"ValIB", "ValEB", "ValRB", "ValIH", "ValEH", "ValRH", "ValVote", "GenIB", "GenEB", "GenVote", "GenRB", "ValTX"}

// Check reads a trace and returns the first line that is not an event of
// the shared format with its fields and their types, and how many lines it
// read.
func Check(r io.Reader) (lines int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		lines++
		if err := CheckLine(sc.Bytes()); err != nil {
			return lines, fmt.Errorf("line %d: %w", lines, err)
		}
	}
	return lines, sc.Err()
}

// CheckLine checks one line of a trace.
func CheckLine(b []byte) error {
	var l struct {
		Time    *float64                   `json:"time_s"`
		Message map[string]json.RawMessage `json:"message"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	if l.Time == nil || l.Message == nil {
		return fmt.Errorf("want {\"time_s\": number, \"message\": {…}}: %s", b)
	}
	var typ string
	if err := json.Unmarshal(l.Message["type"], &typ); err != nil {
		return fmt.Errorf("message type: %w", err)
	}
	fields, ok := format[formatType(typ)]
	if !ok {
		return fmt.Errorf("type %q is not one of the format's this node writes", typ)
	}
	for name, f := range fields {
		raw, ok := l.Message[name]
		if !ok {
			if !f.optional {
				return fmt.Errorf("%s: field %q missing", typ, name)
			}
			continue
		}
		if t := jsonType(raw); !slices.Contains(f.types, t) {
			return fmt.Errorf("%s: field %q is a %s, want %s", typ, name, t, strings.Join(f.types, " or "))
		}
	}
	for name := range l.Message {
		if _, ok := fields[name]; !ok && name != "type" {
			return fmt.Errorf("%s: field %q is not the format's (it has %v)", typ, name, slices.Sorted(maps.Keys(fields)))
		}
	}
	if typ == "Cpu" {
		var task string
		if err := json.Unmarshal(l.Message["task_type"], &task); err != nil || !slices.Contains(cpuTasks, task) {
			return fmt.Errorf("Cpu: task_type %s is not one of %v", l.Message["task_type"], cpuTasks)
		}
	}
	return nil
}

// formatType is the format's entry for a message type: XSent and
// XReceived share theirs whatever the block kind X.
func formatType(typ string) string {
	for _, suffix := range []string{"Sent", "Received"} {
		if kind, ok := strings.CutSuffix(typ, suffix); ok && slices.Contains(blockKinds, kind) {
			return suffix
		}
	}
	return typ
}

// jsonType is the JSON type of a raw value.
func jsonType(raw json.RawMessage) string {
	switch s := strings.TrimSpace(string(raw)); {
	case s == "null":
		return jsonNull
	case s == "true" || s == "false":
		return "boolean"
	case strings.HasPrefix(s, "{"):
		return jsonObject
	case strings.HasPrefix(s, "["):
		return jsonArray
	case strings.HasPrefix(s, `"`):
		return jsonString
	default:
		return jsonNumber
	}
}
