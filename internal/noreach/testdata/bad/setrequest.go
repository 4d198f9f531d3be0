// acp/conn.go's setRequest before the change: it wrote jsonrpc2 v0.2.3's
// unexported anyMessage.request through reflect and unsafe.
package acp

import (
	"fmt"
	"reflect"

	"github.com/sourcegraph/jsonrpc2"
)

func setRequest(v any, req *jsonrpc2.Request) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("acp: jsonrpc2 passed %T to ReadObject; this package supports the message layout of jsonrpc2 v0.2", v)
	}
	f, ok := rv.Type().Elem().FieldByName("request")
	if !ok || f.Type != reflect.TypeFor[*jsonrpc2.Request]() {
		return fmt.Errorf("acp: jsonrpc2's message %T has no request field; this package supports the message layout of jsonrpc2 v0.2", v)
	}
	*(**jsonrpc2.Request)(rv.Elem().FieldByIndex(f.Index).Addr().UnsafePointer()) = req
	return nil
}
