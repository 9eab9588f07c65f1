package results

import (
	"fmt"
	"math"
	"reflect"
)

// nanPaths lists the fields of v holding a float64 NaN or ±Inf that JSON
// cannot encode (Num fields encode them as null and are not listed), by
// their Go path, for an encoding error that says where.
func nanPaths(v any) []string {
	var out []string
	var walk func(p string, x reflect.Value)
	walk = func(p string, x reflect.Value) {
		if len(out) >= 5 {
			return
		}
		switch x.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !x.IsNil() {
				walk(p, x.Elem())
			}
		case reflect.Struct:
			for i := 0; i < x.NumField(); i++ {
				if x.Type().Field(i).IsExported() {
					walk(p+"."+x.Type().Field(i).Name, x.Field(i))
				}
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < x.Len(); i++ {
				walk(fmt.Sprintf("%s[%d]", p, i), x.Index(i))
			}
		case reflect.Map:
			for _, k := range x.MapKeys() {
				walk(fmt.Sprintf("%s[%v]", p, k), x.MapIndex(k))
			}
		case reflect.Float64, reflect.Float32:
			if f := x.Float(); (math.IsNaN(f) || math.IsInf(f, 0)) && x.Type() != reflect.TypeOf(Num(0)) {
				out = append(out, p)
			}
		}
	}
	walk("", reflect.ValueOf(v))
	return out
}
