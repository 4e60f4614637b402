package tui

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestWriteOnce(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteOnce(&buf, fixture(), t0.Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Contains(out, "\x1b") {
		t.Fatal("--once output has escape sequences")
	}
	golden(t, "once.golden", out)
}

func TestFetch(t *testing.T) {
	fc := &fakeClient{snap: fixture()}
	snap, err := Fetch(context.Background(), fc, t0)
	if err != nil || len(snap.Servers) != 3 || len(snap.Backends) != 3 || !snap.At.Equal(t0) {
		t.Fatalf("Fetch = %+v, %v", snap, err)
	}
	fc.err = errors.New("connection refused")
	if _, err := Fetch(context.Background(), fc, t0); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err = %v", err)
	}
}

func TestNewRendererHonoursNoColor(t *testing.T) {
	var buf bytes.Buffer
	r := NewRenderer(&buf, true)
	if got := r.NewStyle().Bold(true).Render("x"); got != "x" {
		t.Fatalf("NO_COLOR render = %q", got)
	}
}
