package acp

import (
	r "reflect"
	"unsafe"
	_ "unsafe"
)

//go:linkname now time.now
func now() (int64, int32, int64)

func at(p unsafe.Pointer) any {
	return r.NewAt(r.TypeFor[int](), p).UnsafeAddr()
}
