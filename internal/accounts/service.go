package accounts

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Rules are the password rules of [auth_limbo].
type Rules struct {
	MinLength, MaxLength int
	// Remember is how long a login from one address lets a reconnect from it
	// skip /login; 0 remembers nothing.
	Remember time.Duration
}

// Service is the password login: what the auth limbo's commands do.
type Service struct {
	Store  Store
	Hasher *Hasher
	Rules  Rules
	// Guard limits guesses per account and registrations per address; nil
	// limits nothing (tests).
	Guard *Guard
	// Now is the clock (sessions, registration times); nil means time.Now.
	Now func() time.Time
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Reply is what a command in the limbo tells the player.
type Reply int

const (
	ReplyNone Reply = iota
	// ReplyUsage: the command was typed wrong; Result.Usage is how.
	ReplyUsage
	ReplyUnknownCommand
	ReplyRegistered
	ReplyLoggedIn
	ReplyPasswordChanged
	ReplyWrongPassword
	ReplyPasswordsDiffer
	ReplyPasswordTooShort
	ReplyPasswordTooLong
	ReplyNotRegistered
	ReplyAlreadyRegistered
	// ReplyUnavailable: the store failed; the player should try again later.
	ReplyUnavailable
	// ReplyCoolingDown: the account had too many wrong passwords and this
	// address tried it in the window already; Result.Wait says how long.
	ReplyCoolingDown
	// ReplyTooManyRegistrations: this address registered its allowance.
	ReplyTooManyRegistrations
)

// Result is the outcome of one command typed in the auth limbo.
type Result struct {
	Reply Reply
	// Usage is the synopsis of the command for ReplyUsage ("/login <password>").
	Usage string
	// Authenticated: the player proved the name is theirs and may go on.
	Authenticated bool
	// Failed: a wrong password; it counts toward the attempts and the rate limit.
	Failed bool
	// Err is the store's failure behind ReplyUnavailable, for the log.
	Err error
	// Wait is how long a ReplyCoolingDown lasts.
	Wait time.Duration
}

// Commands of the auth limbo; the aliases are AuthMe's.
var (
	registerLabels = []string{"register", "reg"}
	loginLabels    = []string{"login", "l", "log"}
	changeLabels   = []string{"changepassword", "changepass", "cp"}
)

// Labels are the command names the limbo answers, for a command tree.
func Labels() (register, login, change []string) {
	return registerLabels, loginLabels, changeLabels
}

// Registered reports whether name has an account.
func (s *Service) Registered(ctx context.Context, name string) (bool, error) {
	_, err := s.Store.Get(ctx, name)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNotFound):
		return false, nil
	}
	return false, err
}

// Remembered reports whether name logged in from ip within Rules.Remember.
func (s *Service) Remembered(ctx context.Context, name, ip string) (bool, error) {
	if s.Rules.Remember <= 0 {
		return false, nil
	}
	return s.Store.Remembered(ctx, name, ip, s.now())
}

// Handle runs one command line (without its slash) the player name typed
// from ip while held for login.
func (s *Service) Handle(ctx context.Context, name, ip, line string) Result {
	label, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	args := strings.Fields(rest)
	label = strings.ToLower(label)
	switch {
	case slices.Contains(registerLabels, label):
		if len(args) != 2 {
			return Result{Reply: ReplyUsage, Usage: "/register <password> <password>"}
		}
		if args[0] != args[1] {
			return Result{Reply: ReplyPasswordsDiffer}
		}
		return s.register(ctx, name, ip, args[0])
	case slices.Contains(loginLabels, label):
		if len(args) != 1 {
			return Result{Reply: ReplyUsage, Usage: "/login <password>"}
		}
		return s.login(ctx, name, ip, args[0])
	case slices.Contains(changeLabels, label):
		if len(args) != 2 {
			return Result{Reply: ReplyUsage, Usage: "/changepassword <old password> <new password>"}
		}
		return s.ChangePassword(ctx, name, ip, args[0], args[1])
	}
	return Result{Reply: ReplyUnknownCommand}
}

// checkPassword applies the length rules (in characters, as players count).
func (s *Service) checkPassword(pw string) Reply {
	n := utf8.RuneCountInString(pw)
	switch {
	case n < s.Rules.MinLength:
		return ReplyPasswordTooShort
	case s.Rules.MaxLength > 0 && n > s.Rules.MaxLength:
		return ReplyPasswordTooLong
	}
	return ReplyNone
}

func unavailable(err error) Result { return Result{Reply: ReplyUnavailable, Err: err} }

