package deadline

import (
	"errors"
	"testing"
	"time"
)

func TestDeadline(t *testing.T) {
	late := errors.New("late")
	d := New(-time.Second, late)
	if err := d.Now(); err != late {
		t.Fatalf("passed deadline: Now = %v", err)
	}
	var got error
	for range 256 {
		if err := d.Check(); err != nil {
			got = err
		}
	}
	if got != late {
		t.Fatalf("passed deadline: 256 Checks gave %v", got)
	}
	d.Reset(time.Hour)
	for range 1024 {
		if err := d.Check(); err != nil {
			t.Fatalf("after Reset: %v", err)
		}
	}
	if err := d.Now(); err != nil {
		t.Fatalf("after Reset: Now = %v", err)
	}
}
