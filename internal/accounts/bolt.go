package accounts

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// FileName is the accounts database in the data dir.
const FileName = "accounts.db"

// bbolt rather than SQLite: pure Go (no cgo, the static image stays
// static), one file, and each Update is a transaction fsynced before it
// returns, which is the crash safety registrations need, at one small
// dependency instead of a SQL engine. Writes go through Batch: concurrent
// ones (a burst of registrations) share one transaction and one fsync, each
// still durable when it returns (docs/benchmarks.md).
var (
	bucketAccounts = []byte("accounts")
	bucketSessions = []byte("sessions")
)

// Bolt is the Store of a single proxy: <data_dir>/accounts.db.
type Bolt struct {
	db *bolt.DB
}

// OpenBolt opens (or creates) the accounts database in dataDir. Only one
// process may hold it: a second one (a proxy already running on the same
// data dir) gets a clear error after a short wait, not a hang.
func OpenBolt(dataDir string) (*Bolt, error) {
	path := filepath.Join(dataDir, FileName)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("accounts database %s is in use by another process (a running proxy?): use the admin API (infrarust auth ...) against it", path)
	}
	if err != nil {
		return nil, fmt.Errorf("accounts database %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketAccounts, bucketSessions} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("accounts database %s: %w", path, err)
	}
	return &Bolt{db: db}, nil
}

// Close closes the database.
func (b *Bolt) Close() error { return b.db.Close() }

func (b *Bolt) Get(_ context.Context, name string) (Account, error) {
	var a Account
	err := b.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketAccounts).Get([]byte(Key(name)))
		if v == nil {
			return ErrNotFound
		}
		return json.Unmarshal(v, &a)
	})
	return a, err
}

func (b *Bolt) Create(_ context.Context, a Account) error { return b.write(a, false) }

func (b *Bolt) Put(_ context.Context, a Account) error { return b.write(a, true) }

// write stores a as a new account (replace false: ErrExists if there is one)
// or in place of the one there (replace true: ErrNotFound if there is none).
func (b *Bolt) write(a Account, replace bool) error {
	v, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return b.db.Batch(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketAccounts)
		k := []byte(Key(a.Name))
		switch there := bk.Get(k) != nil; {
		case there && !replace:
			return ErrExists
		case !there && replace:
			return ErrNotFound
		}
		return bk.Put(k, v)
	})
}

func (b *Bolt) Delete(_ context.Context, name string) error {
	return b.db.Batch(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketAccounts)
		k := []byte(Key(name))
		if bk.Get(k) == nil {
			return ErrNotFound
		}
		if err := bk.Delete(k); err != nil {
			return err
		}
		return forget(tx, name)
	})
}

func (b *Bolt) List(_ context.Context) ([]Account, error) {
	var out []Account
	err := b.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAccounts).ForEach(func(_, v []byte) error {
			var a Account
			if err := json.Unmarshal(v, &a); err != nil {
				return err
			}
			out = append(out, a)
			return nil
		})
	})
	return out, err
}

// sessionKey is name, a zero byte, ip: the sessions of a name are one range.
func sessionKey(name, ip string) []byte {
	return append(append([]byte(Key(name)), 0), ip...)
}

func (b *Bolt) Remember(_ context.Context, name, ip string, until time.Time) error {
	v := binary.BigEndian.AppendUint64(nil, uint64(until.UnixNano()))
	return b.db.Batch(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSessions).Put(sessionKey(name, ip), v)
	})
}

func (b *Bolt) Remembered(_ context.Context, name, ip string, now time.Time) (bool, error) {
	ok := false
	err := b.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketSessions).Get(sessionKey(name, ip))
		ok = len(v) == 8 && int64(binary.BigEndian.Uint64(v)) > now.UnixNano()
		return nil
	})
	return ok, err
}

func (b *Bolt) Forget(_ context.Context, name string) error {
	return b.db.Batch(func(tx *bolt.Tx) error { return forget(tx, name) })
}

func forget(tx *bolt.Tx, name string) error {
	prefix := sessionKey(name, "")
	c := tx.Bucket(bucketSessions).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}

// Sweep drops the sessions that ended before now; the proxy runs it now and
// then so addresses seen once do not stay forever.
func (b *Bolt) Sweep(now time.Time) (removed int, err error) {
	err = b.db.Update(func(tx *bolt.Tx) error {
		var dead [][]byte
		err := tx.Bucket(bucketSessions).ForEach(func(k, v []byte) error {
			if len(v) != 8 || int64(binary.BigEndian.Uint64(v)) <= now.UnixNano() {
				dead = append(dead, bytes.Clone(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range dead {
			if err := tx.Bucket(bucketSessions).Delete(k); err != nil {
				return err
			}
		}
		removed = len(dead)
		return nil
	})
	return removed, err
}