func (s *Service) register(ctx context.Context, name, ip, pw string) Result {
	if r := s.checkPassword(pw); r != ReplyNone {
		return Result{Reply: r}
	}
	if ok, err := s.Registered(ctx, name); err != nil {
		return unavailable(err)
	} else if ok {
		return Result{Reply: ReplyAlreadyRegistered}
	}
	switch err := s.Guard.register(ctx, ip); {
	case errors.Is(err, ErrTooManyRegistrations):
		return Result{Reply: ReplyTooManyRegistrations}
	case err != nil:
		return unavailable(err)
	}
	hash, err := s.Hasher.Hash(ctx, pw)
	if err != nil {
		return unavailable(err)
	}
	now := s.now()
	err = s.Store.Create(ctx, Account{Name: name, Hash: hash, RegisteredAt: now, RegisteredIP: ip, LastLoginAt: now, LastLoginIP: ip})
	if errors.Is(err, ErrExists) { // registered meanwhile, on another proxy
		return Result{Reply: ReplyAlreadyRegistered}
	}
	if err != nil {
		return unavailable(err)
	}
	s.remember(ctx, name, ip, now)
	return Result{Reply: ReplyRegistered, Authenticated: true}
}

// check verifies pw against name's account, from ip, under the account's
// guard (one check at a time, the cool-down after too many wrong passwords);
// the account is returned for an update (a stale hash upgraded, the last
// login).
func (s *Service) check(ctx context.Context, name, ip, pw string) (Account, Result) {
	done, err := s.Guard.check(ctx, name, ip)
	if cd, ok := errors.AsType[*CoolingDown](err); ok {
		return Account{}, Result{Reply: ReplyCoolingDown, Wait: cd.Left}
	}
	if err != nil {
		return Account{}, unavailable(err)
	}
	a, r := s.verify(ctx, name, pw)
	done(r.Failed)
	return a, r
}

func (s *Service) verify(ctx context.Context, name, pw string) (Account, Result) {
	a, err := s.Store.Get(ctx, name)
	if errors.Is(err, ErrNotFound) {
		return a, Result{Reply: ReplyNotRegistered}
	}
	if err != nil {
		return a, unavailable(err)
	}
	ok, stale, err := s.Hasher.Verify(ctx, pw, a.Hash)
	if err != nil {
		return a, unavailable(err)
	}
	if !ok {
		return a, Result{Reply: ReplyWrongPassword, Failed: true}
	}
	if stale { // the operator raised the cost: rehash while the password is known
		if h, err := s.Hasher.Hash(ctx, pw); err == nil {
			a.Hash = h
		}
	}
	return a, Result{}
}

func (s *Service) login(ctx context.Context, name, ip, pw string) Result {
	a, r := s.check(ctx, name, ip, pw)
	if r.Reply != ReplyNone {
		return r
	}
	now := s.now()
	a.LastLoginAt, a.LastLoginIP = now, ip
	if err := s.Store.Put(ctx, a); err != nil && !errors.Is(err, ErrNotFound) {
		return unavailable(err)
	}
	s.remember(ctx, name, ip, now)
	return Result{Reply: ReplyLoggedIn, Authenticated: true}
}

// ChangePassword replaces name's password after checking the old one; the
// player counts as logged in. Other addresses' sessions end.
func (s *Service) ChangePassword(ctx context.Context, name, ip, old, pw string) Result {
	if r := s.checkPassword(pw); r != ReplyNone {
		return Result{Reply: r}
	}
	a, r := s.check(ctx, name, ip, old)
	if r.Reply != ReplyNone {
		return r
	}
	hash, err := s.Hasher.Hash(ctx, pw)
	if err != nil {
		return unavailable(err)
	}
	now := s.now()
	a.Hash, a.LastLoginAt, a.LastLoginIP = hash, now, ip
	if err := s.Store.Put(ctx, a); err != nil {
		return unavailable(err)
	}
	_ = s.Store.Forget(ctx, name)
	s.remember(ctx, name, ip, now)
	return Result{Reply: ReplyPasswordChanged, Authenticated: true}
}

// Unregister deletes name's account after checking its password, typed from ip.
func (s *Service) Unregister(ctx context.Context, name, ip, pw string) Result {
	if _, r := s.check(ctx, name, ip, pw); r.Reply != ReplyNone {
		return r
	}
	if err := s.Store.Delete(ctx, name); err != nil && !errors.Is(err, ErrNotFound) {
		return unavailable(err)
	}
	return Result{Reply: ReplyNone}
}

// ResetPassword sets name's password without the old one (an operator's
// reset) and ends its sessions.
func (s *Service) ResetPassword(ctx context.Context, name, pw string) error {
	if r := s.checkPassword(pw); r != ReplyNone {
		return errors.New(ruleText(r))
	}
	a, err := s.Store.Get(ctx, name)
	if err != nil {
		return err
	}
	if a.Hash, err = s.Hasher.Hash(ctx, pw); err != nil {
		return err
	}
	if err := s.Store.Put(ctx, a); err != nil {
		return err
	}
	return s.Store.Forget(ctx, name)
}

func ruleText(r Reply) string {
	if r == ReplyPasswordTooShort {
		return "the password is shorter than min_password_length"
	}
	return "the password is longer than max_password_length"
}

// remember records the session; a failure only costs the player a /login
// next time, so it is not the command's failure.
func (s *Service) remember(ctx context.Context, name, ip string, now time.Time) {
	if s.Rules.Remember > 0 {
		_ = s.Store.Remember(ctx, name, ip, now.Add(s.Rules.Remember))
	}
}
