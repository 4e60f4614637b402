// Package dockertest is a fake Docker Engine API on a unix socket, for the tests
// of label discovery, the docker server manager and the composition root. It
// serves the calls the proxy makes (list, inspect, events, start, stop, unpause,
// ping) from an in-memory set of containers, and can go away and come back on the
// same socket like a restarted daemon.
package dockertest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Container is one fake container.
type Container struct {
	ID       string
	Name     string
	Labels   map[string]string
	State    string            // running, exited, paused, created
	Networks map[string]string // network name -> IP
	ExitCode int
	// Ports are published ports: container port -> host port.
	Ports map[int]int
}

// Call is one request the daemon served, for assertions.
type Call struct {
	Method, Path, Query string
}

// Daemon is the fake Engine API.
type Daemon struct {
	dir  string
	Path string // the unix socket

	mu         sync.Mutex
	containers map[string]*Container
	streams    map[chan event]bool
	calls      []Call
	srv        *http.Server
	// StopDelay is how long a stop takes (the container keeps running meanwhile).
	stopDelay time.Duration
	// refuse answers every call with this status (403 from a socket proxy, 500).
	refuse int
	nextID int
}

type event struct {
	Type, Action string
	ID           string
	Attributes   map[string]string
}

// Start serves a fake daemon on a new unix socket in a short temporary folder
// (socket paths are limited to about 100 bytes). Close removes it.
func Start() (*Daemon, error) {
	dir, err := os.MkdirTemp("", "dk")
	if err != nil {
		return nil, err
	}
	d := &Daemon{dir: dir, Path: filepath.Join(dir, "docker.sock"), containers: map[string]*Container{}, streams: map[chan event]bool{}}
	if err := d.Up(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return d, nil
}

// Endpoint is the daemon's address for [docker] endpoint.
func (d *Daemon) Endpoint() string { return "unix://" + d.Path }

// Up (re)starts serving on the socket after Down.
func (d *Daemon) Up() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.srv != nil {
		return nil
	}
	os.Remove(d.Path)
	ln, err := net.Listen("unix", d.Path)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_ping", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("OK")) })
	mux.HandleFunc("GET /containers/json", d.list)
	mux.HandleFunc("GET /containers/{id}/json", d.inspect)
	mux.HandleFunc("POST /containers/{id}/start", d.start)
	mux.HandleFunc("POST /containers/{id}/stop", d.stop)
	mux.HandleFunc("POST /containers/{id}/unpause", d.unpause)
	mux.HandleFunc("GET /events", d.events)
	d.srv = &http.Server{Handler: d.record(mux), ReadHeaderTimeout: 5 * time.Second}
	srv := d.srv
	go func() { _ = srv.Serve(ln) }()
	return nil
}

// Down stops serving and cuts every open connection, event streams included, as
// a daemon that exits or restarts does; the containers keep their state.
func (d *Daemon) Down() {
	d.mu.Lock()
	srv := d.srv
	d.srv = nil
	for ch := range d.streams {
		close(ch)
		delete(d.streams, ch)
	}
	d.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// Close stops the daemon and removes its socket.
func (d *Daemon) Close() {
	d.Down()
	os.RemoveAll(d.dir)
}

// Refuse makes every call answer status (0 restores normal answers).
func (d *Daemon) Refuse(status int) {
	d.mu.Lock()
	d.refuse = status
	d.mu.Unlock()
}

// SetStopDelay makes POST /stop take this long.
func (d *Daemon) SetStopDelay(t time.Duration) {
	d.mu.Lock()
	d.stopDelay = t
	d.mu.Unlock()
}

// Calls returns the requests served so far.
func (d *Daemon) Calls() []Call {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Call(nil), d.calls...)
}

// Count is how many served requests had this method and path.
func (d *Daemon) Count(method, path string) int {
	n := 0
	for _, c := range d.Calls() {
		if c.Method == method && c.Path == path {
			n++
		}
	}
	return n
}

