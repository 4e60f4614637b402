package hookstest

import (
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust/internal/hooks"
)

func TestCheckOrder(t *testing.T) {
	const (
		pre    = hooks.KindPreLogin
		prof   = hooks.KindGameProfileRequest
		login  = hooks.KindLogin
		post   = hooks.KindPostLogin
		choose = hooks.KindChooseInitialServer
		spc    = hooks.KindServerPreConnect
		kick   = hooks.KindKickedFromServer
		conn   = hooks.KindServerConnected
		disc   = hooks.KindDisconnect
	)
	cases := []struct {
		name        string
		kinds       []hooks.Kind
		passthrough bool
		wantErr     string
	}{
		{"intercepted login", []hooks.Kind{pre, prof, login, post, choose, spc, conn, disc}, false, ""},
		{"passthrough login", []hooks.Kind{pre, login, post, choose, spc, conn, disc}, true, ""},
		{"denied at pre_login", []hooks.Kind{pre, disc}, true, ""},
		{"kicked then redirected", []hooks.Kind{pre, login, post, choose, spc, kick, spc, conn, disc}, true, ""},
		{"switch later", []hooks.Kind{pre, prof, login, post, choose, spc, conn, spc, conn, disc}, false, ""},
		{"no disconnect", []hooks.Kind{pre, login}, true, "last event is login"},
		{"disconnect twice", []hooks.Kind{pre, disc, disc}, true, "disconnect is not last"},
		{"login before pre_login", []hooks.Kind{login, pre, disc}, true, "first event is login"},
		{"profile on passthrough", []hooks.Kind{pre, prof, login, disc}, true, "passthrough server fired game_profile_request"},
		{"login twice", []hooks.Kind{pre, login, login, disc}, true, "login fired twice"},
		{"out of order", []hooks.Kind{pre, post, login, disc}, true, "login after post_login"},
		{"connected without pre_connect", []hooks.Kind{pre, login, post, choose, conn, disc}, true, "without a server_pre_connect"},
		{"choose after a connection", []hooks.Kind{pre, login, post, spc, conn, choose, disc}, true, "after a server_pre_connect"},
		{"nothing", nil, true, "no events"},
	}
	for _, c := range cases {
		err := CheckOrder(c.kinds, c.passthrough)
		if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%s: CheckOrder = %v, want %q", c.name, err, c.wantErr)
		}
	}
}
