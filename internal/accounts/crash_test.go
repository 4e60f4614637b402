package accounts

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// registrar is the child process of TestKillDuringRegistrations: it registers
// accounts one after the other and prints each name once Handle returned.
const registrarEnv = "INFRARUST_TEST_REGISTRAR_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(registrarEnv); dir != "" {
		registrar(dir)
		return
	}
	os.Exit(m.Run())
}

func registrar(dir string) {
	s, err := OpenBolt(dir)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	svc := &Service{Store: s, Hasher: NewHasher(cheap, 1), Rules: Rules{MinLength: 6}}
	for i := range 500 {
		name := fmt.Sprintf("player%d", i)
		if r := svc.Handle(context.Background(), name, "10.0.0.1", "register secret1 secret1"); r.Reply != ReplyRegistered {
			fmt.Println("error", name, r.Reply, r.Err)
			os.Exit(1)
		}
		fmt.Println("ok", name)
	}
	os.Exit(0)
}

// kill -9 in the middle of registrations loses none that was acknowledged:
// each is fsynced before Handle answers.
func TestKillDuringRegistrations(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), registrarEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[0] != "ok" {
			t.Fatalf("registrar: %s", sc.Text())
		}
		acked = append(acked, f[1])
		if len(acked) == 200 {
			_ = cmd.Process.Kill() // SIGKILL: no deferred close, no flush
			break
		}
	}
	_ = cmd.Wait()
	if len(acked) < 200 {
		t.Fatalf("the registrar ended after %d registrations", len(acked))
	}
	s, err := OpenBolt(dir)
	if err != nil {
		t.Fatalf("reopening after kill -9: %v", err)
	}
	defer s.Close()
	svc := &Service{Store: s, Hasher: NewHasher(cheap, 1), Rules: Rules{MinLength: 6}}
	for _, name := range acked {
		if r := svc.Handle(context.Background(), name, "10.0.0.2", "login secret1"); r.Reply != ReplyLoggedIn {
			t.Fatalf("%s was acknowledged but cannot log in after kill -9: %+v", name, r)
		}
	}
	list, _ := s.List(context.Background())
	t.Logf("%d acknowledged, %d stored after kill -9", len(acked), len(list))
}
