package forwarding

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// SecretFilePerm is the mode a created secret file gets: readable by the proxy's user only.
const SecretFilePerm = 0o600

// maxSecretFile bounds what is read from a secret file; a secret is a line,
// so anything bigger is the wrong file.
const maxSecretFile = 64 << 10

// ErrEmptySecret marks a secret file that exists but holds only whitespace:
// forwarding with an empty secret would sign nothing, so it is refused.
var ErrEmptySecret = errors.New("forwarding: the secret file is empty")

// LoadOrCreateSecret returns the trimmed secret in path. When the file does
// not exist it is created (with its directory) holding a new random
// alphanumeric secret, mode SecretFilePerm, and created is true so the caller
// can tell the operator to copy it to the backends.
func LoadOrCreateSecret(path string) (secret []byte, created bool, err error) {
	if path == "" {
		return nil, false, errors.New("forwarding: no secret file configured; set [forwarding] secret_file")
	}
	secret, err = readSecret(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return secret, false, err
	}
	secret, err = createSecret(path)
	if errors.Is(err, fs.ErrExist) { // another process created it meanwhile
		secret, err = readSecret(path)
		return secret, false, err
	}
	return secret, err == nil, err
}

// ReadSecret returns the trimmed secret in path, never creating it (a reload
// reads a rotated secret; a file gone is an error, not a new secret).
func ReadSecret(path string) ([]byte, error) { return readSecret(path) }

func readSecret(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("forwarding: read the secret file: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("forwarding: secret file %s is a directory; point [forwarding] secret_file at a file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return nil, fmt.Errorf("forwarding: read the secret file: %w", err)
	}
	if len(b) > maxSecretFile {
		return nil, fmt.Errorf("forwarding: secret file %s is over %d KiB; it should hold one line, the secret", path, maxSecretFile>>10)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return nil, fmt.Errorf("%w: %s; write the secret your backends use into it (Paper: proxies.velocity.secret in config/paper-global.yml), or delete the file to have a new one generated", ErrEmptySecret, path)
	}
	return []byte(s), nil
}

func createSecret(path string) ([]byte, error) {
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("forwarding: create the secret file's directory: %w", err)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, SecretFilePerm)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		return nil, fmt.Errorf("forwarding: create the secret file: %w", err)
	}
	// 26 base32 characters (A-Z, 2-7): 130 random bits that paste into any
	// YAML or TOML backend config without quoting.
	secret := rand.Text()
	_, werr := f.WriteString(secret)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = os.Remove(path)
		return nil, fmt.Errorf("forwarding: write the secret file: %w", werr)
	}
	return []byte(secret), nil
}

// CheckSecretFile tells, without changing anything, whether the proxy will be
// able to start with path as its secret file: created is true when it does not
// exist yet and can be created; an error says why neither reading nor
// creating it would work (what `config check` reports before `serve` fails).
func CheckSecretFile(path string) (created bool, err error) {
	if path == "" {
		return false, errors.New("forwarding: no secret file configured; set [forwarding] secret_file")
	}
	if _, err := readSecret(path); !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	dir := filepath.Dir(path)
	for {
		st, err := os.Stat(dir)
		if err == nil {
			if !st.IsDir() {
				return false, fmt.Errorf("forwarding: cannot create the secret file %s: %s is not a directory", path, dir)
			}
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false, fmt.Errorf("forwarding: cannot create the secret file %s: %w", path, err)
		}
		dir = parent
	}
	probe, err := os.CreateTemp(dir, ".infrarust-check-*")
	if err != nil {
		return false, fmt.Errorf("forwarding: cannot create the secret file %s: %w", path, err)
	}
	probe.Close()
	_ = os.Remove(probe.Name())
	return true, nil
}
