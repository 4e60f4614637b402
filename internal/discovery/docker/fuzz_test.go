package docker

import (
	"bufio"
	"bytes"
	"io"
	"testing"
)

// FuzzEventStream feeds arbitrary bytes to the event stream reader: it must end
// with an error (never a panic or a hang) and never hold more than one bounded line.
func FuzzEventStream(f *testing.F) {
	f.Add([]byte(`{"Type":"container","Action":"start","Actor":{"ID":"abc","Attributes":{"name":"x"}}}` + "\n"))
	f.Add([]byte("\n\n{\"status\":\"die\",\"id\":\"abc\"}\n{not json}\n"))
	f.Add([]byte(`{"Type":"container"`)) // cut mid-object
	f.Add(bytes.Repeat([]byte("x"), 70000))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &EventStream{body: io.NopCloser(nil), r: bufio.NewReaderSize(bytes.NewReader(data), 16<<10)}
		for i := 0; ; i++ {
			if _, err := s.Next(); err != nil {
				return
			}
			if i > len(data) {
				t.Fatal("more events than bytes")
			}
		}
	})
}

func TestEventLineIsBounded(t *testing.T) {
	long := append(bytes.Repeat([]byte("a"), maxEventBytes+10), '\n')
	s := &EventStream{body: io.NopCloser(nil), r: bufio.NewReaderSize(bytes.NewReader(long), 16<<10)}
	if _, err := s.Next(); err == nil || !bytes.Contains([]byte(err.Error()), []byte("longer than")) {
		t.Fatalf("an oversized event: %v", err)
	}
}
