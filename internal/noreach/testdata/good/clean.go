// Reflect over this package's own exported fields is fine.
package good

import "reflect"

type T struct{ Request string }

func get(v any) string {
	f, _ := reflect.TypeOf(v).FieldByName("Request")
	name := "request"
	_, _ = reflect.TypeOf(v).FieldByName(name) // not a literal: not judged
	return f.Name + reflect.ValueOf(v).Field(0).String()
}

// NewAt of another package is not reflect's.
type other struct{}

func (other) NewAt() {}

func use() { other{}.NewAt() }
