package accounts

import (
	"context"
	"errors"
	"strings"
	"time"
)

// Account is one registered player.
type Account struct {
	// Name is the name as it was first registered; lookups ignore case.
	Name string `json:"name"`
	// Hash is the password's argon2id PHC string.
	Hash         string    `json:"hash"`
	RegisteredAt time.Time `json:"registered_at"`
	RegisteredIP string    `json:"registered_ip,omitempty"`
	LastLoginAt  time.Time `json:"last_login_at,omitzero"`
	LastLoginIP  string    `json:"last_login_ip,omitempty"`
}

// Key is the store key of a name: Minecraft names compare without case.
func Key(name string) string { return strings.ToLower(name) }

// Errors of a Store.
var (
	ErrNotFound = errors.New("no account with this name")
	ErrExists   = errors.New("an account with this name exists")
)

// Store keeps accounts and remembered sessions. Every write is durable when
// it returns (a crash right after loses nothing acknowledged).
type Store interface {
	Get(ctx context.Context, name string) (Account, error)
	// Create adds a; ErrExists when the name is taken (in any case).
	Create(ctx context.Context, a Account) error
	// Put replaces the account of a.Name; ErrNotFound when there is none.
	Put(ctx context.Context, a Account) error
	// Delete removes the account and its sessions; ErrNotFound when there is none.
	Delete(ctx context.Context, name string) error
	// List returns every account, sorted by key.
	List(ctx context.Context) ([]Account, error)

	// Remember lets name skip /login from ip until then.
	Remember(ctx context.Context, name, ip string, until time.Time) error
	// Remembered reports a session of name from ip still valid at now.
	Remembered(ctx context.Context, name, ip string, now time.Time) (bool, error)
	// Forget ends every session of name (a reset password, an unregister).
	Forget(ctx context.Context, name string) error

	Close() error
}
