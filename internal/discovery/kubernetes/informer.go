package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
)

// maxBackoff caps the doubling wait after a failed list or watch.
const maxBackoff = time.Minute

// watchTimeout is how long the API server keeps one watch open before the
// informer opens the next from the last resourceVersion (client-go uses 5-10 min).
const watchTimeout = 5 * time.Minute

// ObjectMeta is the metadata the proxy reads.
type ObjectMeta struct {
	Name            string            `json:"name"`
	Namespace       string            `json:"namespace"`
	ResourceVersion string            `json:"resourceVersion"`
	Labels          map[string]string `json:"labels"`
	Annotations     map[string]string `json:"annotations"`
}

// informer keeps a local copy of one collection the way client-go's reflector
// does: LIST, then WATCH from the list's resourceVersion (with bookmarks, so the
// version stays fresh), watch again when the server closes it, LIST again on 410
// Gone or after an error (with a doubling delay). changed is called after every
// change of the copy, from the informer's goroutine.
type informer[T any] struct {
	client   *Client
	path     string // collection URL without query
	selector string // labelSelector
	meta     func(*T) *ObjectMeta
	after    func(time.Duration) <-chan time.Time
	delay    time.Duration
	failed   func(error) // a list or watch failed (before the wait)

	mu     sync.Mutex
	items  map[string]T // namespace/name -> object
	synced bool
}

func key(m *ObjectMeta) string { return m.Namespace + "/" + m.Name }

// snapshot copies the items; ok is false before the first list.
func (in *informer[T]) snapshot() (map[string]T, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := make(map[string]T, len(in.items))
	for k, v := range in.items {
		out[k] = v
	}
	return out, in.synced
}

// run lists and watches until ctx ends.
func (in *informer[T]) run(ctx context.Context, changed func()) {
	delay := in.delay
	for ctx.Err() == nil {
		rv, err := in.list(ctx)
		if err == nil {
			changed()
			delay = in.delay
			listed := rv
			for err == nil && ctx.Err() == nil {
				rv, err = in.watch(ctx, rv, changed)
			}
			if errors.Is(err, ErrGone) && rv != listed {
				continue // relist at once: the version aged out, nothing is wrong
			}
			// Gone right after a list would relist in a loop: back off instead.
		}
		if ctx.Err() != nil {
			return
		}
		in.failed(err)
		select {
		case <-ctx.Done():
			return
		case <-in.after(delay):
		}
		delay = min(delay*2, maxBackoff)
	}
}

// list replaces the copy and returns the collection's resourceVersion.
func (in *informer[T]) list(ctx context.Context) (string, error) {
	var out struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []T `json:"items"`
	}
	if err := in.client.Get(ctx, in.path+query("labelSelector", in.selector), &out); err != nil {
		return "", err
	}
	items := make(map[string]T, len(out.Items))
	for i := range out.Items {
		items[key(in.meta(&out.Items[i]))] = out.Items[i]
	}
	in.mu.Lock()
	in.items, in.synced = items, true
	in.mu.Unlock()
	return out.Metadata.ResourceVersion, nil
}

// watch follows one watch from rv and returns the last version seen; nil error
// means the server closed it normally (watch again from the returned version).
func (in *informer[T]) watch(ctx context.Context, rv string, changed func()) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, watchTimeout+time.Minute)
	defer cancel()
	q := query("watch", "1", "resourceVersion", rv, "allowWatchBookmarks", "true",
		"timeoutSeconds", strconv.Itoa(int(watchTimeout/time.Second)), "labelSelector", in.selector)
	body, r, err := in.client.watch(ctx, in.path+q)
	if err != nil {
		return rv, err
	}
	defer body.Close()
	for {
		ev, err := readEvent(r)
		if err != nil {
			if ctx.Err() == nil && isEOF(err) {
				return rv, nil
			}
			return rv, fmt.Errorf("kubernetes watch %s: %w", in.path, err)
		}
		switch ev.Type {
		case "ERROR":
			var st Status
			_ = json.Unmarshal(ev.Object, &st)
			if st.Code == 410 || st.Reason == "Expired" || st.Reason == "Gone" {
				return rv, fmt.Errorf("%w: %s", ErrGone, st.Message)
			}
			return rv, fmt.Errorf("kubernetes watch %s: %s", in.path, st.Message)
		case "BOOKMARK":
			var obj T
			if json.Unmarshal(ev.Object, &obj) == nil {
				if v := in.meta(&obj).ResourceVersion; v != "" {
					rv = v
				}
			}
		case "ADDED", "MODIFIED", "DELETED":
			var obj T
			if err := json.Unmarshal(ev.Object, &obj); err != nil {
				return rv, fmt.Errorf("kubernetes watch %s: an object that does not decode: %w", in.path, err)
			}
			m := in.meta(&obj)
			in.mu.Lock()
			if ev.Type == "DELETED" {
				delete(in.items, key(m))
			} else {
				in.items[key(m)] = obj
			}
			in.mu.Unlock()
			if m.ResourceVersion != "" {
				rv = m.ResourceVersion
			}
			changed()
		}
	}
}

// isEOF is the end of a watch the server closed (its timeoutSeconds).
func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
