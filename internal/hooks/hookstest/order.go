package hookstest

import (
	"fmt"

	"github.com/infrarust-go/infrarust/internal/hooks"
)

// CheckOrder checks one connection's events against the ordering guarantees of
// docs/events.md:
//
//   - PreLogin comes first and Disconnect last, each exactly once;
//   - GameProfileRequest, Login and PostLogin come at most once, in that order, between them;
//   - ChooseInitialServer comes at most once, after PostLogin, before any ServerPreConnect;
//   - every ServerConnected and KickedFromServer follows a ServerPreConnect.
//
// passthrough says the connection was on a forwarding-mode server, which never
// fires GameProfileRequest.
func CheckOrder(kinds []hooks.Kind, passthrough bool) error {
	if len(kinds) == 0 {
		return fmt.Errorf("no events")
	}
	if kinds[0] != hooks.KindPreLogin {
		return fmt.Errorf("first event is %s, want pre_login: %v", kinds[0], kinds)
	}
	if kinds[len(kinds)-1] != hooks.KindDisconnect {
		return fmt.Errorf("last event is %s, want disconnect: %v", kinds[len(kinds)-1], kinds)
	}
	count := map[hooks.Kind]int{}
	last := hooks.Kind(0) // the last of the once-only login events
	preConnects := 0
	for i, k := range kinds {
		count[k]++
		switch k {
		case hooks.KindPreLogin, hooks.KindGameProfileRequest, hooks.KindLogin, hooks.KindPostLogin, hooks.KindChooseInitialServer:
			if count[k] > 1 {
				return fmt.Errorf("%s fired twice: %v", k, kinds)
			}
			if k < last {
				return fmt.Errorf("%s after %s: %v", k, last, kinds)
			}
			if preConnects > 0 {
				return fmt.Errorf("%s after a server_pre_connect: %v", k, kinds)
			}
			if k == hooks.KindChooseInitialServer && count[hooks.KindPostLogin] == 0 {
				return fmt.Errorf("choose_initial_server before post_login: %v", kinds)
			}
			last = k
		case hooks.KindServerPreConnect:
			preConnects++
		case hooks.KindServerConnected, hooks.KindKickedFromServer:
			if preConnects == 0 {
				return fmt.Errorf("%s without a server_pre_connect before it: %v", k, kinds)
			}
		case hooks.KindDisconnect:
			if i != len(kinds)-1 {
				return fmt.Errorf("disconnect is not last: %v", kinds)
			}
		}
	}
	if passthrough && count[hooks.KindGameProfileRequest] > 0 {
		return fmt.Errorf("a passthrough server fired game_profile_request: %v", kinds)
	}
	return nil
}
