package deploy

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// diffObjects lists, one a line, every object only one side has and every
// field whose value differs, as "Kind/name: path: kustomize X, helm Y".
func diffObjects(kust, helm map[string]map[string]any) []string {
	var out []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range []map[string]map[string]any{kust, helm} {
			for k := range m {
				if !seen[k] {
					seen[k] = true
					if !yield(k) {
						return
					}
				}
			}
		}
	}) {
		a, inK := kust[k]
		b, inH := helm[k]
		switch {
		case !inH:
			out = append(out, k+": kustomize renders it, helm does not")
		case !inK:
			out = append(out, k+": helm renders it, kustomize does not")
		default:
			out = append(out, diffValue(k+": ", "", a, b)...)
		}
	}
	return out
}

func diffValue(prefix, path string, a, b any) []string {
	if reflect.DeepEqual(a, b) {
		return nil
	}
	am, aIsMap := a.(map[string]any)
	bm, bIsMap := b.(map[string]any)
	if aIsMap && bIsMap {
		var out []string
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range keys {
				if !yield(k) {
					return
				}
			}
		}) {
			av, aok := am[k]
			bv, bok := bm[k]
			p := strings.TrimPrefix(path+"."+k, ".")
			switch {
			case !aok:
				out = append(out, fmt.Sprintf("%s%s: kustomize (none), helm %s", prefix, p, show(bv)))
			case !bok:
				out = append(out, fmt.Sprintf("%s%s: kustomize %s, helm (none)", prefix, p, show(av)))
			default:
				out = append(out, diffValue(prefix, p, av, bv)...)
			}
		}
		return out
	}
	al, aIsList := a.([]any)
	bl, bIsList := b.([]any)
	if aIsList && bIsList && len(al) == len(bl) {
		var out []string
		for i := range al {
			out = append(out, diffValue(prefix, fmt.Sprintf("%s[%d]", path, i), al[i], bl[i])...)
		}
		return out
	}
	return []string{fmt.Sprintf("%s%s: kustomize %s, helm %s", prefix, path, show(a), show(b))}
}

func show(v any) string {
	s := fmt.Sprintf("%#v", v)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