// Add creates a container (running unless State says otherwise) and, when it
// runs, sends its start event.
func (d *Daemon) Add(c Container) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c.State == "" {
		c.State = "running"
	}
	if c.ID == "" {
		d.nextID++
		c.ID = fmt.Sprintf("%064x", d.nextID)
	}
	cc := c
	d.containers[c.ID] = &cc
	if c.State == "running" {
		d.emit("start", &cc)
	}
}

// SetState changes a container's state and sends the matching event ("running"
// start, "exited" die, "paused" pause); quiet skips the event, as if it were lost.
func (d *Daemon) SetState(nameOrID, state string, quiet bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.find(nameOrID)
	if c == nil {
		return errors.New("no such container " + nameOrID)
	}
	prev := c.State
	c.State = state
	if quiet {
		return nil
	}
	switch {
	case state == "running" && prev == "paused":
		d.emit("unpause", c)
	case state == "running":
		d.emit("start", c)
	case state == "exited":
		d.emit("die", c)
	case state == "paused":
		d.emit("pause", c)
	}
	return nil
}

// Announce sends action's event for a container without changing its state: a
// real daemon sends die a moment before its list stops showing the container
// running.
func (d *Daemon) Announce(nameOrID, action string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.find(nameOrID)
	if c == nil {
		return errors.New("no such container " + nameOrID)
	}
	d.emit(action, c)
	return nil
}

// Exit stops a running container by itself with code (a crash when not 0), and
// sends die.
func (d *Daemon) Exit(nameOrID string, code int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.find(nameOrID)
	if c == nil {
		return errors.New("no such container " + nameOrID)
	}
	c.State, c.ExitCode = "exited", code
	d.emit("die", c)
	return nil
}

// Remove deletes a container and sends destroy.
func (d *Daemon) Remove(nameOrID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c := d.find(nameOrID); c != nil {
		delete(d.containers, c.ID)
		d.emit("destroy", c)
	}
}

// State is a container's current state ("" when it does not exist).
func (d *Daemon) State(nameOrID string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c := d.find(nameOrID); c != nil {
		return c.State
	}
	return ""
}

// find looks a container up by ID, ID prefix or name; d.mu is held.
func (d *Daemon) find(ref string) *Container {
	ref = strings.TrimPrefix(ref, "/")
	for _, c := range d.containers {
		if c.ID == ref || c.Name == ref || (len(ref) >= 12 && strings.HasPrefix(c.ID, ref)) {
			return c
		}
	}
	return nil
}

// emit sends an event to every open stream; d.mu is held.
func (d *Daemon) emit(action string, c *Container) {
	attrs := map[string]string{"name": c.Name}
	for k, v := range c.Labels {
		attrs[k] = v
	}
	for ch := range d.streams {
		select {
		case ch <- event{Type: "container", Action: action, ID: c.ID, Attributes: attrs}:
		default: // a stuck reader loses events, as with a real daemon's buffer
		}
	}
}

