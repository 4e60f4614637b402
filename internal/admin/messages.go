package admin

import (
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"unicode/utf8"
)

// The reference's player routes beside list, send and kick: the count by server
// and mode, a message to one player, a broadcast; and GET /api/v1/proxy.

// MaxMessageLen bounds a chat message sent through the API (in characters):
// vanilla's chat takes 256 from a player; an operator's notice may be longer,
// never a wall.
const MaxMessageLen = 1024

// ErrNotIntercepted: the player is on a passthrough server, where the proxy only
// forwards his bytes and cannot write to him.
var ErrNotIntercepted = errors.New("the player is on a passthrough server: the proxy only forwards his stream and cannot write to him")

// PlayerCount answers GET /api/v1/players/count.
type PlayerCount struct {
	Total    int            `json:"total"`
	ByServer map[string]int `json:"by_server"`
	ByMode   map[string]int `json:"by_mode"`
}

// MessageRequest is the body of POST /api/v1/players/{name}/message and of
// POST /api/v1/players/broadcast (Server only there: one server's players).
type MessageRequest struct {
	Message string `json:"message"`
	Server  string `json:"server,omitempty"`
}

// MessageResult answers a message: who was told what.
type MessageResult struct {
	Player  Player `json:"player"`
	Message string `json:"message"`
}

// BroadcastResult answers a broadcast: how many players were told (players of
// passthrough servers cannot be).
type BroadcastResult struct {
	Sent    int    `json:"sent"`
	Message string `json:"message"`
}

// ProxyInfo answers GET /api/v1/proxy: what this proxy is and how it runs.
type ProxyInfo struct {
	Version       string   `json:"version"`
	Bind          string   `json:"bind"`
	UptimeSecs    float64  `json:"uptime_secs"`
	PlayersOnline int      `json:"players_online"`
	Servers       int      `json:"servers"`
	GoVersion     string   `json:"go_version"`
	Goroutines    int      `json:"goroutines"`
	HeapBytes     uint64   `json:"heap_bytes"`
	Features      []string `json:"features"`
}

// handlePlayer answers one player (the exact name first, then the only one
// in any case).
func (s *Server) handlePlayer(w http.ResponseWriter, r *http.Request) {
	name, ok := pathPlayer(w, r)
	if !ok {
		return
	}
	if p, found := s.lookupPlayer(w, name, ""); found {
		writeData(w, http.StatusOK, p)
	}
}

func (s *Server) handlePlayerCount(w http.ResponseWriter, r *http.Request) {
	c := PlayerCount{ByServer: map[string]int{}, ByMode: map[string]int{}}
	for _, p := range s.players("") {
		c.Total++
		c.ByServer[p.Server]++
		c.ByMode[p.ProxyMode]++
	}
	writeData(w, http.StatusOK, c)
}

// readMessage reads a message request, answering 400 itself.
func readMessage(w http.ResponseWriter, r *http.Request) (MessageRequest, bool) {
	req, err := decodeStrict[MessageRequest](http.MaxBytesReader(w, r.Body, maxBodyBytes), false)
	if err != nil {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST",
			fmt.Sprintf("body is not a message (%v); send one object: {\"message\":\"...\"}", err))
		return req, false
	}
	req.Message = strings.TrimSpace(req.Message)
	switch n := utf8.RuneCountInString(req.Message); {
	case n == 0:
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `say what to tell: {"message":"..."} (legacy § colours, or a JSON text component)`)
		return req, false
	case n > MaxMessageLen:
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", fmt.Sprintf("the message is %d characters; keep it to %d", n, MaxMessageLen))
		return req, false
	}
	return req, true
}

func (s *Server) handleMessagePlayer(w http.ResponseWriter, r *http.Request) {
	name, ok := pathPlayer(w, r)
	if !ok {
		return
	}
	req, ok := readMessage(w, r)
	if !ok {
		return
	}
	if req.Server != "" {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "a message to one player takes no server; to tell one server's players, POST /api/v1/players/broadcast")
		return
	}
	p, found := s.lookupPlayer(w, name, "")
	if !found {
		return
	}
	if err := s.opts.Runtime.MessagePlayer(p.Name, req.Message); err != nil {
		if errors.Is(err, ErrNotIntercepted) {
			writeError(w, http.StatusConflict, "CONFLICT", fmt.Sprintf("%s cannot be told: %v", p.Name, err))
			return
		}
		s.writePlayerError(w, p.Name, "", err)
		return
	}
	s.log.Info("admin action", "action", "player.message", "player", p.Name, "server", p.Server, "client_ip", clientIP(r))
	writeData(w, http.StatusOK, MessageResult{Player: p, Message: req.Message})
}

func (s *Server) handleBroadcast(w http.ResponseWriter, r *http.Request) {
	req, ok := readMessage(w, r)
	if !ok {
		return
	}
	if req.Server != "" && !s.serverExists(req.Server) {
		s.writeRuntimeError(w, req.Server, "", ErrUnknownServer)
		return
	}
	n := s.opts.Runtime.Broadcast(req.Message, req.Server)
	s.log.Info("admin action", "action", "player.broadcast", "server", req.Server, "sent", n, "client_ip", clientIP(r))
	writeData(w, http.StatusOK, BroadcastResult{Sent: n, Message: req.Message})
}

func (s *Server) handleProxy(w http.ResponseWriter, r *http.Request) {
	now := s.now()
	st := s.opts.Runtime.Stats(now)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	info := ProxyInfo{
		Version: st.Version, Bind: st.Bind, UptimeSecs: st.UptimeSecs, PlayersOnline: st.PlayersOnline,
		Servers: len(s.opts.Runtime.Servers(now)), GoVersion: runtime.Version(), Goroutines: runtime.NumGoroutine(),
		HeapBytes: ms.HeapInuse, Features: s.features(),
	}
	writeData(w, http.StatusOK, info)
}

// features names what this proxy runs beside routing, for dashboards.
func (s *Server) features() []string {
	out := []string{"events"}
	if s.opts.Bans != nil {
		out = append(out, "bans")
	}
	if s.opts.Fleet != nil {
		out = append(out, "fleet")
	}
	if s.opts.Permissions != nil {
		out = append(out, "permissions")
	}
	if s.opts.Accounts != nil && s.opts.Accounts() != nil {
		out = append(out, "auth_limbo")
	}
	if s.opts.Reload != nil {
		out = append(out, "reload")
	}
	if s.opts.Metrics != nil {
		out = append(out, "metrics")
	}
	return out
}
