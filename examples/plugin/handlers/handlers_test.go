package handlers

import (
	"context"
	"testing"

	"github.com/infrarust-go/infrarust"
)

func TestBlocklistAndFallback(t *testing.T) {
	r := infrarust.NewRegistry()
	Register(r, Config{Blocked: []string{"Griefer"}, Fallback: "limbo"})
	ctx := context.Background()

	cases := []struct {
		name  string
		event infrarust.Event
		want  infrarust.Result
	}{
		{"blocked player", &infrarust.Login{Profile: infrarust.Profile{Name: "griefer"}},
			infrarust.Result{Action: infrarust.Deny, Reason: "§cYou are not allowed on this network", By: "blocklist"}},
		{"other player", &infrarust.Login{Profile: infrarust.Profile{Name: "alice"}}, infrarust.Result{}},
		{"server down", &infrarust.KickedFromServer{Server: "survival", Cause: infrarust.CauseUnreachable},
			infrarust.Result{Action: infrarust.Redirect, Server: "limbo", By: "fallback"}},
		{"fallback down", &infrarust.KickedFromServer{Server: "limbo", Cause: infrarust.CauseUnreachable}, infrarust.Result{}},
		{"kicked by the server", &infrarust.KickedFromServer{Server: "survival", Cause: infrarust.CauseKicked}, infrarust.Result{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got infrarust.Result
			switch e := c.event.(type) {
			case *infrarust.Login:
				got = infrarust.Fire(ctx, r, e)
			case *infrarust.KickedFromServer:
				got = infrarust.Fire(ctx, r, e)
			}
			if got != c.want {
				t.Errorf("result = %+v, want %+v", got, c.want)
			}
		})
	}
}