func (d *Daemon) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		d.calls = append(d.calls, Call{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery})
		refuse := d.refuse
		d.mu.Unlock()
		if refuse != 0 {
			writeErr(w, refuse, "refused by the test")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeErr(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

// labelFilter reads the "label" values of the filters argument: "key" or "key=value".
func labelFilter(r *http.Request) ([]string, error) {
	raw := r.URL.Query().Get("filters")
	if raw == "" {
		return nil, nil
	}
	var f map[string][]string
	if err := json.Unmarshal([]byte(raw), &f); err != nil {
		return nil, err
	}
	return f["label"], nil
}

func matches(c *Container, labels []string) bool {
	for _, l := range labels {
		k, v, hasV := strings.Cut(l, "=")
		got, ok := c.Labels[k]
		if !ok || hasV && got != v {
			return false
		}
	}
	return true
}

func (d *Daemon) list(w http.ResponseWriter, r *http.Request) {
	labels, err := labelFilter(r)
	if err != nil {
		writeErr(w, http.StatusBadRequest, "invalid filters: "+err.Error())
		return
	}
	all, _ := strconv.ParseBool(r.URL.Query().Get("all"))
	d.mu.Lock()
	type network struct {
		IPAddress string
	}
	type port struct {
		IP          string
		PrivatePort int
		PublicPort  int
		Type        string
	}
	type entry struct {
		Id              string
		Names           []string
		Labels          map[string]string
		State           string
		Ports           []port
		NetworkSettings struct{ Networks map[string]network }
	}
	var out []entry
	for _, c := range d.containers {
		if (!all && c.State != "running") || !matches(c, labels) {
			continue
		}
		e := entry{Id: c.ID, Names: []string{"/" + c.Name}, Labels: c.Labels, State: c.State}
		e.NetworkSettings.Networks = map[string]network{}
		for n, ip := range c.Networks {
			e.NetworkSettings.Networks[n] = network{IPAddress: ip}
		}
		for in, out := range c.Ports {
			e.Ports = append(e.Ports, port{IP: "0.0.0.0", PrivatePort: in, PublicPort: out, Type: "tcp"})
		}
		out = append(out, e)
	}
	d.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Id < out[j].Id })
	if out == nil {
		out = []entry{}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func (d *Daemon) inspect(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	c := d.find(r.PathValue("id"))
	var body map[string]any
	if c != nil {
		body = map[string]any{
			"Id": c.ID, "Name": "/" + c.Name,
			"State": map[string]any{
				"Status": c.State, "Running": c.State == "running", "Paused": c.State == "paused",
				"ExitCode": c.ExitCode,
			},
			"Config": map[string]any{"Labels": c.Labels},
		}
	}
	d.mu.Unlock()
	if c == nil {
		writeErr(w, http.StatusNotFound, "No such container: "+r.PathValue("id"))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

func (d *Daemon) start(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.find(r.PathValue("id"))
	switch {
	case c == nil:
		writeErr(w, http.StatusNotFound, "No such container: "+r.PathValue("id"))
	case c.State == "running":
		w.WriteHeader(http.StatusNotModified)
	case c.State == "paused":
		writeErr(w, http.StatusConflict, "cannot start a paused container, try unpause instead")
	default:
		c.State, c.ExitCode = "running", 0
		d.emit("start", c)
		w.WriteHeader(http.StatusNoContent)
	}
}

func (d *Daemon) stop(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	c := d.find(r.PathValue("id"))
	delay := d.stopDelay
	d.mu.Unlock()
	if c == nil {
		writeErr(w, http.StatusNotFound, "No such container: "+r.PathValue("id"))
		return
	}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if c.State != "running" && c.State != "paused" {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	c.State, c.ExitCode = "exited", 0
	d.emit("die", c)
	w.WriteHeader(http.StatusNoContent)
}

func (d *Daemon) unpause(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.find(r.PathValue("id"))
	switch {
	case c == nil:
		writeErr(w, http.StatusNotFound, "No such container: "+r.PathValue("id"))
	case c.State != "paused":
		writeErr(w, http.StatusConflict, "Container "+c.ID+" is not paused")
	default:
		c.State = "running"
		d.emit("unpause", c)
		w.WriteHeader(http.StatusNoContent)
	}
}

func (d *Daemon) events(w http.ResponseWriter, r *http.Request) {
	labels, err := labelFilter(r)
	if err != nil {
		writeErr(w, http.StatusBadRequest, "invalid filters: "+err.Error())
		return
	}
	ch := make(chan event, 64)
	d.mu.Lock()
	d.streams[ch] = true
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		if d.streams[ch] {
			delete(d.streams, ch)
		}
		d.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush() // the real daemon sends its headers at once too
	}
	enc := json.NewEncoder(w)
	for {
		select {
		case <-r.Context().Done():
			return
		case ev, ok := <-ch:
			if !ok {
				return
			}
			if !matches(&Container{Labels: ev.Attributes}, labels) {
				continue
			}
			_ = enc.Encode(map[string]any{
				"Type": ev.Type, "Action": ev.Action, "status": ev.Action, "id": ev.ID,
				"Actor": map[string]any{"ID": ev.ID, "Attributes": ev.Attributes},
				"time":  time.Now().Unix(),
			})
			if fl != nil {
				fl.Flush()
			}
		}
	}
}
