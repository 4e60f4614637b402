// Package accounts is the password login of offline networks: the accounts
// players register in the auth limbo (names case-insensitive, passwords
// hashed with argon2id), the sessions that let a reconnect skip /login, and
// the stores that keep them (bbolt under the data dir, Redis with a fleet).
package accounts

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/crypto/argon2"
)

// Params are argon2id's cost parameters.
type Params struct {
	// MemoryKiB is the memory each hash fills, in KiB.
	MemoryKiB uint32
	// Iterations is the number of passes over it.
	Iterations uint32
	// Parallelism is the number of lanes (threads) of one hash.
	Parallelism uint8
}

// DefaultParams are OWASP's Password Storage Cheat Sheet's first argon2id
// choice (m=19 MiB, t=2, p=1): about 20–40 ms of one core per hash.
var DefaultParams = Params{MemoryKiB: 19 * 1024, Iterations: 2, Parallelism: 1}

// Check refuses parameters argon2 cannot use or that give no protection.
func (p Params) Check() error {
	switch {
	case p.Parallelism < 1:
		return errors.New("parallelism must be at least 1")
	case p.Iterations < 1:
		return errors.New("iterations must be at least 1")
	case p.MemoryKiB < 8*uint32(p.Parallelism):
		return fmt.Errorf("memory_kib must be at least 8 × parallelism (%d)", 8*uint32(p.Parallelism))
	case p.MemoryKiB > 4<<20:
		return errors.New("memory_kib above 4 GiB per hash would exhaust the proxy's memory")
	}
	return nil
}

const (
	saltLen = 16
	keyLen  = 32
)

// Hasher hashes and checks passwords with a bound on how many run at once:
// each fills MemoryKiB, so a burst costs at most Concurrency × MemoryKiB and
// the rest wait their turn. Checks of existing passwords (a /login) go before
// new hashes (a /register) waiting for a slot, and at most maxWaitingHashes
// new hashes per slot wait at all: a registration flood cannot hold a login
// up longer than the hashes already running.
type Hasher struct {
	Params Params

	mu      sync.Mutex
	slots   int             // how many may run at once
	free    int             // slots not running now
	checks  []chan struct{} // checks waiting, oldest first; a slot is given by closing
	hashes  []chan struct{} // new hashes waiting, oldest first
	waitCap int             // new hashes that may wait
}

// maxWaitingHashes is how many new hashes per slot may wait for one.
const maxWaitingHashes = 100

// ErrBusy: too many new passwords are waiting to be hashed; try again later.
var ErrBusy = errors.New("accounts: too many passwords are being hashed; try again in a moment")

// NewHasher makes a Hasher running at most concurrency hashes at once
// (GOMAXPROCS when 0).
func NewHasher(p Params, concurrency int) *Hasher {
	if concurrency <= 0 {
		concurrency = runtime.GOMAXPROCS(0)
	}
	return &Hasher{Params: p, slots: concurrency, free: concurrency, waitCap: concurrency * maxWaitingHashes}
}

// Concurrency is how many hashes may run at once.
func (h *Hasher) Concurrency() int { return h.slots }

// acquire takes a slot: a check (check true) before any new hash waiting.
func (h *Hasher) acquire(ctx context.Context, check bool) error {
	h.mu.Lock()
	if h.free > 0 && (check || len(h.checks) == 0) {
		h.free--
		h.mu.Unlock()
		return nil
	}
	queue := &h.hashes
	if check {
		queue = &h.checks
	} else if len(h.hashes) >= h.waitCap {
		h.mu.Unlock()
		return ErrBusy
	}
	ch := make(chan struct{})
	*queue = append(*queue, ch)
	h.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		h.mu.Lock()
		if i := slices.Index(*queue, ch); i >= 0 {
			*queue = slices.Delete(*queue, i, i+1)
			h.mu.Unlock()
			return ctx.Err()
		}
		h.mu.Unlock()
		h.release() // given meanwhile: pass it on
		return ctx.Err()
	}
}

// release gives the slot to the oldest waiting check, else the oldest new
// hash, else frees it.
func (h *Hasher) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, q := range []*[]chan struct{}{&h.checks, &h.hashes} {
		if len(*q) > 0 {
			ch := (*q)[0]
			*q = (*q)[1:]
			close(ch)
			return
		}
	}
	h.free++
}

// Hash returns the PHC string of password
// ($argon2id$v=19$m=19456,t=2,p=1$salt$hash), the format argon2's reference
// tool and most libraries read.
func (h *Hasher) Hash(ctx context.Context, password string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	if err := h.acquire(ctx, false); err != nil {
		return "", err
	}
	defer h.release()
	p := h.Params
	key := argon2.IDKey([]byte(password), salt, p.Iterations, p.MemoryKiB, p.Parallelism, keyLen)
	return encodePHC(p, salt, key), nil
}

// Verify reports whether password matches encoded. stale says the hash was
// made with other parameters than h's, so the caller may store a new one now
// that it knows the password.
func (h *Hasher) Verify(ctx context.Context, password, encoded string) (ok, stale bool, err error) {
	p, salt, want, err := decodePHC(encoded)
	if err != nil {
		return false, false, err
	}
	if err := h.acquire(ctx, true); err != nil {
		return false, false, err
	}
	defer h.release()
	got := argon2.IDKey([]byte(password), salt, p.Iterations, p.MemoryKiB, p.Parallelism, uint32(len(want)))
	ok = subtle.ConstantTimeCompare(got, want) == 1
	return ok, p != h.Params, nil
}

var b64 = base64.RawStdEncoding

func encodePHC(p Params, salt, key []byte) string {
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.MemoryKiB, p.Iterations, p.Parallelism, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// ErrBadHash marks a stored hash this package cannot read.
var ErrBadHash = errors.New("accounts: not an argon2id hash")

func decodePHC(s string) (p Params, salt, key []byte, err error) {
	parts := strings.Split(s, "$")
	// "", "argon2id", "v=19", "m=..,t=..,p=..", salt, hash
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != "v="+strconv.Itoa(argon2.Version) {
		return p, nil, nil, ErrBadHash
	}
	for _, kv := range strings.Split(parts[3], ",") {
		k, v, _ := strings.Cut(kv, "=")
		n, perr := strconv.ParseUint(v, 10, 32)
		if perr != nil {
			return p, nil, nil, ErrBadHash
		}
		switch k {
		case "m":
			p.MemoryKiB = uint32(n)
		case "t":
			p.Iterations = uint32(n)
		case "p":
			if n > 255 {
				return p, nil, nil, ErrBadHash
			}
			p.Parallelism = uint8(n)
		default:
			return p, nil, nil, ErrBadHash
		}
	}
	if p.Check() != nil {
		return p, nil, nil, ErrBadHash
	}
	if salt, err = b64.DecodeString(parts[4]); err != nil || len(salt) < 8 {
		return p, nil, nil, ErrBadHash
	}
	if key, err = b64.DecodeString(parts[5]); err != nil || len(key) < 16 || len(key) > 64 {
		return p, nil, nil, ErrBadHash
	}
	return p, salt, key, nil
}
