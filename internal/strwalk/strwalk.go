// Package strwalk applies a function to every string a value holds: the
// one way mcpdrill rewrites a whole document (a study row masked, a page's
// text made safe) without listing its fields, so that a field added later
// is not missed.
package strwalk

import "reflect"

// Map replaces every string reachable from ptr (a non-nil pointer) with f
// of it: strings of any named type, through exported struct fields,
// pointers, interfaces, slices, arrays and map values. Unexported fields,
// map keys and byte slices (json.RawMessage among them) are left as they
// are; a pointer met twice is walked once.
func Map(ptr any, f func(string) string) {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	w := walker{f: f, seen: map[uintptr]bool{}}
	w.walk(v)
}

type walker struct {
	f    func(string) string
	seen map[uintptr]bool
}

func (w walker) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || w.seen[v.Pointer()] {
			return
		}
		w.seen[v.Pointer()] = true
		w.walk(v.Elem())
	case reflect.Interface:
		if v.IsNil() || !v.CanSet() {
			return
		}
		// What an interface holds cannot be set in place: walk a copy.
		c := reflect.New(v.Elem().Type()).Elem()
		c.Set(v.Elem())
		w.walk(c)
		v.Set(c)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				w.walk(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			w.walk(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		for it := v.MapRange(); it.Next(); {
			c := reflect.New(it.Value().Type()).Elem()
			c.Set(it.Value())
			w.walk(c)
			v.SetMapIndex(it.Key(), c)
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(w.f(v.String()))
		}
	}
}
