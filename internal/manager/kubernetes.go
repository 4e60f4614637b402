package manager

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/discovery/kubernetes"
)

// kubeProvider scales a StatefulSet or Deployment between 0 and its replica count
// (type "kubernetes"): a login scales it up, idle scales it to zero. Like a panel
// server it is left as it is when the proxy exits.
type kubeProvider struct {
	client   *kubernetes.Client
	path     string // /apis/apps/v1/namespaces/NS/RESOURCE/NAME
	workload string // as configured, for messages
	replicas int
}

// kubeProviders is the ProviderFunc of type "kubernetes"; conn is [kubernetes].
func kubeProviders(conn config.Kubernetes) ProviderFunc {
	return func(_ string, sm *config.ServerManager, _ func()) (Provider, error) {
		resource, name, ok := config.ParseWorkload(sm.Workload)
		if !ok {
			return nil, fmt.Errorf(`type "kubernetes" needs workload "statefulset/NAME" or "deployment/NAME", not %q`, sm.Workload)
		}
		client, err := kubernetes.NewClient(conn)
		if err != nil {
			return nil, err
		}
		ns := sm.Namespace
		if ns == "" {
			ns = client.Namespace()
		}
		replicas := sm.Replicas
		if replicas < 1 {
			replicas = 1
		}
		return &kubeProvider{client: client, path: "/apis/apps/v1/namespaces/" + ns + "/" + resource + "/" + name,
			workload: ns + "/" + sm.Workload, replicas: replicas}, nil
	}
}

// workloadState is the part of a StatefulSet or Deployment the provider reads.
type workloadState struct {
	Spec struct {
		Replicas *int `json:"replicas"`
	} `json:"spec"`
	Status struct {
		Replicas      int `json:"replicas"`
		ReadyReplicas int `json:"readyReplicas"`
	} `json:"status"`
}

func (p *kubeProvider) scale(ctx context.Context, n int) error {
	err := p.client.MergePatch(ctx, p.path+"/scale", map[string]any{"spec": map[string]any{"replicas": n}}, nil)
	if err != nil {
		return fmt.Errorf("scale %s to %d: %w", p.workload, n, err)
	}
	return nil
}

// Start scales the workload to its replica count (it is never scaled down here).
func (p *kubeProvider) Start(ctx context.Context) error {
	var w workloadState
	if err := p.client.Get(ctx, p.path, &w); err != nil {
		return fmt.Errorf("read %s: %w", p.workload, err)
	}
	if w.Spec.Replicas != nil && *w.Spec.Replicas >= p.replicas {
		return nil
	}
	return p.scale(ctx, p.replicas)
}

// Stop scales to 0 and waits until no pod is left; the pods' own
// terminationGracePeriodSeconds governs how they stop, so grace here only bounds
// the wait.
func (p *kubeProvider) Stop(ctx context.Context, grace time.Duration) (string, error) {
	if err := p.scale(ctx, 0); err != nil {
		return "", err
	}
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	tick := time.NewTicker(max(min(grace/10, time.Second), 10*time.Millisecond))
	defer tick.Stop()
	for {
		obs, err := p.Status(ctx)
		if err == nil && obs.Phase == PhaseStopped {
			return "scaled to 0", nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("%s still has pods: %w", p.workload, ctx.Err())
		case <-deadline.C:
			return "", fmt.Errorf("%s still has pods %s after scaling to 0 (their terminationGracePeriodSeconds may be longer than shutdown_timeout)", p.workload, grace)
		case <-tick.C:
		}
	}
}

// Status maps the workload's desired and ready replicas.
func (p *kubeProvider) Status(ctx context.Context) (Observation, error) {
	var w workloadState
	if err := p.client.Get(ctx, p.path, &w); err != nil {
		if errors.Is(err, context.Canceled) {
			return Observation{}, err
		}
		return Observation{}, fmt.Errorf("read %s: %w", p.workload, err)
	}
	desired := 1
	if w.Spec.Replicas != nil {
		desired = *w.Spec.Replicas
	}
	switch {
	case desired == 0 && w.Status.Replicas == 0:
		return Observation{Phase: PhaseStopped}, nil
	case desired == 0:
		return Observation{Phase: PhaseStopping}, nil
	case w.Status.ReadyReplicas >= 1:
		return Observation{Phase: PhaseRunning}, nil
	}
	return Observation{Phase: PhaseStarting}, nil
}
