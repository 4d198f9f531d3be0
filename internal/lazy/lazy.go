// Package lazy holds package-level values built on their first use.
//
// sync.OnceValue does the same, but a package-level
//
//	var re = sync.OnceValue(func() *regexp.Regexp { ... })
//
// is a function call: the package gets an init function that runs at
// every start of the process, and the code page it sits on is mapped
// (with the kernel's fault-around, the 64 KiB around it) whether or not
// the value is ever used. A [Value] is a composite literal holding a
// function that captures nothing: the linker lays it out as static data
// and nothing runs before the first [Value.Get].
package lazy

import "sync"

// Value is a value of type T built by New on the first Get. Declare it as
// a package-level variable with only New set, and do not copy it.
type Value[T any] struct {
	// New builds the value; it is called once, by the first Get.
	New func() T

	once     sync.Once
	v        T
	panicked bool
	p        any
}

// Get returns the value, building it on the first call. It is safe for
// concurrent use. If New panics, every call of Get panics with the same
// value, as with sync.OnceValue.
func (l *Value[T]) Get() T {
	l.once.Do(l.build)
	if l.panicked {
		panic(l.p)
	}
	return l.v
}

func (l *Value[T]) build() {
	defer func() {
		if l.panicked {
			l.p = recover()
		}
	}()
	l.panicked = true
	l.v = l.New()
	l.panicked = false
}
