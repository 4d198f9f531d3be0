package lazy

import (
	"sync"
	"testing"
)

var counted = Value[int]{New: func() int { calls++; return 42 }}

var calls int

func TestGetBuildsOnce(t *testing.T) {
	if calls != 0 {
		t.Fatalf("New ran %d times before the first Get", calls)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if v := counted.Get(); v != 42 {
				t.Errorf("Get = %d, want 42", v)
			}
		})
	}
	wg.Wait()
	if calls != 1 {
		t.Fatalf("New ran %d times, want 1", calls)
	}
}

func TestGetRepeatsPanic(t *testing.T) {
	v := &Value[string]{New: func() string { panic("boom") }}
	for i := range 2 {
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					t.Errorf("call %d: recovered %v, want boom", i, r)
				}
			}()
			v.Get()
			t.Errorf("call %d: Get returned", i)
		}()
	}
}
