package fleet

import (
	"fmt"
	"os"
	"strings"

	"github.com/infrarust-go/infrarust/internal/config"
)

// maxURLFileBytes bounds a "file:" URL file: a URL is a line, not a document.
const maxURLFileBytes = 4 << 10

// ResolveRedisURL turns [fleet] redis into the URL to dial: a URL as written, the
// value of "env:VAR", or the first line of "file:PATH". getenv is os.Getenv in
// serve and a map in tests.
func ResolveRedisURL(v string, getenv func(string) string) (string, error) {
	v = strings.TrimSpace(v)
	var url string
	switch {
	case strings.HasPrefix(v, "env:"):
		name := strings.TrimSpace(strings.TrimPrefix(v, "env:"))
		url = strings.TrimSpace(getenv(name))
		if url == "" {
			return "", fmt.Errorf("[fleet] redis = %q: the environment variable %s is empty or not set; set it to the Redis URL (redis://...) in the environment serve runs in", v, name)
		}
	case strings.HasPrefix(v, "file:"):
		path := strings.TrimSpace(strings.TrimPrefix(v, "file:"))
		f, err := os.Open(path)
		if err != nil {
			return "", fmt.Errorf("[fleet] redis = %q: %w (create the file with the Redis URL on its first line)", v, err)
		}
		defer f.Close()
		buf := make([]byte, maxURLFileBytes+1)
		n, _ := f.Read(buf)
		if n > maxURLFileBytes {
			return "", fmt.Errorf("[fleet] redis = %q: the file is over %d bytes; it should hold one URL", v, maxURLFileBytes)
		}
		url, _, _ = strings.Cut(strings.TrimSpace(string(buf[:n])), "\n")
		url = strings.TrimSpace(url)
		if url == "" {
			return "", fmt.Errorf("[fleet] redis = %q: the file is empty; put the Redis URL (redis://...) on its first line", v)
		}
	default:
		url = v
	}
	if err := config.CheckRedisURL(url); err != nil {
		return "", fmt.Errorf("[fleet] redis: %w", err)
	}
	return url, nil
}
