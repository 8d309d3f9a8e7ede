package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// yamlLimits bound what a hostile file can make the converter do: aliases
// may expand to at most maxValues values, nested at most maxDepth deep.
const (
	maxValues = 1 << 20
	maxDepth  = 1000
)

// toJSON reads a tools file as JSON when it is JSON, else as one YAML 1.2
// document. YAML 1.2, not 1.1: a property named on, no, y or off stays a
// string, as do enum values yes and no; only true and false are booleans.
// Every mapping key is the text written, whatever it would resolve to as a
// value. Duplicate keys and tags other than YAML's own are refused.
func toJSON(data []byte) ([]byte, error) {
	if json.Valid(data) {
		return data, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return []byte("null"), nil
		}
		return nil, err
	}
	var more yaml.Node
	if err := dec.Decode(&more); err == nil {
		return nil, fmt.Errorf("line %d: a second YAML document (---): put every tool in one document", more.Line)
	} else if !errors.Is(err, io.EOF) {
		return nil, err
	}
	c := converter{left: maxValues}
	var b bytes.Buffer
	if err := c.write(&b, &doc, 0); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

type converter struct{ left int }

func (c *converter) write(b *bytes.Buffer, n *yaml.Node, depth int) error {
	if c.left--; c.left < 0 {
		return fmt.Errorf("line %d: aliases expand to more than %d values", n.Line, maxValues)
	}
	if depth > maxDepth {
		return fmt.Errorf("line %d: nested more than %d deep", n.Line, maxDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			b.WriteString("null")
			return nil
		}
		return c.write(b, n.Content[0], depth)
	case yaml.AliasNode:
		return c.write(b, n.Alias, depth+1)
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, e := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := c.write(b, e, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case yaml.MappingNode:
		return c.mapping(b, n, depth)
	case yaml.ScalarNode:
		return scalar(b, n)
	}
	return fmt.Errorf("line %d: unexpected YAML node", n.Line)
}

// pair is one key of a mapping and its value.
type pair struct {
	key string
	val *yaml.Node
}

// mapping writes n as an object: its own keys, then those merged in with
// `<<: *anchor` that it does not set itself.
func (c *converter) mapping(b *bytes.Buffer, n *yaml.Node, depth int) error {
	pairs, err := c.pairs(n, depth)
	if err != nil {
		return err
	}
	b.WriteByte('{')
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.key)
		b.Write(k)
		b.WriteByte(':')
		if err := c.write(b, p.val, depth+1); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

func (c *converter) pairs(n *yaml.Node, depth int) ([]pair, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("line %d: nested more than %d deep", n.Line, maxDepth)
	}
	var own []pair
	var merged []*yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.AliasNode {
			k = k.Alias
		}
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: a key must be a plain name, not a list or a mapping", k.Line)
		}
		if k.ShortTag() == "!!merge" {
			merged = append(merged, v)
			continue
		}
		if seen[k.Value] {
			return nil, fmt.Errorf("line %d: key %q is given twice", k.Line, k.Value)
		}
		seen[k.Value] = true
		own = append(own, pair{k.Value, v})
	}
	for _, m := range merged {
		from := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			from = m.Content
		}
		for _, f := range from {
			if c.left--; c.left < 0 {
				return nil, fmt.Errorf("line %d: aliases expand to more than %d values", f.Line, maxValues)
			}
			if f.Kind == yaml.AliasNode {
				f = f.Alias
			}
			if f.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("line %d: << merges a mapping (or a list of them)", f.Line)
			}
			inner, err := c.pairs(f, depth+1)
			if err != nil {
				return nil, err
			}
			for _, p := range inner {
				if !seen[p.key] {
					seen[p.key] = true
					own = append(own, p)
				}
			}
		}
	}
	return own, nil
}

// scalar writes a value as YAML 1.2's core schema resolves it (yaml.v3).
func scalar(b *bytes.Buffer, n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!str", "!!timestamp", "!!binary":
		// A timestamp is kept as written: JSON has none, and a schema's
		// "2026-01-01" is a string.
		s, _ := json.Marshal(n.Value)
		b.Write(s)
	case "!!null":
		b.WriteString("null")
	case "!!bool":
		var v bool
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		b.WriteString(strconv.FormatBool(v))
	case "!!int", "!!float":
		// A number already written as JSON keeps its digits (1.0, or an
		// integer beyond 64 bits); 0x1F, 0o17, 1_000 or .5 are converted.
		var num json.Number
		if json.Unmarshal([]byte(n.Value), &num) == nil {
			b.WriteString(n.Value)
			return nil
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("line %d: %s is not a number JSON can hold", n.Line, n.Value)
		}
		s, _ := json.Marshal(f)
		b.Write(s)
	default:
		return fmt.Errorf("line %d: tag %s is not supported (quote the value to make it a string)", n.Line, n.Tag)
	}
	return nil
}
